"""The equivalence digest skips normalizing a statement that is already normal (same digests).

``reconsolidation_equivalence_digest`` (0006, made inlinable in 0012) normalizes the
statement before hashing it: NFC, then every run of Python's whitespace class collapsed to one
space, then the ends trimmed. Almost every statement is already so (written by the owner's
assistant, one space between words), yet ``normalize`` and ``regexp_replace`` ran on every
written row, twice (the statement's length and its text are both hashed): about two thirds of
the function's time, the largest share of the generated columns that a 100,000-belief import
spends in the server (measured on the embedded server, 20,000 statements: 19.5 µs a row
before, 6.4 after; ``python -m evals.bench_import``).

Now the statement is used as it is when PostgreSQL's quick check says it is in NFC and a
regular expression finds no whitespace the collapse or the trim would change: no whitespace
character but the plain space, no two whitespace characters together, none at either end.
Otherwise the full normalization runs as before. So the function returns what it returned for
every input (``tests/reconsolidation/inventory/test_equivalence_pass.py`` holds it against the
Python key, tricky whitespace and decomposed accents included), ``CREATE OR REPLACE`` keeps the
column, its index and every stored digest, and the body stays inlinable (``IS NFC
NORMALIZED`` and the match are immutable).
"""
import importlib

from django.db import migrations

_0006 = importlib.import_module("reconsolidation.migrations.0006_equivalence_digest_and_model_lane")
_0012 = importlib.import_module("reconsolidation.migrations.0012_inlinable_equivalence_digest")

_SPACE = _0006._PY_WHITESPACE[:-1]  # one character of Python's whitespace class (without "+")
_OTHER_SPACE = _SPACE.replace(r"\u001c-\u0020", r"\u001c-\u001f")  # the class without " "
# What the collapse or the trim would change: any whitespace but " ", two together, one at an end.
_NOT_NORMAL = f"{_OTHER_SPACE}|{_SPACE}{{2}}|^{_SPACE}|{_SPACE}$"
_STATEMENT = (f"(CASE WHEN p_statement IS NFC NORMALIZED AND p_statement !~ '{_NOT_NORMAL}'"
              f" THEN p_statement ELSE {_0012._FIELDS[0]} END)")
assert _0012._FIELDS[0].startswith("btrim(regexp_replace(normalize(p_statement")
GUARDED_FUNCTION = _0012.INLINABLE_FUNCTION.replace(_0012._field(_0012._FIELDS[0]), _0012._field(_STATEMENT), 1)
assert GUARDED_FUNCTION != _0012.INLINABLE_FUNCTION


class Migration(migrations.Migration):

    dependencies = [
        ('reconsolidation', '0015_scope_qualified_local_keys'),
    ]

    operations = [
        migrations.RunSQL(GUARDED_FUNCTION, _0012.INLINABLE_FUNCTION),
    ]
