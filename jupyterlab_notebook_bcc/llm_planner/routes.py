"""The LLM planner's settings in the Jupyter server: `{base_url}notebook-bcc/llm/settings` (GET, PUT, DELETE),
`…/llm/test` (POST: is the endpoint there, does it take the key, does it serve the model: its model list
where it has one, since a server such as llama.cpp answers under any name) and `…/llm/status`."""

from __future__ import annotations

import json
from typing import Any

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join

from .destinations import Destinations
from .failures import OPEN_SETTINGS
from .model import ModelError, OpenAIModel
from .service import LLMPlannerService
from .settings import ModelSettings, updated, with_overrides
from .urls import display_url

TEST_TIMEOUT = 20.0


class _Base(APIHandler):
    def initialize(self, service: LLMPlannerService) -> None:
        self.service = service

    def _body(self) -> dict[str, Any]:
        try:
            value = json.loads(self.request.body or b"{}")
        except ValueError as error:
            raise tornado.web.HTTPError(400, f"not JSON: {error}") from error
        except RecursionError as error:
            raise tornado.web.HTTPError(400, "JSON nested too deeply") from error
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
        refusal = self.service.config.destinations.url_refusal(settings.base_url, settings.source)
        if refusal:
            self._refuse(403, f"LLM planner settings not saved. {refusal}")
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
        refusal = self.service.user_settings_refusal()
        if refusal:
            self._refuse(403, refusal)
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
        else:
            refusal = self.service.user_settings_refusal()
            if refusal:
                self._refuse(403, refusal)
                return
        if current is None:
            current = ModelSettings(base_url="", models=(), source="user")
        settings = with_overrides(current, body)
        if not settings.base_url or not settings.model:
            self.finish(json.dumps({"ok": False, "message": "Give the base URL and a model to test."}))
            return
        destinations = self.service.config.destinations
        refusal = destinations.url_refusal(settings.base_url, settings.source)
        if refusal:
            # Refused by its name, before any lookup (the transport checks the resolved address too).
            self.finish(json.dumps({"ok": False, "message": refusal, "model": "", "models": None, "served": None,
                                    "action": OPEN_SETTINGS}))
            return
        self.finish(json.dumps(await connection_test(settings, destinations)))


async def connection_test(settings: ModelSettings, destinations: Destinations | None = None) -> dict[str, Any]:
    """`{ok, message, model, models, served}`: whether the endpoint answers with these settings, the model
    that answered, the models it lists (`GET /models`; null when it has no list) and whether the named model
    is among them (null when unknown)."""
    model = OpenAIModel(settings, settings.model, request_timeout=TEST_TIMEOUT, stall_timeout=TEST_TIMEOUT,
                        first_token_timeout=TEST_TIMEOUT,
                        max_completion_tokens=8, temperature=0, destinations=destinations)
    listed = await model.served_models()
    where = display_url(settings.base_url)
    try:
        completion = await model.complete([{"role": "user", "content": "Reply with the word OK."}], None)
    except ModelError as error:
        failed: dict[str, Any] = {"ok": False, "message": error.message, "model": "", "models": listed,
                                  "served": None if listed is None else settings.model in listed}
        if error.action:
            failed["action"] = error.action
        return failed
    cost = f"{completion.prompt_tokens + completion.completion_tokens} tokens in {completion.seconds:.1f} s"
    if listed is not None and settings.model not in listed:
        # llama.cpp answers under any name: the one model it lists is the one that answered.
        answered = listed[0] if len(listed) == 1 else ""
        names = ", ".join(listed[:10])
        message = (f"The endpoint at {where} serves {names}, not {settings.model}: "
                   + (f"{answered} answered ({cost}). Set the model to {answered} in LLM Planner Settings."
                      if answered else f"set one of them as the model in LLM Planner Settings ({cost})."))
        return {"ok": False, "message": message, "model": answered, "models": listed, "served": False,
                "action": OPEN_SETTINGS}
    answered = settings.model if listed is not None else (completion.model or settings.model)
    served = "" if listed is not None else " (the endpoint lists no models: the name is not checked)"
    return {
        "ok": True,
        "message": f"The model {answered} answers at {where} ({cost}){served}.",
        "model": answered,
        "models": listed,
        "served": True if listed is not None else None,
    }


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
