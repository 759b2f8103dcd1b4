"""A recall's policy becomes a list of registered tags; a vector's tuple names lose their
bounds. Hand-written where SQL matters; additive.

* ``recall_recalltrace.policy``: ``varchar(40)`` holding tags joined by ``+`` becomes
  ``text[]`` of those tags (``recall.policy``), each existing row split on ``+``, with a
  CHECK that the list is never empty. The joined form overflowed as soon as semantic
  recall, expansion and reconsolidation ran together (49 characters): every such recall
  failed with DataError.
* ``recall_memoryvector`` ``provider``, ``model``, ``model_revision``, ``text_version``:
  ``varchar(n)`` becomes unbounded ``varchar``. They are written from the encoder's tuple,
  and ``model`` from RECALL_OPENAI_MODEL, which an operator may set to anything. Widening
  a varchar rewrites nothing and keeps every index.

Downgrade refuses, before changing anything, while a recorded value would not fit the
old column (a joined policy over 40 characters, a model name over 200, ...): PostgreSQL
would refuse the narrowing anyway, and saying which rows stop it is the useful part.
Otherwise it restores the old columns exactly (a policy joined on ``+`` again).
``refuse_narrowing`` serves the other apps' widening migrations too.
"""
from typing import Sequence

from django.contrib.postgres.fields import ArrayField
from django.db import migrations, models
from django.db.models import Q

POLICY_SQL = """
ALTER TABLE recall_recalltrace
    ALTER COLUMN policy TYPE text[] USING array_remove(string_to_array(policy, '+'), '');
ALTER TABLE recall_recalltrace
    ADD CONSTRAINT recalltrace_policy_nonempty CHECK (cardinality(policy) > 0);
"""
POLICY_SQL_REVERSE = """
ALTER TABLE recall_recalltrace DROP CONSTRAINT recalltrace_policy_nonempty;
ALTER TABLE recall_recalltrace
    ALTER COLUMN policy TYPE varchar(40) USING array_to_string(policy, '+');
"""
# (table, value as SQL, the old bound): what a downgrade would have to fit.
NARROWED = [
    ("recall_recalltrace", "array_to_string(policy, '+')", 40),
    ("recall_memoryvector", "provider", 40),
    ("recall_memoryvector", "model", 200),
    ("recall_memoryvector", "model_revision", 100),
    ("recall_memoryvector", "text_version", 40),
]


def refuse_narrowing(narrowed: Sequence[tuple[str, str, int]]) -> migrations.RunPython:
    """Reverse only: refuse, naming the rows, when a value is longer than its old bound."""

    def refuse(apps, schema_editor):
        tables = sorted({table for table, _, _ in narrowed})
        problems = []
        with schema_editor.connection.cursor() as cursor:
            # The migrating role owns these tables; without FORCE the owner sees every
            # owner's rows. A refusal rolls this back with everything else.
            for table in tables:
                cursor.execute(f"ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY")
            for table, value, bound in narrowed:
                cursor.execute(f"SELECT count(*) FROM {table} WHERE length({value}) > %s", [bound])
                (rows,) = cursor.fetchone()
                if rows:
                    problems.append(f"{table}: {rows} row(s) whose {value} is longer than {bound}")
            for table in tables:
                cursor.execute(f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY")
        if problems:
            raise RuntimeError(
                "Refusing to narrow columns back: recorded values would not fit (they cannot be"
                " cut without losing what they say). " + "; ".join(problems) + "."
            )

    return migrations.RunPython(migrations.RunPython.noop, refuse)


def _unbounded(model: str, name: str) -> migrations.AlterField:
    return migrations.AlterField(model_name=model, name=name, field=models.CharField())


class Migration(migrations.Migration):
    dependencies = [("recall", "0004_indexed_match_lookups")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(POLICY_SQL, POLICY_SQL_REVERSE)],
            state_operations=[
                migrations.AlterField(model_name="recalltrace", name="policy",
                                      field=ArrayField(base_field=models.TextField(), size=None)),
                migrations.AddConstraint(model_name="recalltrace", constraint=models.CheckConstraint(
                    condition=Q(policy__len__gt=0), name="recalltrace_policy_nonempty")),
            ],
        ),
        *[_unbounded("memoryvector", name) for name in ("provider", "model", "model_revision", "text_version")],
        # Last, so that on reverse it runs first and refuses before anything changes.
        refuse_narrowing(NARROWED),
    ]
