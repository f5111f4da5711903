"""One streamed HTTP/1.1 exchange with the planner, built on tornado's connection classes.

tornado's `AsyncHTTPClient` cannot cancel a request in flight; owning the stream lets the relay close
the planner's connection the moment the browser goes away, even while the planner is still thinking.
"""

from __future__ import annotations

import errno
import socket
import ssl
from collections.abc import Awaitable
from typing import Protocol
from urllib.parse import urlsplit

from tornado import httputil
from tornado.http1connection import HTTP1Connection, HTTP1ConnectionParameters
from tornado.iostream import IOStream, StreamClosedError
from tornado.tcpclient import TCPClient

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
    def __init__(self, sink: AnswerSink) -> None:
        self.sink = sink
        self.started = False
        self.complete = False

    def headers_received(
        self,
        start_line: httputil.RequestStartLine | httputil.ResponseStartLine,
        headers: httputil.HTTPHeaders,
    ) -> Awaitable[None] | None:
        assert isinstance(start_line, httputil.ResponseStartLine)
        if 100 <= start_line.code < 200:
            return None
        self.started = True
        return self.sink.start(start_line.code, start_line.reason, headers)

    def data_received(self, chunk: bytes) -> Awaitable[None] | None:
        return self.sink.chunk(chunk)

    def finish(self) -> None:
        self.complete = True


class PlannerRequest:
    """A request to `url` whose answer is handed to a sink chunk by chunk; `close()` ends it at once."""

    def __init__(
        self,
        url: str,
        method: str,
        headers: httputil.HTTPHeaders,
        body: bytes | None,
        connect_timeout: float,
    ) -> None:
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.connect_timeout = connect_timeout
        self._stream: IOStream | None = None
        self._closed = False

    async def send(self, sink: AnswerSink) -> bool:
        """Relays the answer; True when it arrived whole, False when it broke off after it started.

        Raises PlannerUnreachable when no answer started (connection refused, reset before headers).
        """
        parts = urlsplit(self.url)
        tls = parts.scheme == "https"
        host = parts.hostname or ""
        port = parts.port or (443 if tls else 80)
        try:
            self._stream = await TCPClient().connect(
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
        delegate = _Delegate(sink)
        try:
            await connection.write_headers(
                httputil.RequestStartLine(self.method, target, "HTTP/1.1"), headers, self.body
            )
            connection.finish()
            await connection.read_response(delegate)
        except StreamClosedError as error:
            if not delegate.started and not self._closed:
                raise PlannerUnreachable(describe_error(error), connected=True) from error
        finally:
            self.close()
        if not delegate.started and not self._closed:
            raise PlannerUnreachable("the answer was not valid HTTP", connected=True)
        return delegate.complete

    def close(self) -> None:
        self._closed = True
        if self._stream is not None and not self._stream.closed():
            self._stream.close()
