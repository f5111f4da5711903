"""The run locks (`notebook-bcc/locks/<path>`) in a real Jupyter server (pytest-jupyter)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPClientError

from jupyterlab_notebook_bcc.locks import MAX_STATUS_BYTES, MAX_TTL_MS, MIN_TTL_MS, RunLocks

Fetch = Callable[..., Any]
PATH = "work/数据 分析.ipynb"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(jp_serverapp: Any) -> Clock:
    clock = Clock()
    locks: RunLocks = jp_serverapp.web_app.settings["notebook_bcc_locks"]
    locks.clock = clock
    return clock


def lock_parts(path: str = PATH) -> tuple[str, ...]:
    return ("notebook-bcc", "locks", *path.split("/"))


async def answer(fetch: Fetch, *parts: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
    response = await fetch(*parts, raise_error=False, **kwargs)
    return int(response.code), json.loads(response.body or b"{}")


async def acquire(fetch: Fetch, owner: str, path: str = PATH, **body: Any) -> tuple[int, dict[str, Any]]:
    return await answer(fetch, *lock_parts(path), method="PUT", body=json.dumps({"owner": owner, **body}))


async def holder(fetch: Fetch, path: str = PATH) -> dict[str, Any]:
    code, lock = await answer(fetch, *lock_parts(path))
    assert code == 200
    return lock


async def test_a_free_lock_is_taken_and_then_refused_to_another_owner(jp_fetch: Fetch, clock: Clock) -> None:
    assert await holder(jp_fetch) == {"key": PATH, "held": False}
    status = {"state": "ACTION_RUNNING", "stage": "Explore", "step": "Load"}
    code, mine = await acquire(jp_fetch, "window-a", ttl_ms=9000, status=status)
    assert code == 200
    assert mine["owner"] == "window-a" and mine["status"] == status and mine["expires_in_ms"] == 9000

    code, other = await acquire(jp_fetch, "window-b", ttl_ms=9000)
    assert code == 409
    # The refused window learns who runs and where the run stands.
    assert other["owner"] == "window-a" and other["status"] == status
    assert (await holder(jp_fetch))["owner"] == "window-a"


async def test_a_heartbeat_renews_the_lock_and_a_missed_one_frees_it(jp_fetch: Fetch, clock: Clock) -> None:
    assert (await acquire(jp_fetch, "window-a", ttl_ms=9000))[0] == 200
    clock.now += 6
    code, renewed = await acquire(jp_fetch, "window-a", ttl_ms=9000, status={"step": "Clean"})
    assert code == 200 and renewed["expires_in_ms"] == 9000 and renewed["status"] == {"step": "Clean"}
    clock.now += 6
    assert (await acquire(jp_fetch, "window-b"))[0] == 409

    clock.now += 3.1  # 9.1 s after the last heartbeat
    assert (await holder(jp_fetch))["held"] is False
    code, taken = await acquire(jp_fetch, "window-b")
    assert code == 200 and taken["owner"] == "window-b"
    # The old owner's late heartbeat does not take the lock back.
    assert (await acquire(jp_fetch, "window-a"))[0] == 409


async def test_only_the_owner_releases(jp_fetch: Fetch, clock: Clock) -> None:
    await acquire(jp_fetch, "window-a")
    code, other = await answer(jp_fetch, *lock_parts(), method="DELETE", params={"owner": "window-b"})
    assert code == 409 and other["owner"] == "window-a"
    assert (await holder(jp_fetch))["held"] is True

    code, freed = await answer(jp_fetch, *lock_parts(), method="DELETE", params={"owner": "window-a"})
    assert code == 200 and freed["held"] is False
    assert (await acquire(jp_fetch, "window-b"))[0] == 200
    # Releasing a free lock is not an error (a window may release twice).
    await answer(jp_fetch, *lock_parts(), method="DELETE", params={"owner": "window-b"})
    code, _ = await answer(jp_fetch, *lock_parts(), method="DELETE", params={"owner": "window-b"})
    assert code == 200


async def test_each_notebook_has_its_own_lock(jp_fetch: Fetch, clock: Clock) -> None:
    assert (await acquire(jp_fetch, "window-a", path="one.ipynb"))[0] == 200
    assert (await acquire(jp_fetch, "window-b", path="two.ipynb"))[0] == 200
    assert (await holder(jp_fetch, "one.ipynb"))["owner"] == "window-a"
    assert (await holder(jp_fetch, "two.ipynb"))["owner"] == "window-b"


async def test_the_time_to_live_is_bounded(jp_fetch: Fetch, clock: Clock) -> None:
    _, short = await acquire(jp_fetch, "window-a", path="short.ipynb", ttl_ms=1)
    _, long = await acquire(jp_fetch, "window-a", path="long.ipynb", ttl_ms=10**9)
    assert short["ttl_ms"] == MIN_TTL_MS and long["ttl_ms"] == MAX_TTL_MS


@pytest.mark.parametrize(
    ("body", "status"),
    [
        ({}, 400),
        ({"owner": ""}, 400),
        ({"owner": "x" * 129}, 400),
        ({"owner": "a", "ttl_ms": "10"}, 400),
        ({"owner": "a", "status": []}, 400),
        ({"owner": "a", "status": {"step": "x" * MAX_STATUS_BYTES}}, 413),
    ],
)
async def test_a_malformed_request_is_refused(
    jp_fetch: Fetch, clock: Clock, body: dict[str, Any], status: int
) -> None:
    code, _ = await answer(jp_fetch, *lock_parts(), method="PUT", body=json.dumps(body))
    assert code == status
    assert (await holder(jp_fetch))["held"] is False


async def test_the_locks_need_the_jupyter_token(
    jp_serverapp: Any, http_server_client: Any, jp_base_url: str, clock: Clock
) -> None:
    client = AsyncHTTPClient(force_instance=True)
    url = http_server_client.get_url(f"{jp_base_url}notebook-bcc/locks/{quote(PATH)}")
    try:
        with pytest.raises(HTTPClientError) as refused:
            await client.fetch(url, method="PUT", body=json.dumps({"owner": "intruder"}))
        assert refused.value.code == 403
    finally:
        client.close()


async def test_a_renamed_notebook_keeps_its_lock(jp_fetch: Fetch, clock: Clock) -> None:
    notebook = {"type": "notebook", "content": {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}}
    await jp_fetch("api", "contents", "before.ipynb", method="PUT", body=json.dumps(notebook))
    await acquire(jp_fetch, "window-a", path="before.ipynb")
    await jp_fetch("api", "contents", "before.ipynb", method="PATCH", body=json.dumps({"path": "after.ipynb"}))
    for _ in range(50):
        if (await holder(jp_fetch, "after.ipynb"))["held"]:
            break
        await asyncio.sleep(0.02)
    assert (await holder(jp_fetch, "after.ipynb"))["owner"] == "window-a"
    assert (await holder(jp_fetch, "before.ipynb"))["held"] is False


async def test_asking_who_holds_a_lock_is_not_activity_but_a_heartbeat_is(jp_fetch: Fetch, jp_serverapp: Any, clock: Clock) -> None:
    """An open notebook polls its lock: that must not keep an idle server from being culled (JupyterHub)."""
    settings = jp_serverapp.web_app.settings
    settings.pop("api_last_activity", None)
    await holder(jp_fetch)
    assert "api_last_activity" not in settings

    code, _ = await acquire(jp_fetch, "window-a")
    assert code == 200
    assert "api_last_activity" in settings
