"""The relay (`{base_url}notebook-bcc/relay/<path>`), its public config (`{base_url}notebook-bcc/config`) and
the run locks (`{base_url}notebook-bcc/locks/<notebook path>`)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import unquote, unquote_plus, urlsplit

import tornado.web
from jupyter_server.base.handlers import APIHandler
from jupyter_server.utils import url_path_join
from tornado import httputil
from tornado.iostream import StreamClosedError

from . import __version__
from .config import NotebookBCC, PlannerTarget, UserSettingsError, display_url
from .locks import LockHandler, RunLocks
from .policy import PlannerRefused, url_refusal
from .upstream import PlannerRequest, PlannerUnreachable, RequestSlots

NAMESPACE = "notebook-bcc"
# Only these reach the planner: never the browser's cookies or its Jupyter token.
FORWARDED_REQUEST_HEADERS = ("Content-Type", "Accept", "X-Notebook-Id")
# What the browser needs from an answer: how to read it and when to retry.
FORWARDED_ANSWER_HEADERS = ("Content-Type", "Retry-After", "Cache-Control")
# Jupyter's own credentials may come in the query string; they are Jupyter's, not the planner's.
JUPYTER_QUERY_CREDENTIALS = ("token", "_xsrf")
# Who wrote an answer: `planner` (relayed) or `relay` (the relay's own, e.g. its 502). An answer
# without it came from something else (Jupyter without the relay, a proxy in front of Jupyter).
ORIGIN_HEADER = "X-Notebook-BCC-Relay"

TargetResolver = Callable[[], PlannerTarget]


class _BrowserSink:
    """Writes the planner's answer to the browser, flushing every chunk as it arrives."""

    def __init__(self, handler: RelayHandler, upstream: PlannerRequest) -> None:
        self.handler = handler
        self.upstream = upstream
        # A redirect is not relayed: the browser's fetch would not follow it through the relay.
        self.redirect: tuple[int, str] | None = None

    def start(self, status: int, reason: str, headers: httputil.HTTPHeaders) -> Awaitable[None] | None:
        if 300 <= status < 400 and status != 304:
            self.redirect = (status, headers.get("Location", ""))
            return None
        handler = self.handler
        handler.set_status(status, reason or None)
        handler.set_header(ORIGIN_HEADER, "planner")
        handler.clear_header("Content-Type")
        for name in FORWARDED_ANSWER_HEADERS:
            value = headers.get(name)
            if value is not None:
                handler.set_header(name, value)
        if "Cache-Control" not in headers:
            handler.set_header("Cache-Control", "no-cache")
        # Reverse proxies in front of Jupyter (nginx) would otherwise hold the stream back.
        handler.set_header("X-Accel-Buffering", "no")
        connection = handler.request.connection
        stream = getattr(connection, "stream", None)
        if stream is not None and not stream.closed():
            # Small NDJSON lines must not wait for the browser's ACK of the previous one (Nagle).
            stream.set_nodelay(True)
        return self._flush()

    def chunk(self, data: bytes) -> Awaitable[None] | None:
        if self.redirect is not None:
            return None
        self.handler.write(data)
        return self._flush()

    async def _flush(self) -> None:
        try:
            await self.handler.flush()
        except StreamClosedError:
            self.upstream.close()


class RelayHandler(APIHandler):
    """Forwards a request to the configured planner and streams its answer back."""

    def initialize(self, config: NotebookBCC, resolve: TargetResolver, slots: RequestSlots | None = None) -> None:
        self.bcc_config = config
        self.resolve = resolve
        self.slots = slots if slots is not None else RequestSlots()
        self.upstream: PlannerRequest | None = None

    def set_default_headers(self) -> None:
        super().set_default_headers()
        # Every answer of this handler is the relay's own (errors included) until the planner's starts.
        self.set_header(ORIGIN_HEADER, "relay")

    @tornado.web.authenticated
    async def get(self, path: str) -> None:
        await self._relay(path)

    @tornado.web.authenticated
    async def post(self, path: str) -> None:
        await self._relay(path)

    def on_connection_close(self) -> None:
        # The browser went away (Stop aborts the fetch): the planner should stop working for it too.
        if self.upstream is not None:
            self.upstream.close()

    def _raw_path(self) -> str:
        """The path after `relay/` as the browser sent it, still percent-encoded."""
        marker = f"/{NAMESPACE}/relay/"
        return self.request.path.split(marker, 1)[1]

    async def _relay(self, _decoded_path: str) -> None:
        path = self._raw_path()
        # The empty path is the planner's root, which the panel's "Test connection" asks.
        if path and any(unquote(part) in ("", ".", "..") for part in path.split("/")):
            raise tornado.web.HTTPError(400, f"not a planner path: {path!r}")
        try:
            target = self.resolve()
        except UserSettingsError as error:
            self._fail(502, f"Cannot read the Notebook-BCC user settings: {error}")
            return
        if target.local is not None:
            await self._relay_local(path, target)
            return
        if self.bcc_config.planner_auth == "hub" and not target.token:
            self._fail(
                502,
                "c.NotebookBCC.planner_auth is 'hub', but this server has no JUPYTERHUB_API_TOKEN: it was not "
                "started by JupyterHub. Set planner_auth to 'token' outside a Hub.",
            )
            return
        if not target.url.lower().startswith(("http://", "https://")):
            self._fail(
                502,
                f"Planner URL {display_url(target.url)!r} ({target.source} setting) is not an http:// or https:// URL",
            )
            return
        problem = url_problem(target.url)
        if problem:
            self._fail(502, f"Planner URL {display_url(target.url)!r} ({target.source} setting) is not valid: {problem}")
            return
        refusal = url_refusal(target.url, target.source, self.bcc_config.allowed_planner_urls)
        if refusal:
            self._fail(502, refusal)
            return
        url = f"{target.url}/{path}"
        query = planner_query(self.request.query)
        if query:
            url += "?" + query
        headers, body = self._forwarded()
        headers["User-Agent"] = f"jupyterlab-notebook-bcc-relay/{__version__}"
        if target.token:
            # With planner_auth = "hub", JupyterHub's own scheme: the planner asks the Hub whose token it is.
            scheme = "token" if self.bcc_config.planner_auth == "hub" else "Bearer"
            headers["Authorization"] = f"{scheme} {target.token}"
        self.upstream = PlannerRequest(
            url,
            self.request.method or "GET",
            headers,
            body,
            self.bcc_config.connect_timeout,
            self.bcc_config.idle_timeout,
        )
        sink = _BrowserSink(self, self.upstream)
        limit = self.bcc_config.max_concurrent_requests
        if not self.slots.take(limit):
            self.set_header("Retry-After", "5")
            self._fail(
                503,
                f"The Jupyter server already relays {limit} planner requests at once "
                "(c.NotebookBCC.max_concurrent_requests); try again in a few seconds",
            )
            return
        try:
            whole = await self.upstream.send(sink)
        except PlannerRefused as error:
            self._fail(502, error.message)
            return
        except PlannerUnreachable as error:
            state = "gave no answer" if error.connected else "is unreachable"
            self._fail(502, f"Planner at {display_url(target.url)} {state}: {error.cause}")
            return
        finally:
            self.slots.give_back()
        if sink.redirect is not None:
            status, location = sink.redirect
            where = f"redirects to {location}" if location else "answers with a redirect that names no address"
            self._fail(
                502,
                f"Planner at {display_url(target.url)} {where} (HTTP {status}); "
                "set the planner URL to the address it redirects to",
            )
            return
        if not whole and self.request.connection is not None:
            if self.upstream.timed_out:
                self.log.warning(
                    "Notebook-BCC relay: planner at %s sent nothing for %g s (c.NotebookBCC.idle_timeout); "
                    "the stream was cut",
                    display_url(target.url),
                    self.bcc_config.idle_timeout,
                )
            # Ending the chunked answer normally would tell the browser a broken stream was complete.
            self.request.connection.close()
            return
        self.finish()

    def _forwarded(self) -> tuple[httputil.HTTPHeaders, bytes | None]:
        """What of the browser's request reaches a planner: the forwarded headers and a POST's body."""
        headers = httputil.HTTPHeaders()
        for name in FORWARDED_REQUEST_HEADERS:
            value = self.request.headers.get(name)
            if value is not None:
                headers[name] = value
        return headers, self.request.body if self.request.method == "POST" else None

    async def _relay_local(self, path: str, target: PlannerTarget) -> None:
        """The LLM planner in this process answers, through the same sink as a planner over HTTP."""
        from .llm_planner import LocalPlannerRequest

        headers, body = self._forwarded()
        user = self.current_user
        name = getattr(user, "username", None) or getattr(user, "name", None) or str(user or "")
        request = LocalPlannerRequest(target.local, path, self.request.method or "GET", headers, body, name)
        self.upstream = request  # type: ignore[assignment]
        sink = _BrowserSink(self, request)  # type: ignore[arg-type]
        whole = await request.send(sink)
        if not whole and self.request.connection is not None:
            self.request.connection.close()
            return
        self.finish()

    def _fail(self, status: int, message: str) -> None:
        self.log.warning("Notebook-BCC relay: %s", message)
        self.set_status(status)
        self.finish(json.dumps({"message": message}))


def url_problem(url: str) -> str:
    """Why `url` cannot be connected to (a port out of range, no host), or "" when it can."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError as error:
        return str(error)
    return "" if parts.hostname else "no host"


def planner_query(query: str) -> str:
    """The request's query string without Jupyter's own credentials, otherwise byte for byte."""
    kept = [
        part
        for part in query.split("&")
        if part and unquote_plus(part.split("=", 1)[0]).lower() not in JUPYTER_QUERY_CREDENTIALS
    ]
    return "&".join(kept)


class ConfigHandler(APIHandler):
    """Which planner the relay serves and whether a token is set (never the token itself), and whether
    the administrator requires approval of every behavior's code."""

    def initialize(self, resolve: TargetResolver, config: NotebookBCC) -> None:
        self.resolve = resolve
        self.bcc_config = config

    @tornado.web.authenticated
    def get(self) -> None:
        try:
            public: dict[str, Any] = self.resolve().public()
        except UserSettingsError as error:
            raise tornado.web.HTTPError(500, str(error)) from error
        if self.bcc_config.require_approval:
            public["require_approval"] = True
        self.finish(json.dumps(public))


def setup_handlers(
    web_app: tornado.web.Application, config: NotebookBCC, resolve: TargetResolver, locks: RunLocks | None = None
) -> None:
    base_url = web_app.settings["base_url"]
    # One count of the planner requests in flight for the whole server.
    slots = RequestSlots()
    web_app.add_handlers(
        ".*$",
        [
            (
                url_path_join(base_url, NAMESPACE, "relay", "(.*)"),
                RelayHandler,
                {"config": config, "resolve": resolve, "slots": slots},
            ),
            (
                url_path_join(base_url, NAMESPACE, "config"),
                ConfigHandler,
                {"resolve": resolve, "config": config},
            ),
            (
                url_path_join(base_url, NAMESPACE, "locks", "(.+)"),
                LockHandler,
                {"locks": locks if locks is not None else RunLocks()},
            ),
        ],
    )
