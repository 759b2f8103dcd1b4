"""Additive: the bank-wide equivalence pass and the model lane.

* ``memory_memory.recon_equivalence_digest`` — the equivalence key of every original as
  one SHA-256, a STORED generated column: it is computed in the very statement that
  writes the row (so in its transaction, under the table's own forced RLS, whatever path
  writes it), and ADD COLUMN computes it for every existing row (the backfill).
  ``reconsolidation_equivalence_digest`` mirrors ``reconsolidation.rules.equivalence.
  key_digest`` exactly (NFC, collapse of Python's whitespace class, length-prefixed
  fields); its SQL is frozen here. A partial index serves the per-anchor lookup of live
  originals by (owner, digest) — an equality on a plain column, which the runtime role
  may use as an index condition under forced RLS.
* ``ReconsolidationEquivalenceBacklog`` — exact-key sets found but not yet planned, the
  durable carry-over to the next slice; forced RLS, not staff readable (a digest of a
  short claim can be confirmed by guessing), owner-bound to its job.
* Job model-lane cursor and counters, the receipt's ``model_generation``, the group's
  ``origin`` and the ``queued`` anchor outcome. Database defaults keep raw inserts valid.

The downgrade applies 0002's refusal first, like 0003-0005, then drops only what this
migration added; originals keep every column they had.
"""
import importlib
import uuid

import django.db.models.deletion
from django.db import migrations, models

from veetbot.migration_sql import owner_foreign_key, owner_rls

_0002 = importlib.import_module("reconsolidation.migrations.0002_row_level_security")

BACKLOG = "reconsolidation_reconsolidationequivalencebacklog"
# Python's ``\s`` (str.isspace) exactly, as a PostgreSQL bracket expression.
_PY_WHITESPACE = (r"[\u0009-\u000d\u001c-\u0020\u0085\u00a0\u1680\u2000-\u200a"
                  r"\u2028\u2029\u202f\u205f\u3000]+")


def _field(expression: str) -> str:
    return f"char_length({expression}) || ':' || {expression} || ';'"


def _instant(name: str) -> str:
    return f"COALESCE(((extract(epoch FROM {name}) * 1000000)::bigint)::text, '')"


_ARGUMENTS = (
    "p_statement text, p_subject text, p_belief_type text, p_claim_kind text, p_polarity text, p_derivation text,"
    " p_attribution text, p_scope text, p_portable boolean, p_authority text, p_sensitivity text,"
    " p_valid_from timestamptz, p_expires_at timestamptz"
)
_SIGNATURE = ("reconsolidation_equivalence_digest(text, text, text, text, text, text, text, text, boolean, text, text,"
              " timestamptz, timestamptz)")
_FIELDS = [
    f"btrim(regexp_replace(normalize(p_statement, NFC), '{_PY_WHITESPACE}', ' ', 'g'), ' ')",
    "p_subject", "p_belief_type", "p_claim_kind", "p_polarity", "p_derivation", "p_attribution", "p_scope",
    "CASE WHEN p_portable THEN 't' ELSE 'f' END", "p_authority", "p_sensitivity",
    _instant("p_valid_from"), _instant("p_expires_at"),
]
# IMMUTABLE is true: NFC, the regex and SHA-256 are; the epoch of an instant and a UTF-8
# encoding with a constant name depend on no setting.
DIGEST_FUNCTION = f"""
CREATE FUNCTION reconsolidation_equivalence_digest({_ARGUMENTS}) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT encode(sha256(convert_to(
        'reconsolidation-equivalence@1;' || {" || ".join(_field(f) for f in _FIELDS)}, 'UTF8')), 'hex')
$fn$;
"""
DIGEST_COLUMN = """
ALTER TABLE memory_memory ADD COLUMN recon_equivalence_digest text GENERATED ALWAYS AS (
    reconsolidation_equivalence_digest(statement, subject, belief_type, claim_kind, polarity, derivation, attribution,
                                       scope, portable, authority, sensitivity, valid_from, expires_at)
) STORED
"""
DIGEST_INDEX = (
    "CREATE INDEX memory_recon_equivalence ON memory_memory"
    " (tenant_id, principal_id, recon_equivalence_digest, creation_sequence, id)"
    " WHERE erased_at IS NULL AND status = 'active'"
)


def _zero(model: str, name: str, field) -> migrations.AddField:
    """A counter or cursor starting at zero, also as the database default (raw inserts)."""
    return migrations.AddField(model_name=model, name=name, field=field(db_default=0, default=0))


class Migration(migrations.Migration):

    dependencies = [
        ('reconsolidation', '0005_unbounded_codes_and_lease_owner'),
    ]

    operations = [
        migrations.RunPython(migrations.RunPython.noop, _0002._refuse_losing_history),
        _zero("reconsolidationanchorreceipt", "model_generation", models.PositiveIntegerField),
        migrations.AddField(
            model_name="reconsolidationgroup", name="origin",
            field=models.CharField(choices=[("neighbours", "neighbours"), ("equivalence", "equivalence")],
                                   db_default="neighbours", default="neighbours", max_length=12),
        ),
        _zero("reconsolidationjob", "model_anchors", models.PositiveIntegerField),
        _zero("reconsolidationjob", "model_cursor_sequence", models.BigIntegerField),
        _zero("reconsolidationjob", "model_generation", models.PositiveIntegerField),
        _zero("reconsolidationjob", "model_phase", models.PositiveSmallIntegerField),
        migrations.AlterField(
            model_name='reconsolidationanchorreceipt',
            name='outcome',
            field=models.CharField(choices=[('grouped', 'grouped'), ('duplicate', 'duplicate'), ('no_neighbours', 'no_neighbours'), ('not_selected', 'not_selected'), ('excluded', 'excluded'), ('queued', 'queued')], max_length=15),
        ),
        migrations.CreateModel(
            name='ReconsolidationEquivalenceBacklog',
            fields=[
                ('id', models.UUIDField(default=uuid.uuid4, editable=False, primary_key=True, serialize=False)),
                ('tenant_id', models.UUIDField()),
                ('principal_id', models.UUIDField()),
                ('key_digest', models.CharField(max_length=64)),
                ('generation', models.PositiveIntegerField()),
                ('queued_at', models.DateTimeField()),
                ('job', models.ForeignKey(db_constraint=False, on_delete=django.db.models.deletion.DO_NOTHING, related_name='equivalence_backlog', to='reconsolidation.reconsolidationjob')),
            ],
            options={
                'indexes': [models.Index(fields=['tenant_id', 'principal_id', 'queued_at', 'key_digest'], name='reconequiv_by_age')],
                'constraints': [models.UniqueConstraint(fields=('tenant_id', 'principal_id', 'key_digest'), name='reconequiv_owner_digest_unique')],
            },
        ),
        owner_rls(BACKLOG, staff_readable=False),
        owner_foreign_key(BACKLOG, "job_id", "reconsolidation_reconsolidationjob"),
        migrations.RunSQL(DIGEST_FUNCTION, f"DROP FUNCTION {_SIGNATURE}"),
        migrations.RunSQL(DIGEST_COLUMN, "ALTER TABLE memory_memory DROP COLUMN recon_equivalence_digest"),
        migrations.RunSQL(DIGEST_INDEX, "DROP INDEX memory_recon_equivalence"),
    ]
