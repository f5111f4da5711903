"""The LLM planner as a shared JupyterHub service: each request carries its user's own Hub API token, checked
against the Hub's API (a stand-in on loopback here; the real Hub in ui-tests/tests/hub.spec.ts); per user,
sessions apart, token budgets per day and per run, and the run log."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tornado.httpclient import AsyncHTTPClient, HTTPRequest

from jupyterlab_notebook_bcc.llm_planner import LLMPlanner, LLMPlannerService
from jupyterlab_notebook_bcc.llm_planner.__main__ import make_app
from jupyterlab_notebook_bcc.llm_planner.accounting import Accounting
from jupyterlab_notebook_bcc.llm_planner.hub_auth import HubRefusal, HubUsers, token_of
from jupyterlab_notebook_bcc.llm_planner.planner import LOAD_STEP, PLAN_STEP, Caller

from .fake_hub import FakeHub
from .fake_openai import FakeOpenAI, Reply, cell, plan
from .helpers import free_port
from .test_llm_planner import KEY, PREVIEW, feedback, observation

TOKENS = {"alice-token": "alice", "bob-token": "bob", "service-token": "notebook-bcc-planner"}
NOTEBOOK = "analysis.ipynb"


def script(body: dict[str, Any]) -> Reply:
    if "Plan the analysis" in body["messages"][-1]["content"]:
        return Reply(text=plan(("revenue_by_region", ["by_region"])))
    return Reply(text=cell("Sum it.", "by_region = 1"))


@pytest.fixture
def hub() -> Iterator[FakeHub]:
    with FakeHub(TOKENS, kinds={"service-token": "service"}) as fake:
        yield fake


@pytest.fixture
def model() -> Iterator[FakeOpenAI]:
    with FakeOpenAI(script) as fake:
        yield fake


class Answer:
    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.body.decode().splitlines() if line.strip()]


Post = Callable[..., Awaitable[Answer]]


def with_planner(service: LLMPlannerService, hub: FakeHub, test: Callable[[Post], Awaitable[None]],
                 hub_users: HubUsers | None = None) -> None:
    """Runs `test` with the planner's HTTP app listening on loopback, as `python -m …` serves it."""

    async def run() -> None:
        port = free_port()
        server = make_app(service, "", hub_users or HubUsers(hub.api_url)).listen(port, "127.0.0.1")
        client = AsyncHTTPClient(force_instance=True)

        async def post(path: str, body: dict[str, Any], token: str | None, notebook: str = NOTEBOOK) -> Answer:
            headers = {"Content-Type": "application/json", "X-Notebook-Id": notebook}
            if token is not None:
                headers["Authorization"] = f"token {token}"
            response = await client.fetch(
                HTTPRequest(f"http://127.0.0.1:{port}/{path}", method="POST", body=json.dumps(body), headers=headers),
                raise_error=False,
            )
            return Answer(response.code, response.body or b"")

        try:
            await test(post)
        finally:
            client.close()
            server.stop()

    asyncio.run(run())


async def planned_run(post: Post, token: str) -> list[dict[str, Any]]:
    """A user's run through its start, the load step and the model's plan; the plan step's lines."""
    start = await post("planning", {"observation": observation(None, None)}, token)
    assert start.status == 200, start.body
    load = await post("generating", {"observation": observation("data_loading", LOAD_STEP, 1)}, token)
    assert load.status == 200, load.body
    loaded = await post("planning", {
        "observation": observation("data_loading", LOAD_STEP, 1, {"df": "DataFrame(12×3)"}, [PREVIEW]),
        "behavior_feedback": feedback(),
    }, token)
    preview = loaded.json()["context_update"]["variables"]
    planned = await post("generating", {"observation": observation("plan", PLAN_STEP, 1, {"df": "x", **preview})}, token)
    assert planned.status == 200, planned.body
    return planned.lines()


def cell_request(iteration: int = 1) -> dict[str, Any]:
    return {"observation": observation("revenue_by_region", "revenue_by_region_1", iteration, {"df": "x"})}


def test_the_authorization_header_names_the_token_in_either_scheme() -> None:
    assert token_of("token abc") == "abc"
    assert token_of("Bearer abc") == "abc"
    assert token_of("Basic abc") == ""
    assert token_of("") == ""


def test_a_request_without_a_token_or_with_one_the_hub_does_not_know_is_refused(
    hub: FakeHub, model: FakeOpenAI
) -> None:
    service = LLMPlannerService(LLMPlanner(base_url=model.base_url, models=["small"], api_key=KEY))

    async def test(post: Post) -> None:
        missing = await post("planning", {"observation": observation(None, None)}, None)
        assert missing.status == 401
        assert "carries no Hub API token" in missing.json()["message"]
        unknown = await post("planning", {"observation": observation(None, None)}, "stolen-or-revoked")
        assert unknown.status == 403
        assert "JupyterHub does not know this user's token" in unknown.json()["message"]
        # Another program's token (here a service's) is not a user: budgets and sessions are per user.
        service_token = await post("planning", {"observation": observation(None, None)}, "service-token")
        assert service_token.status == 403
        known = await post("planning", {"observation": observation(None, None)}, "alice-token")
        assert known.status == 200
        assert [caller.user for caller in service.core.sessions] == ["alice"]

    with_planner(service, hub, test)
    assert model.requests == []


def test_the_hub_is_asked_once_per_token_and_a_revoked_token_stops_working_when_its_cache_ends(hub: FakeHub) -> None:
    now = [1000.0]
    users = HubUsers(hub.api_url, cache_seconds=60, refusal_seconds=5, clock=lambda: now[0])

    async def run() -> None:
        assert (await users.user_for("token alice-token")).name == "alice"
        assert (await users.user_for("Bearer alice-token")).name == "alice"
        assert users.hub_requests == 1
        del hub.tokens["alice-token"]  # revoked at the Hub
        now[0] += 59
        assert (await users.user_for("token alice-token")).name == "alice"
        now[0] += 2
        with pytest.raises(HubRefusal) as refused:
            await users.user_for("token alice-token")
        assert refused.value.status == 403
        assert users.hub_requests == 2

    asyncio.run(run())
    # The Hub saw the token; the planner kept only its hash.
    assert all("alice-token" not in key for key in users._cache)


def test_an_unreachable_hub_is_a_502_that_says_so() -> None:
    users = HubUsers(f"http://127.0.0.1:{free_port()}/hub/api")

    async def run() -> None:
        with pytest.raises(HubRefusal) as refused:
            await users.user_for("token alice-token")
        assert refused.value.status == 502
        assert "cannot be reached" in refused.value.message

    asyncio.run(run())


def test_users_sessions_are_kept_apart_on_the_same_notebook_path(hub: FakeHub, model: FakeOpenAI) -> None:
    service = LLMPlannerService(LLMPlanner(base_url=model.base_url, models=["small"], api_key=KEY))

    async def test(post: Post) -> None:
        lines = await planned_run(post, "alice-token")
        assert any(line.get("action") == "update_workflow" for line in lines)
        # Bob asks for the step of Alice's plan, in a notebook of the same name: he has no session of hers
        # to resume, so the planner starts one of his own and Alice's plan and tokens stay hers.
        before = service.core.sessions[Caller("alice", NOTEBOOK)]
        bob = await post("generating", cell_request(), "bob-token")
        assert bob.status == 200
        assert set(service.core.sessions) == {Caller("alice", NOTEBOOK), Caller("bob", NOTEBOOK)}
        assert service.core.sessions[Caller("alice", NOTEBOOK)] is before
        assert service.core.sessions[Caller("bob", NOTEBOOK)].title == ""
        assert before.title != ""

    with_planner(service, hub, test)


def test_a_users_spent_day_budget_stops_their_run_and_not_anothers_and_the_log_names_both(
    hub: FakeHub, model: FakeOpenAI, tmp_path: Path
) -> None:
    log = tmp_path / "runs.jsonl"
    config = LLMPlanner(base_url=model.base_url, models=["small"], api_key=KEY, run_log=str(log),
                        max_daily_tokens=100000, user_limits={"bob": {"max_daily_tokens": 100}})
    service = LLMPlannerService(config)

    async def test(post: Post) -> None:
        await planned_run(post, "alice-token")
        await planned_run(post, "bob-token")  # the plan's model call: 120 tokens, over Bob's 100
        bob = await post("generating", cell_request(), "bob-token")
        assert bob.status == 403
        message = bob.json()["message"]
        assert "token budget for today" in message and "120 of 100" in message
        assert "c.LLMPlanner.user_limits['bob']" in message
        alice = await post("generating", cell_request(), "alice-token")
        assert alice.status == 200
        assert any(line.get("action") == "exec" for line in alice.lines())
        assert service.accounting.used == {"alice": 240, "bob": 120}

    with_planner(service, hub, test)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["user"], r["outcome"]) for r in records] == [("bob", "budget")]
    bob = records[0]
    assert bob["notebook"] == NOTEBOOK and bob["model"] == "small" and bob["tokens"] == 120
    assert bob["start"] <= bob["end"] and "token budget for today" in bob["message"]


def test_a_users_run_budget_replaces_the_default_for_that_user(hub: FakeHub, model: FakeOpenAI) -> None:
    config = LLMPlanner(base_url=model.base_url, models=["small"], api_key=KEY, max_run_tokens=100,
                        user_limits={"alice": {"max_run_tokens": 10000}})
    service = LLMPlannerService(config)

    async def test(post: Post) -> None:
        await planned_run(post, "alice-token")
        await planned_run(post, "bob-token")
        bob = await post("generating", cell_request(), "bob-token")
        assert bob.status == 403
        assert "This run has used its token budget (120 of 100 tokens, c.LLMPlanner.max_run_tokens)" in bob.json()["message"]
        alice = await post("generating", cell_request(), "alice-token")
        assert alice.status == 200

    with_planner(service, hub, test)


def test_a_completed_run_is_logged_with_its_user_notebook_model_tokens_and_times(
    hub: FakeHub, model: FakeOpenAI, tmp_path: Path
) -> None:
    log = tmp_path / "runs.jsonl"
    service = LLMPlannerService(LLMPlanner(base_url=model.base_url, models=["small"], api_key=KEY, run_log=str(log)))

    async def test(post: Post) -> None:
        await planned_run(post, "alice-token")
        report = {"observation": observation("findings", "findings_report", 1, {"df": "x"})}
        model.script = lambda body: Reply(text=json.dumps({"report": "Revenue is highest in the north."}))
        assert (await post("generating", report, "alice-token")).status == 200
        done = await post("planning", {**report, "behavior_feedback": feedback()}, "alice-token")
        assert done.json()["targetAchieved"] is True
        # A new run of the same notebook after an unfinished one: the unfinished one is logged as replaced.
        await post("planning", {"observation": observation(None, None)}, "bob-token", "b.ipynb")
        await post("planning", {"observation": observation(None, None)}, "bob-token", "b.ipynb")

    with_planner(service, hub, test)
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["user"], r["notebook"], r["outcome"]) for r in records] == [
        ("alice", NOTEBOOK, "completed"), ("bob", "b.ipynb", "replaced")]
    assert records[0]["tokens"] == 240 and records[0]["model_calls"] == 2 and records[0]["model"] == "small"


def test_todays_tokens_are_read_back_from_the_run_log_after_a_restart(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    day = 1_800_000_000.0  # 2027-01-15 08:00 UTC
    log.write_text("\n".join(json.dumps(r) for r in [
        {"user": "bob", "tokens": 70, "end": "2027-01-15T07:00:00+00:00"},
        {"user": "bob", "tokens": 50, "end": "2027-01-15T07:30:00+00:00"},
        {"user": "bob", "tokens": 999, "end": "2027-01-14T23:00:00+00:00"},
        {"user": "alice", "tokens": 5, "end": "2027-01-15T06:00:00+00:00"},
    ]) + "\nnot json\n")
    accounting = Accounting(LLMPlanner(run_log=str(log), max_daily_tokens=100), clock=lambda: day)
    assert accounting.used == {"bob": 120, "alice": 5}
    with pytest.raises(Exception, match="120 of 100 tokens"):
        accounting.check(Caller("bob", "x.ipynb"))
    accounting.check(Caller("alice", "x.ipynb"))
    # A new day (UTC) starts every user's count again.
    accounting.clock = lambda: day + 24 * 3600
    accounting.check(Caller("bob", "x.ipynb"))
    assert accounting.used == {}


def test_the_planner_runs_as_a_hub_service_where_the_hub_says_and_asks_the_hub_who_calls(
    hub: FakeHub, model: FakeOpenAI, tmp_path: Path
) -> None:
    port = free_port()
    log = tmp_path / "runs.jsonl"
    env = {**os.environ, "NOTEBOOK_BCC_LLM_BASE_URL": model.base_url, "NOTEBOOK_BCC_LLM_MODELS": "small",
           "NOTEBOOK_BCC_LLM_API_KEY": KEY, "JUPYTERHUB_API_URL": hub.api_url,
           "JUPYTERHUB_API_TOKEN": "service-token", "JUPYTERHUB_SERVICE_URL": f"http://127.0.0.1:{port}"}
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab_notebook_bcc.llm_planner", f"--LLMPlanner.run_log={log}",
         "--LLMPlanner.user_limits={\"bob\": {\"max_daily_tokens\": 1}}"],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        async def run() -> dict[str, int]:
            client = AsyncHTTPClient(force_instance=True)
            url = f"http://127.0.0.1:{port}/planning"
            body = json.dumps({"observation": observation(None, None)})
            codes: dict[str, int] = {}
            for token in ("none", "bogus", "alice-token"):
                headers = {"Content-Type": "application/json"}
                if token != "none":
                    headers["Authorization"] = f"token {token}"
                for _ in range(100):
                    try:
                        response = await client.fetch(HTTPRequest(url, method="POST", body=body, headers=headers),
                                                      raise_error=False)
                        break
                    except OSError:
                        await asyncio.sleep(0.1)
                codes[token] = response.code
            client.close()
            return codes

        codes = asyncio.run(run())
    finally:
        process.terminate()
        output = process.communicate(timeout=10)[0]
    assert codes == {"none": 401, "bogus": 403, "alice-token": 200}, output
    assert "JupyterHub users by their Hub tokens" in output
    assert KEY not in output and "alice-token" not in output


def test_the_planner_answers_under_its_service_prefix_too(hub: FakeHub, model: FakeOpenAI) -> None:
    service = LLMPlannerService(LLMPlanner(base_url=model.base_url, models=["small"], api_key=KEY))

    async def run() -> tuple[int, int]:
        port = free_port()
        server = make_app(service, "", HubUsers(hub.api_url), "/services/notebook-bcc-planner/").listen(port, "127.0.0.1")
        client = AsyncHTTPClient(force_instance=True)
        codes = []
        try:
            for path in ("services/notebook-bcc-planner/planning", "planning"):
                response = await client.fetch(HTTPRequest(
                    f"http://127.0.0.1:{port}/{path}", method="POST", body=json.dumps({"observation": observation(None, None)}),
                    headers={"Content-Type": "application/json", "Authorization": "token alice-token"}), raise_error=False)
                codes.append(response.code)
        finally:
            client.close()
            server.stop()
        return codes[0], codes[1]

    assert asyncio.run(run()) == (200, 200)
