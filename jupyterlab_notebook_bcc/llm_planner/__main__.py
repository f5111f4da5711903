"""`python -m jupyterlab_notebook_bcc.llm_planner --port 28600`: the LLM planner on its own, for a shared
planner (a JupyterHub administrator's) or any DSLC client. Configured by flags, `--LLMPlanner.<name>=<value>`
(like a Jupyter server's), a `--config` file (`c.LLMPlanner.…`) and the NOTEBOOK_BCC_LLM_* environment
variables; the API key only by the environment or the file, so it is not in the process list.

As a JupyterHub service (JUPYTERHUB_API_URL and JUPYTERHUB_API_TOKEN set by the Hub, or `--hub-auth`), each
request must carry its user's own Hub API token, checked against the Hub (hub_auth.py); it listens where
JUPYTERHUB_SERVICE_URL says unless `--port` says otherwise. docs/hub.md."""

from __future__ import annotations

import argparse
import asyncio
import hmac
import logging
import os
import re
import sys
from typing import Any
from urllib.parse import urlsplit

import tornado.web
from tornado import httputil
from tornado.iostream import StreamClosedError
from traitlets.config import Config, KVArgParseConfigLoader, PyFileConfigLoader

from .hosts import allowed_hosts, host_refusal
from .hub_auth import API_TOKEN_VARIABLE, API_URL_VARIABLE, SERVICE_URL_VARIABLE, HubRefusal, HubUsers
from .service import LLMPlannerService
from .settings import KEY_VARIABLE, RESPONSE_FORMATS, LLMPlanner
from .urls import display_url

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
    def initialize(
        self, service: LLMPlannerService, token: str, hub: HubUsers | None = None, hosts: frozenset[str] | None = None
    ) -> None:
        self.service = service
        self.token = token
        self.hub = hub
        # The Host names answered besides loopback (hosts.py); None: every Host (an embedding app's choice).
        self.hosts = hosts
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
        if self.hosts is not None:
            refusal = host_refusal(self.request.headers.get("Host"), self.hosts)
            if refusal:
                self.set_status(403)
                self.finish({"message": refusal})
                return
        user = ""
        if self.hub is not None:
            try:
                user = (await self.hub.user_for(self.request.headers.get("Authorization", ""))).name
            except HubRefusal as refusal:
                self.set_status(refusal.status)
                self.finish({"message": refusal.message})
                return
        elif self.token:
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
            self.service.answer(path, self.request.method or "GET", self.request.headers, self.request.body, user, sink)
        )
        try:
            await self._task
        except (asyncio.CancelledError, StreamClosedError):
            return
        if not self._finished:
            self.finish()


def make_app(
    service: LLMPlannerService,
    token: str = "",
    hub: HubUsers | None = None,
    prefix: str = "",
    hosts: frozenset[str] | None = None,
) -> tornado.web.Application:
    """Answers at the root, and under `prefix` (a Hub service's /services/<name>/, the path its proxy keeps);
    with `hosts`, only requests whose Host is loopback or one of them."""
    arguments = {"service": service, "token": token, "hub": hub, "hosts": hosts}
    routes: list[Any] = [(r"/(.*)", PlannerHandler, arguments)]
    if prefix.strip("/"):
        routes.insert(0, (f"/{re.escape(prefix.strip('/'))}/(.*)", PlannerHandler, arguments))
    return tornado.web.Application(routes)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m jupyterlab_notebook_bcc.llm_planner", description=__doc__)
    parser.add_argument("--port", type=int, default=None, help="default: JUPYTERHUB_SERVICE_URL's, else 28600")
    parser.add_argument("--host", default=None, help="address to listen on (default: loopback only)")
    parser.add_argument("--allowed-host", action="append", default=[], metavar="NAME",
                        help="also answer requests whose Host is NAME (a DNS name clients use for this planner); "
                        "loopback names and the --host address are always answered, any other Host is refused "
                        "(DNS rebinding protection)")
    parser.add_argument("--config", default=None, help="a Python config file of c.LLMPlanner settings")
    parser.add_argument("--hub-auth", action=argparse.BooleanOptionalAction, default=None,
                        help="serve JupyterHub users by their own Hub API tokens (default: when run by a Hub)")
    parser.add_argument("--hub-scope", default="", metavar="SCOPE",
                        help="with Hub auth, also require this scope on each user's token, e.g. "
                        "access:services!service=notebook-bcc-planner (the Hub's own scope for this service)")
    parser.add_argument("--hub-cache-seconds", type=float, default=60.0,
                        help="how long a user's token is trusted before the Hub is asked again")
    parser.add_argument("--base-url", default=None, help="OpenAI-compatible endpoint (or NOTEBOOK_BCC_LLM_BASE_URL)")
    parser.add_argument("--models", default=None, help="comma-separated models, the first the default "
                        "(or NOTEBOOK_BCC_LLM_MODELS)")
    parser.add_argument("--response-format", choices=RESPONSE_FORMATS, default=None)
    parser.add_argument("--max-run-tokens", type=int, default=None)
    parser.add_argument("--max-tries-per-step", type=int, default=None)
    parser.add_argument("--request-timeout", type=float, default=None)
    parser.add_argument("--stall-timeout", type=float, default=None)
    parser.add_argument("--first-token-timeout", type=float, default=None)
    args, rest = parser.parse_known_args(argv)
    unknown = [arg for arg in rest if not arg.startswith("--LLMPlanner.")]
    if unknown:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.traits = rest
    return args


def config_from(args: argparse.Namespace) -> LLMPlanner:
    """`--config`'s file, then `--LLMPlanner.<name>=<value>`, then the flags, each over the one before."""
    config = Config()
    if args.config:
        path = os.path.abspath(args.config)
        config.merge(PyFileConfigLoader(os.path.basename(path), os.path.dirname(path)).load_config())
    traits = getattr(args, "traits", [])
    if traits:
        config.merge(KVArgParseConfigLoader(traits).load_config())
    planner = LLMPlanner(config=config)
    if args.base_url is not None:
        planner.base_url = args.base_url
    if args.models is not None:
        planner.models = [m.strip() for m in args.models.split(",") if m.strip()]
    for name in ("response_format", "max_run_tokens", "max_tries_per_step", "request_timeout", "stall_timeout",
                 "first_token_timeout"):
        if getattr(args, name) is not None:
            setattr(planner, name, getattr(args, name))
    return planner


def address(args: argparse.Namespace) -> tuple[str, int]:
    """Where to listen: the flags, else where the Hub said the service is (JUPYTERHUB_SERVICE_URL)."""
    service = urlsplit(os.environ.get(SERVICE_URL_VARIABLE, ""))
    port = args.port if args.port is not None else (service.port or 28600)
    host = args.host if args.host is not None else (service.hostname if service.port else None) or "127.0.0.1"
    return host, port


def hub_users(args: argparse.Namespace) -> HubUsers | None:
    """The Hub that vouches for users, when the planner serves a Hub (its service, or `--hub-auth`)."""
    api_url = os.environ.get(API_URL_VARIABLE, "")
    under_hub = bool(api_url and os.environ.get(API_TOKEN_VARIABLE))
    if not (args.hub_auth if args.hub_auth is not None else under_hub):
        return None
    if not api_url:
        raise SystemExit(f"--hub-auth needs {API_URL_VARIABLE}, the Hub's API URL (http://hub:8081/hub/api)")
    return HubUsers(api_url, cache_seconds=args.hub_cache_seconds, required_scope=args.hub_scope)


def one_user_notice(config: LLMPlanner, token: str, hub: bool) -> str:
    """Without Hub auth every client is one user: what the log says about it at start ("" with Hub auth)."""
    if hub:
        return ""
    how = "a shared bearer token" if token else "no authentication"
    notice = (f"LLM planner with {how}: every client is one user, 'anonymous'. Its sessions, "
              "c.LLMPlanner.max_daily_tokens and max_streams_per_user count all clients together; for budgets "
              "per user, run it as a JupyterHub service (or with --hub-auth), docs/hub.md.")
    named = sorted(name for name in config.user_limits if name != "anonymous")
    if named:
        notice += f" c.LLMPlanner.user_limits names {', '.join(named)}: that never applies here."
    return notice


async def serve(args: argparse.Namespace) -> None:
    config = config_from(args)
    _ = config.api_key
    os.environ.pop(KEY_VARIABLE, None)
    token = os.environ.pop(TOKEN_VARIABLE, "")
    hub = hub_users(args)
    service = LLMPlannerService(config)
    host, port = address(args)
    app = make_app(service, token, hub, os.environ.get("JUPYTERHUB_SERVICE_PREFIX", ""),
                   allowed_hosts(host, args.allowed_host))
    app.listen(port, host)
    settings: Any = service.settings()
    logging.getLogger("notebook_bcc.llm_planner").info(
        "LLM planner at http://%s:%d/ (model endpoint %s, models %s, %s)",
        host, port, display_url(settings.base_url) if settings else "not set",
        ", ".join(settings.models) if settings else "none",
        f"JupyterHub users by their Hub tokens ({hub.api_url})" if hub else
        ("a shared bearer token" if token else "no authentication"),
    )
    notice = one_user_notice(config, token, hub is not None)
    if notice:
        logging.getLogger("notebook_bcc.llm_planner").warning(notice)
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
