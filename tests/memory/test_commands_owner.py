"""create_owner: creates or reuses an owner and prints a working token once."""
import json
import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memory import services


def run(*args):
    out = StringIO()
    call_command("create_owner", *args, stdout=out)
    return out.getvalue()


def test_create_owner_json_prints_ids_and_a_working_token(db):
    result = json.loads(run("--json", "--name", "Dana"))
    assert set(result) == {"tenant_id", "principal_id", "token"}
    principal = services.token_authenticate(result["token"])
    assert str(principal.tenant_id) == result["tenant_id"]
    assert principal.scopes == {"memory.read", "memory.write"}


def test_create_owner_reuses_an_existing_owner_with_a_new_token(db):
    tenant, principal = uuid.uuid4(), uuid.uuid4()
    first = json.loads(run("--tenant", str(tenant), "--principal", str(principal), "--json"))
    second = json.loads(run("--tenant", str(tenant), "--principal", str(principal), "--json"))
    assert first["tenant_id"] == second["tenant_id"] and first["token"] != second["token"]
    assert services.token_authenticate(first["token"]) is not None


def test_create_owner_with_read_scope_only(db):
    result = json.loads(run("--scopes", "memory.read", "--json"))
    assert services.token_authenticate(result["token"]).scopes == {"memory.read"}


def test_create_owner_refuses_an_unknown_scope(db):
    with pytest.raises(CommandError, match="scopes"):
        run("--scopes", "memory.admin")


def test_only_the_token_hash_is_stored(db):
    from memory.models import OwnerToken
    from veetbot.rls import owner_context
    from veetbot.identity import Principal

    result = json.loads(run("--json"))
    owner = Principal(tenant_id=result["tenant_id"], principal_id=result["principal_id"])
    with owner_context(owner):
        stored = OwnerToken.objects.get()
    assert result["token"] not in stored.token_hash and len(stored.token_hash) == 64


def test_revoked_token_no_longer_authenticates(db):
    from memory.models import OwnerToken
    from veetbot.identity import Principal
    from veetbot.rls import owner_context

    result = json.loads(run("--json"))
    owner = Principal(tenant_id=result["tenant_id"], principal_id=result["principal_id"])
    with owner_context(owner):
        token_id = OwnerToken.objects.get().id
    services.token_revoke(principal=owner, token_id=token_id)
    assert services.token_authenticate(result["token"]) is None
