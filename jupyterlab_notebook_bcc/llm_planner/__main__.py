"""`python -m jupyterlab_notebook_bcc.llm_planner --port 28600`: the LLM planner on its own, for a shared
planner (a JupyterHub administrator's) or any DSLC client. Configured by flags and the NOTEBOOK_BCC_LLM_*
environment variables; the API key only by the environment, so it is not in the process list."""

from __future__ import annotations

import argparse
import asyncio
import hmac
import logging
import os
import sys
from typing import Any

import tornado.web
from tornado import httputil
from tornado.iostream import StreamClosedError

from .service import LLMPlannerService
from .settings import KEY_VARIABLE, RESPONSE_FORMATS, LLMPlanner

TOKEN_VARIABLE = "NOTEBOOK_BCC_PLANNER_TOKEN"


class _HandlerSink:
    def __init__(self, handler: tornado.web.RequestHandler) -> None:
        self.handler = handler

    def start(self, status: int, reason: str, headers: httputil.HTTPHeaders) -> None:
        self.handler.set_status(status, reason or None)
        for name, value in headers.get_all():
            self.handler.set_header(name, value)

    async def chunk(self, data: bytes) -> None:
        self.handler.write(data)
        await self.handler.flush()


class PlannerHandler(tornado.web.RequestHandler):
    def initialize(self, service: LLMPlannerService, token: str) -> None:
        self.service = service
        self.token = token
        self._task: asyncio.Task[None] | None = None

    async def get(self, path: str) -> None:
        await self._answer(path)

    async def post(self, path: str) -> None:
        await self._answer(path)

    def on_connection_close(self) -> None:
        # The client went away (Stop): the model request ends with the answer's task.
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def _answer(self, path: str) -> None:
        if self.token:
            sent = self.request.headers.get("Authorization", "")
            if not hmac.compare_digest(sent.encode(), f"Bearer {self.token}".encode()):
                self.set_status(401)
                self.finish({"message": "LLM planner: a valid bearer token is required"})
                return
        if self.request.method == "POST" and not self.request.headers.get("Content-Type", "").startswith("application/json"):
            self.set_status(415)
            self.finish({"message": "LLM planner: requests are JSON (Content-Type: application/json)"})
            return
        sink = _HandlerSink(self)
        self._task = asyncio.ensure_future(
            self.service.answer(path, self.request.method or "GET", self.request.headers, self.request.body, "", sink)
        )
        try:
            await self._task
        except (asyncio.CancelledError, StreamClosedError):
            return
        if not self._finished:
            self.finish()


def make_app(service: LLMPlannerService, token: str = "") -> tornado.web.Application:
    return tornado.web.Application([(r"/(.*)", PlannerHandler, {"service": service, "token": token})])


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m jupyterlab_notebook_bcc.llm_planner", description=__doc__)
    parser.add_argument("--port", type=int, default=28600)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (or NOTEBOOK_BCC_LLM_BASE_URL)")
    parser.add_argument("--models", default=None, help="comma-separated models, the first the default "
                        "(or NOTEBOOK_BCC_LLM_MODELS)")
    parser.add_argument("--response-format", choices=RESPONSE_FORMATS, default="auto")
    parser.add_argument("--max-run-tokens", type=int, default=0)
    parser.add_argument("--max-tries-per-step", type=int, default=3)
    parser.add_argument("--request-timeout", type=float, default=300.0)
    parser.add_argument("--stall-timeout", type=float, default=60.0)
    return parser.parse_args(argv)


def config_from(args: argparse.Namespace) -> LLMPlanner:
    config = LLMPlanner()
    if args.base_url is not None:
        config.base_url = args.base_url
    if args.models is not None:
        config.models = [m.strip() for m in args.models.split(",") if m.strip()]
    config.response_format = args.response_format
    config.max_run_tokens = args.max_run_tokens
    config.max_tries_per_step = args.max_tries_per_step
    config.request_timeout = args.request_timeout
    config.stall_timeout = args.stall_timeout
    return config


async def serve(args: argparse.Namespace) -> None:
    config = config_from(args)
    _ = config.api_key
    os.environ.pop(KEY_VARIABLE, None)
    token = os.environ.pop(TOKEN_VARIABLE, "")
    service = LLMPlannerService(config)
    app = make_app(service, token)
    app.listen(args.port, args.host)
    settings: Any = service.settings()
    logging.getLogger("notebook_bcc.llm_planner").info(
        "LLM planner at http://%s:%d/ (model endpoint %s, models %s)",
        args.host, args.port, settings.base_url if settings else "not set",
        ", ".join(settings.models) if settings else "none",
    )
    await asyncio.Event().wait()


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s", stream=sys.stdout)
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
