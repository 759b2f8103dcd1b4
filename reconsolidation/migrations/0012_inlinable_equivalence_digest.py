"""The equivalence digest's function, rewritten so PostgreSQL inlines it (same digests).

``memory_memory.recon_equivalence_digest`` is a generated column over
``reconsolidation_equivalence_digest`` (migration 0006). PostgreSQL inlines a SQL function
into the expression that calls it only when the function's body is no more volatile than
its declaration; 0006's body used three STABLE functions under an IMMUTABLE declaration
(``convert_to``, ``extract(epoch FROM timestamptz)`` and ``integer || text``), so every
written row paid a separate SQL-function execution: about 43 µs a row, most of what the
COPY importer still spent in the server (``python -m evals.bench_import``).

The body below computes the same value with immutable parts only:

* ``integer::text || text`` instead of ``integer || text`` (``textcat``, not ``anytextcat``);
* the epoch as ``extract(epoch FROM instant - <1970-01-01 UTC>)`` (an interval's epoch is
  immutable and exact to the microsecond, as the instant's own is);
* the UTF-8 bytes as the text with its backslashes doubled, cast to ``bytea``: ``byteain``'s
  escape format then copies every byte as it is. The database encoding is UTF-8 (the
  embedded server's and the one the README asks of an external server), where this equals
  ``convert_to(…, 'UTF8')``; the migration refuses any other encoding.

``CREATE OR REPLACE`` keeps the signature, so the column, its index and every stored digest
stay as they are: the function returns what it returned for every input, which
``tests/reconsolidation/inventory/test_equivalence_pass.py`` holds against the Python key.
"""
import importlib

from django.db import migrations

_0006 = importlib.import_module("reconsolidation.migrations.0006_equivalence_digest_and_model_lane")


def _field(expression: str) -> str:
    return f"char_length({expression})::text || ':' || {expression} || ';'"


def _instant(name: str) -> str:
    return (f"COALESCE(((extract(epoch FROM {name} - '1970-01-01 00:00:00+00'::timestamptz)"
            f" * 1000000)::bigint)::text, '')")


# 0006's fields, with the two instants' epochs taken immutably.
_FIELDS = [*_0006._FIELDS[:-2], _instant("p_valid_from"), _instant("p_expires_at")]
INLINABLE_FUNCTION = f"""
CREATE OR REPLACE FUNCTION reconsolidation_equivalence_digest({_0006._ARGUMENTS}) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT encode(sha256(replace(
        'reconsolidation-equivalence@1;' || {" || ".join(_field(f) for f in _FIELDS)}, E'\\\\', E'\\\\\\\\')::bytea),
        'hex')
$fn$;
"""
# 0006's own text, restored on the way back.
PREVIOUS_FUNCTION = _0006.DIGEST_FUNCTION.replace("CREATE FUNCTION", "CREATE OR REPLACE FUNCTION", 1)


def refuse_other_encodings(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT pg_encoding_to_char(encoding) FROM pg_database WHERE datname = current_database()")
        encoding = cursor.fetchone()[0]
    if encoding != "UTF8":
        raise RuntimeError(f"The database encoding is {encoding}; Veetbot memory needs UTF8.")


class Migration(migrations.Migration):

    dependencies = [
        ('reconsolidation', '0011_derived_usage'),
    ]

    operations = [
        migrations.RunPython(refuse_other_encodings, migrations.RunPython.noop),
        migrations.RunSQL(INLINABLE_FUNCTION, PREVIOUS_FUNCTION),
    ]
