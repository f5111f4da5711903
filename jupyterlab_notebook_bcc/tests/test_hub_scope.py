"""Hub mode can require the planner service's own scope on each user's token (#41): a user whose token lacks
it is refused 403 with the scope named, before any session or model request."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from jupyterlab_notebook_bcc.llm_planner.__main__ import hub_users, parse
from jupyterlab_notebook_bcc.llm_planner.hub_auth import HubRefusal, HubUsers

from .fake_hub import FakeHub

SCOPE = "access:services!service=notebook-bcc-planner"


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub({"a": "alice", "b": "bob", "c": "carol"},
                 scopes={"a": [SCOPE, "read:users:name!user=alice"], "b": ["read:users:name!user=bob"],
                         "c": ["access:services"]}) as fake:
        yield fake


def test_a_token_without_the_required_scope_is_refused_and_named(hub: FakeHub) -> None:
    users = HubUsers(hub.api_url, required_scope=SCOPE)

    async def run() -> None:
        assert (await users.user_for("token a")).name == "alice"
        assert (await users.user_for("token c")).name == "carol"  # access:services holds every service's
        for _ in range(2):  # refused again from the cache
            with pytest.raises(HubRefusal) as refused:
                await users.user_for("token b")
            assert refused.value.status == 403
            assert SCOPE in refused.value.message and "bob" in refused.value.message
        assert users.hub_requests == 3

    asyncio.run(run())


def test_without_a_required_scope_every_user_token_is_served(hub: FakeHub) -> None:
    users = HubUsers(hub.api_url)
    assert asyncio.run(users.user_for("token b")).name == "bob"


def test_the_flag_sets_the_required_scope(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JUPYTERHUB_API_URL", hub.api_url)
    users = hub_users(parse(["--hub-auth", "--hub-scope", SCOPE]))
    assert users is not None and users.required_scope == SCOPE
