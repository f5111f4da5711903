"""One streamed HTTP/1.1 exchange with the planner, built on tornado's connection classes.

tornado's `AsyncHTTPClient` cannot cancel a request in flight; owning the stream lets the relay close
the planner's connection the moment the browser goes away, even while the planner is still thinking.
"""

from __future__ import annotations

import asyncio
import errno
import socket
import ssl
from collections.abc import Awaitable
from typing import Any, Protocol
from urllib.parse import urlsplit

from tornado import httputil
from tornado.http1connection import HTTP1Connection, HTTP1ConnectionParameters
from tornado.iostream import IOStream, StreamClosedError
from tornado.netutil import Resolver
from tornado.tcpclient import TCPClient

from . import policy

# Streams are relayed chunk by chunk, so the whole body is never held; only a runaway stream is cut.
MAX_BODY_BYTES = 1 << 40
MAX_HEADER_BYTES = 64 * 1024


class PlannerUnreachable(Exception):
    """No answer started: the cause reads as a short phrase ("connection refused")."""

    def __init__(self, cause: str, connected: bool = False) -> None:
        super().__init__(cause)
        self.cause = cause
        # False: no connection at all; True: connected, but no valid answer came back.
        self.connected = connected


class RequestSlots:
    """How many planner requests are in flight, against `c.NotebookBCC.max_concurrent_requests`."""

    def __init__(self) -> None:
        self.in_use = 0

    def take(self, limit: int) -> bool:
        """One slot more, or False when `limit` (0: none) are already taken."""
        if limit > 0 and self.in_use >= limit:
            return False
        self.in_use += 1
        return True

    def give_back(self) -> None:
        self.in_use -= 1


class _Resolved(Resolver):
    """Hands tornado the addresses the policy checked, so it connects to those and resolves nothing."""

    def initialize(self, addresses: list[tuple[socket.AddressFamily, tuple[Any, ...]]]) -> None:
        self.addresses = addresses

    async def resolve(
        self, host: str, port: int, family: socket.AddressFamily = socket.AF_UNSPEC
    ) -> list[tuple[int, Any]]:
        return [(af, address) for af, address in self.addresses if family in (socket.AF_UNSPEC, af)]


class AnswerSink(Protocol):
    """Where the planner's answer goes as it arrives."""

    def start(self, status: int, reason: str, headers: httputil.HTTPHeaders) -> Awaitable[None] | None: ...

    def chunk(self, data: bytes) -> Awaitable[None] | None: ...


def describe_error(error: BaseException) -> str:
    """A phrase a user can act on, for the 502 message."""
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return f"host not found ({error.strerror or error})"
    if isinstance(error, TimeoutError):
        return "connection timed out"
    if isinstance(error, ssl.SSLError):
        return f"TLS error ({error.reason or error})"
    if isinstance(error, StreamClosedError):
        real = error.real_error
        if real is not None and real is not error:
            return describe_error(real)
        return "connection closed before an answer"
    if isinstance(error, OSError):
        if error.errno == errno.ECONNREFUSED:
            return "connection refused"
        if error.errno == errno.ECONNRESET:
            return "connection reset"
        return (error.strerror or str(error)).lower()
    return str(error) or type(error).__name__


class _Delegate(httputil.HTTPMessageDelegate):
    def __init__(self, sink: AnswerSink, request: PlannerRequest) -> None:
        self.sink = sink
        self.request = request
        self.started = False
        self.complete = False

    def headers_received(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
    ) -> Awaitable[None] | None:
        assert isinstance(start_line, httputil.ResponseStartLine)
        self.request.heard()
        if 100 <= start_line.code < 200:
            return None
        self.started = True
        return self.sink.start(start_line.code, start_line.reason, headers)

    def data_received(self, chunk: bytes) -> Awaitable[None] | None:
        self.request.heard()
        return self.sink.chunk(chunk)

    def finish(self) -> None:
        self.complete = True


class PlannerRequest:
    """A request to `url` whose answer is handed to a sink chunk by chunk; `close()` ends it at once.

    The host is resolved once, every address checked by `policy.checked_addresses`, and the connection
    made to those addresses only. `idle_timeout` (seconds, 0: none) ends the exchange when the planner
    sends nothing for that long, before its answer started or between two chunks.
    """

    def __init__(
        self,
        url: str,
        method: str,
        headers: httputil.HTTPHeaders,
        body: bytes | None,
        connect_timeout: float,
        idle_timeout: float = 0.0,
    ) -> None:
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.connect_timeout = connect_timeout
        self.idle_timeout = idle_timeout
        self._stream: IOStream | None = None
        # Closed by the caller (the browser went away), as opposed to ended here.
        self._closed = False
        self._idle = False
        self._last_heard = 0.0

    def heard(self) -> None:
        """The planner sent something: the idle time starts again."""
        self._last_heard = asyncio.get_running_loop().time()

    async def send(self, sink: AnswerSink) -> bool:
        """Relays the answer; True when it arrived whole, False when it broke off after it started.

        Raises PlannerUnreachable when no answer started (connection refused, reset before headers, an
        answer that is not HTTP, nothing within `idle_timeout`); policy.PlannerRefused when the address
        is one the relay never connects to (before any connection).
        """
        parts = urlsplit(self.url)
        tls = parts.scheme == "https"
        host = parts.hostname or ""
        port = parts.port or (443 if tls else 80)
        try:
            addresses = await asyncio.wait_for(policy.checked_addresses(self.url, host, port), self.connect_timeout)
            self._stream = await TCPClient(resolver=_Resolved(addresses)).connect(
                host,
                port,
                # tornado verifies the certificate against `host` (SNI included).
                ssl_options=ssl.create_default_context() if tls else None,
                timeout=self.connect_timeout,
            )
        except (OSError, TimeoutError, StreamClosedError) as error:
            raise PlannerUnreachable(describe_error(error)) from error
        if self._closed:
            self._stream.close()
            return False
        self._stream.set_nodelay(True)
        connection = HTTP1Connection(
            self._stream,
            True,
            HTTP1ConnectionParameters(
                no_keep_alive=True,
                max_header_size=MAX_HEADER_BYTES,
                max_body_size=MAX_BODY_BYTES,
                decompress=True,
            ),
        )
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        headers = httputil.HTTPHeaders(self.headers)
        headers["Host"] = parts.netloc.rsplit("@", 1)[-1]
        headers["Connection"] = "close"
        if self.body is not None:
            headers["Content-Length"] = str(len(self.body))
        delegate = _Delegate(sink, self)
        self.heard()
        watchdog = asyncio.ensure_future(self._watch()) if self.idle_timeout > 0 else None
        try:
            await connection.write_headers(
                httputil.RequestStartLine(self.method, target, "HTTP/1.1"), headers, self.body
            )
            connection.finish()
            await connection.read_response(delegate)
        except StreamClosedError as error:
            if not delegate.started and not self._closed and not self._idle:
                raise PlannerUnreachable(describe_error(error), connected=True) from error
        finally:
            if watchdog is not None:
                watchdog.cancel()
            self._close_stream()
        if not delegate.started and not self._closed:
            if self._idle:
                raise PlannerUnreachable(
                    f"nothing came within {self.idle_timeout:g} s (c.NotebookBCC.idle_timeout)", connected=True
                )
            # tornado reads a malformed answer, closes the connection and returns without a word.
            raise PlannerUnreachable("the answer was not valid HTTP", connected=True)
        return delegate.complete

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            left = self._last_heard + self.idle_timeout - loop.time()
            if left <= 0:
                self._idle = True
                self._close_stream()
                return
            await asyncio.sleep(left)

    @property
    def timed_out(self) -> bool:
        """The planner went silent for `idle_timeout` (an answer that broke off for that reason)."""
        return self._idle

    def close(self) -> None:
        self._closed = True
        self._close_stream()

    def _close_stream(self) -> None:
        if self._stream is not None and not self._stream.closed():
            self._stream.close()
