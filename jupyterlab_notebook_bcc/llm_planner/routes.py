"""The LLM planner's settings in the Jupyter server: `{base_url}notebook-bcc/llm/settings` (GET, PUT, DELETE),
`…/llm/test` (POST: is the endpoint there, does it take the key and know the model) and `…/llm/status`."""

from __future__ import annotations

import json
from typing import Any

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from .model import ModelError, OpenAIModel
from .service import LLMPlannerService
from ..config import display_url
from .settings import ModelSettings, updated, with_overrides

TEST_TIMEOUT = 20.0


class _Base(APIHandler):
    def initialize(self, service: LLMPlannerService) -> None:
        self.service = service

    def _body(self) -> dict[str, Any]:
        try:
            value = json.loads(self.request.body or b"{}")
        except ValueError as error:
            raise tornado.web.HTTPError(400, f"not JSON: {error}") from error
        if not isinstance(value, dict):
            raise tornado.web.HTTPError(400, "not a JSON object")
        return value

    def _public(self) -> dict[str, Any]:
        settings = self.service.settings()
        if settings is None:
            return {"source": "none", "readonly": False, "base_url": "", "model": "", "models": [], "api_key_set": False}
        return settings.public()

    def _refuse(self, status: int, message: str) -> None:
        self.set_status(status)
        self.finish(json.dumps({"message": message}))


class SettingsHandler(_Base):
    @tornado.web.authenticated
    def get(self) -> None:
        self.finish(json.dumps(self._public()))

    @tornado.web.authenticated
    def put(self) -> None:
        if self._admin():
            return
        store = self.service.store
        assert store is not None
        try:
            settings = updated(store.read(), self._body())
        except ValueError as error:
            self._refuse(400, f"LLM planner settings not saved: {error}")
            return
        store.write(settings)
        self.log.info(
            "Notebook-BCC: LLM planner settings saved (%s, models %s, key %s)",
            display_url(settings.base_url), ", ".join(settings.models), "set" if settings.api_key else "not set",
        )
        self.finish(json.dumps(self._public()))

    @tornado.web.authenticated
    def delete(self) -> None:
        if self._admin():
            return
        assert self.service.store is not None
        self.service.store.delete()
        self.set_status(204)
        self.finish()

    def _admin(self) -> bool:
        settings = self.service.settings()
        if settings is not None and settings.source == "server":
            self._refuse(
                403,
                "Your administrator configured the LLM planner (c.LLMPlanner in jupyter_server_config.py); "
                "its settings cannot be changed here.",
            )
            return True
        if self.service.store is None:
            self._refuse(403, "This server keeps no user settings for the LLM planner.")
            return True
        return False


class ConnectionTestHandler(_Base):
    @tornado.web.authenticated
    async def post(self) -> None:
        body = self._body()
        current = self.service.settings()
        if current is not None and current.source == "server":
            # The administrator's endpoint is tested as configured: a user cannot aim the server elsewhere.
            body = {}
        if current is None:
            current = ModelSettings(base_url="", models=(), source="user")
        settings = with_overrides(current, body)
        if not settings.base_url or not settings.model:
            self.finish(json.dumps({"ok": False, "message": "Give the base URL and a model to test."}))
            return
        model = OpenAIModel(settings, settings.model, request_timeout=TEST_TIMEOUT, stall_timeout=TEST_TIMEOUT,
                            max_completion_tokens=8, temperature=0)
        try:
            completion = await model.complete([{"role": "user", "content": "Reply with the word OK."}], None)
        except ModelError as error:
            self.finish(json.dumps({"ok": False, "message": error.message}))
            return
        self.finish(json.dumps({
            "ok": True,
            "message": f"The model {settings.model} answers at {display_url(settings.base_url)} "
                       f"({completion.prompt_tokens + completion.completion_tokens} tokens in {completion.seconds:.1f} s).",
        }))


class StatusHandler(_Base):
    @tornado.web.authenticated
    def get(self) -> None:
        self.finish(json.dumps(self.service.status()))


def setup_llm_handlers(web_app: tornado.web.Application, namespace: str, service: LLMPlannerService) -> None:
    base_url = web_app.settings["base_url"]
    web_app.add_handlers(
        ".*$",
        [
            (url_path_join(base_url, namespace, "llm", "settings"), SettingsHandler, {"service": service}),
            (url_path_join(base_url, namespace, "llm", "test"), ConnectionTestHandler, {"service": service}),
            (url_path_join(base_url, namespace, "llm", "status"), StatusHandler, {"service": service}),
        ],
    )
