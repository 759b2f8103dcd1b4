"""manage.py erase: an operator erases a memory, a conversation, a person or a whole account
with the same services as the API; bad input is an error with nothing erased."""
import json
import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory import services
from memory.models import Memory, OwnerToken
from tests.factories import T0, draft, make_memory, make_owner, owner_message
from tests.memory.test_services_erasure import tables_containing
from veetbot.rls import owner_context


def erase(principal, *args):
    out = StringIO()
    call_command("erase", "--owner", f"{principal.tenant_id}/{principal.principal_id}", *args, "--json", stdout=out)
    return json.loads(out.getvalue())


def live_statuses(principal):
    with owner_context(principal):
        return sorted(Memory.objects.values_list("status", flat=True))


def test_erase_session_removes_its_words_and_says_only_kind_id_and_instant(live_db):
    principal, _ = make_owner()
    session = services.session_create(principal=principal, started_at=T0)
    event = owner_message(principal, "My locksmith is Ozymandias Brightwater.", session_id=session.id)
    services.memory_create(principal=principal, draft=draft(event, statement="The owner's locksmith is Ozymandias."))
    result = erase(principal, "--session", str(session.id))
    assert result["erased"] == "session" and result["id"] == str(session.id) and set(result) == {"erased", "id", "erased_at"}
    assert tables_containing("Ozymandias") == []


def test_erase_memory_erases_that_belief_only(live_db):
    principal, _ = make_owner()
    gone, kept = make_memory(principal, "The owner collects brass astrolabes."), make_memory(principal)
    erase(principal, "--memory", str(gone.id))
    assert tables_containing("brass astrolabes") == []
    with owner_context(principal):
        assert Memory.objects.get(id=kept.id).status == "active"


def test_whole_account_needs_yes_and_then_revokes_every_token(live_db):
    principal, token = make_owner()
    make_memory(principal, "The owner's bicycle is named Rocinante.")
    with pytest.raises(CommandError, match="--yes"):
        erase(principal, "--account")
    assert tables_containing("Rocinante")  # nothing was erased
    assert erase(principal, "--account", "--yes")["erased"] == "account"
    assert tables_containing("Rocinante") == []
    assert services.token_authenticate(token) is None
    with owner_context(principal):
        assert not OwnerToken.objects.filter(revoked_at__isnull=True).exists()


@pytest.mark.parametrize("args, message", [
    (("--session", "not-a-uuid"), "--session must be a UUID"),
    (("--memory", str(uuid.uuid4())), "no such memory"),
    (("--person", str(uuid.uuid4())), "no such person"),
    (("--session", str(uuid.uuid4())), "no such session"),
])
def test_bad_or_unknown_ids_are_errors_and_nothing_is_erased(live_db, args, message):
    principal, _ = make_owner()
    make_memory(principal)
    with pytest.raises(CommandError, match=message):
        erase(principal, *args)
    assert live_statuses(principal) == ["active"]


def test_an_unknown_owner_is_an_error(live_db):
    stranger = type("P", (), {"tenant_id": uuid.uuid4(), "principal_id": uuid.uuid4()})()
    with pytest.raises(CommandError, match="no such owner"):
        erase(stranger, "--account", "--yes")


def test_another_owners_session_is_not_found(live_db):
    owner, _ = make_owner()
    other, _ = make_owner("Other")
    session = services.session_create(principal=other, started_at=T0)
    owner_message(other, "Other owner's words.", session_id=session.id)
    with pytest.raises(CommandError, match="no such session"):
        erase(owner, "--session", str(session.id))
