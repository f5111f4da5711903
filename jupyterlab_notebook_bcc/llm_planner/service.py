"""The LLM planner as an HTTP service: one answer per request, written to a sink that is either the relay's
(in the Jupyter server, no extra process) or a tornado handler's (`python -m jupyterlab_notebook_bcc.llm_planner`).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, Protocol
from urllib.parse import unquote

from tornado import httputil

from .accounting import Accounting
from .failures import PlannerFailure
from .model import ModelClient, OpenAIModel
from .planner import LLMPlannerCore
from .sessions import Caller
from .settings import LLMPlanner, ModelSettings, UserStore, admin_settings

NAME = "LLM planner"
log = logging.getLogger("notebook_bcc.llm_planner")


class Sink(Protocol):
    def start(self, status: int, reason: str, headers: httputil.HTTPHeaders) -> Awaitable[None] | None: ...

    def chunk(self, data: bytes) -> Awaitable[None] | None: ...


async def _wait(result: Awaitable[None] | None) -> None:
    if result is not None:
        await result


class LLMPlannerService:
    """Settings (administrator's, else the user's stored ones), the model client, the planner core and the
    accounting (tokens, budgets, the run log), and the HTTP answers."""

    def __init__(
        self,
        config: LLMPlanner,
        store: UserStore | None = None,
        run_log: logging.Logger | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.run_log = run_log or log
        # The setting that pins the planner to the administrator's (c.NotebookBCC.planner_url in a Jupyter
        # server), "" when users may have their own: then no user's LLM settings are used or tested.
        self.pinned_by: Callable[[], str] = lambda: ""
        self.active_model_requests = 0
        self.model_requests = 0
        # Per user: the day's tokens, the run's budget, the run log.
        self.accounting = Accounting(config, run_log=self.run_log)
        self.core = LLMPlannerCore(config, self.settings, self._model, self.accounting)

    def settings(self) -> ModelSettings | None:
        admin = admin_settings(self.config)
        if admin is not None:
            return admin
        if self.user_settings_refusal():
            return None
        return self.store.read() if self.store is not None else None

    def user_settings_refusal(self) -> str:
        """Why users may not keep, change or test LLM settings of their own here, or "" when they may."""
        if not self.config.user_settings:
            return (
                "Your administrator turned off LLM settings of your own on this server (c.LLMPlanner.user_settings "
                "= False): the LLM planner uses only the administrator's model endpoint, if any."
            )
        pinned = self.pinned_by()
        if pinned:
            return (
                f"Your administrator set this server's planner ({pinned}): LLM settings of your own are not used "
                "here, so they cannot be saved or tested."
            )
        if self.store is None:
            return "This server keeps no user settings for the LLM planner."
        return ""

    @property
    def configured(self) -> bool:
        settings = self.settings()
        return settings is not None and settings.configured

    def _model(self, settings: ModelSettings, model: str) -> ModelClient:
        def started() -> None:
            self.active_model_requests += 1
            self.model_requests += 1

        def ended() -> None:
            self.active_model_requests -= 1

        return OpenAIModel(
            settings,
            model,
            request_timeout=self.config.request_timeout,
            stall_timeout=self.config.stall_timeout,
            first_token_timeout=self.config.first_token_timeout,
            max_completion_tokens=self.config.max_completion_tokens,
            temperature=self.config.temperature,
            on_start=started,
            on_end=ended,
            destinations=self.config.destinations,
        )

    def status(self) -> dict[str, Any]:
        return {"active_model_requests": self.active_model_requests, "model_requests": self.model_requests}

    async def answer(
        self,
        path: str,
        method: str,
        headers: httputil.HTTPHeaders,
        body: bytes | None,
        user: str,
        sink: Sink,
    ) -> None:
        """Writes the answer to one request to `sink` (status and headers first, then the body)."""
        path = path.strip("/")
        if path == "" and method == "GET":
            settings = self.settings()
            await _json(sink, 200, {"planner": NAME, "configured": self.configured,
                                    "model": settings.model if settings else ""})
            return
        if path not in ("planning", "generating", "generate"):
            await _json(sink, 404, {"message": f"{NAME}: no route /{path}; it answers /planning and /generating"})
            return
        if method != "POST":
            await _json(sink, 405, {"message": f"{NAME}: /{path} takes POST"})
            return
        try:
            request = json.loads(body or b"{}")
        except ValueError as error:
            await _json(sink, 400, {"message": f"{NAME}: the request is not JSON ({error})"})
            return
        except RecursionError:
            await _json(sink, 400, {"message": f"{NAME}: the request's JSON is nested too deeply"})
            return
        if not isinstance(request, dict):
            await _json(sink, 400, {"message": f"{NAME}: the request is not a JSON object"})
            return
        notebook = unquote(headers.get("X-Notebook-Id", "")) or str(request.get("notebook_id") or "")
        caller = Caller(user or "anonymous", notebook)
        if path == "planning":
            try:
                answer = await self.core.planning(request, caller)
            except PlannerFailure as failure:
                await _failure(sink, failure)
                return
            await _json(sink, 200, answer)
            return
        await self._stream(sink, request, caller)

    async def _stream(self, sink: Sink, request: dict[str, Any], caller: Caller) -> None:
        actions = self.core.generating(request, caller)
        started = False
        try:
            async for line in actions:
                if not started:
                    started = True
                    headers = httputil.HTTPHeaders({"Content-Type": "application/x-ndjson", "Cache-Control": "no-cache"})
                    await _wait(sink.start(200, "OK", headers))
                await _wait(sink.chunk(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n"))
        except PlannerFailure as failure:
            if not started:
                await _failure(sink, failure)
                return
            await _wait(sink.chunk(json.dumps({"error": failure.message}).encode("utf-8") + b"\n"))
        finally:
            await actions.aclose()
        if not started:
            headers = httputil.HTTPHeaders({"Content-Type": "application/x-ndjson"})
            await _wait(sink.start(200, "OK", headers))


async def _json(sink: Sink, status: int, value: dict[str, Any], extra: dict[str, str] | None = None) -> None:
    headers = httputil.HTTPHeaders({"Content-Type": "application/json", **(extra or {})})
    await _wait(sink.start(status, httputil.responses.get(status, ""), headers))
    await _wait(sink.chunk(json.dumps(value, ensure_ascii=False).encode("utf-8")))


async def _failure(sink: Sink, failure: PlannerFailure) -> None:
    extra = {"Retry-After": str(int(failure.retry_after + 0.999))} if failure.retry_after is not None else None
    await _json(sink, failure.status, failure.body(), extra)


class LocalPlannerRequest:
    """The relay's request to the LLM planner in this process: the same `send(sink)` / `close()` as a
    request to a planner over HTTP, so Stop (the browser going away) cancels the model request."""

    def __init__(
        self,
        service: LLMPlannerService,
        path: str,
        method: str,
        headers: httputil.HTTPHeaders,
        body: bytes | None,
        user: str,
    ) -> None:
        self.service = service
        self.path = path
        self.method = method
        self.headers = headers
        self.body = body
        self.user = user
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    async def send(self, sink: Sink) -> bool:
        """True when the answer was written whole, False when it was cut by `close()`."""
        if self._closed:
            return False
        self._task = asyncio.ensure_future(
            self.service.answer(self.path.split("?", 1)[0], self.method, self.headers, self.body, self.user, sink)
        )
        try:
            await self._task
        except asyncio.CancelledError:
            if self._closed:
                return False
            raise
        return True

    def close(self) -> None:
        self._closed = True
        if self._task is not None and not self._task.done():
            self._task.cancel()
