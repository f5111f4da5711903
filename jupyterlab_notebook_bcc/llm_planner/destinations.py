"""Where the LLM planner's model requests may go: the relay's destination policy (`..policy`), applied to
every request the `openai` SDK sends (a run's, Test's, `GET /models`), and the HTTP client that enforces it.

- **Never link-local**: the host is resolved here, every address checked (`policy.checked_addresses`: no
  link-local or cloud-metadata address, whoever set the URL), and the request sent to a checked address,
  never resolved again (the endpoint still sees its name in `Host` and, over TLS, in SNI and the
  certificate check).
- **A user's endpoint** (their LLM Planner Settings, a Test) must match `c.LLMPlanner.allowed_base_urls`,
  the relay's pattern syntax: by default loopback, as the relay allows it, and public `https` hosts on
  port 443. A pattern whose host is `*` allows public addresses only: a name it matches must resolve to
  global or loopback addresses, so a private address (`10.0.0.0/8`, `192.168.0.0/16`, …) is reached only
  where a pattern names it (its host or its network). The administrator's `c.LLMPlanner.base_url` is not
  checked against the list.
- **No redirect is followed and no proxy variable is read** (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`,
  `NO_PROXY`): a request goes where it was checked, or nowhere.
"""

from __future__ import annotations

import importlib
import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from .. import policy

SETTING = "c.LLMPlanner.allowed_base_urls"
# Loopback as the relay allows it, and every public https endpoint (OpenAI, Azure, DeepSeek, DashScope, …).
DEFAULT_ALLOWED_BASE_URLS = (*policy.DEFAULT_ALLOWED, "https://*")
ADMINISTRATOR = "server"


class EndpointRefused(Exception):
    """A model request the policy refused, before any connection; `message` says which rule and what to do."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def _never_message(url: str, what: str, kind: str) -> str:
    return (
        f"The model endpoint at {policy.origin_of(url)} is refused: {what} {kind}. The Jupyter server never "
        "sends model requests to link-local or cloud-metadata addresses, and no setting allows it: use an "
        "endpoint at another address."
    )


def _where(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").rstrip("."), parts.port or policy.DEFAULT_PORTS.get(scheme, 0)


def _is_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _public_or_loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0].strip("[]"))
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback or ip.is_global


@dataclass(frozen=True)
class Destinations:
    """`c.LLMPlanner.allowed_base_urls`, and the checks of one endpoint URL against it."""

    allowed: tuple[str, ...] = DEFAULT_ALLOWED_BASE_URLS

    def _matching(self, url: str) -> list[policy.Pattern]:
        scheme, host, port = _where(url)
        return [pattern for pattern in policy.parse_patterns(self.allowed) if pattern.matches(scheme, host, port)]

    def url_refusal(self, url: str, source: str) -> str:
        """Why an endpoint URL from `source` may not be used, judged on its name before any lookup; or ""."""
        _scheme, host, _port = _where(url)
        kind = policy.address_refusal(host)
        if kind:
            return _never_message(url, f"{host} is", kind)
        if source == ADMINISTRATOR:
            return ""
        matching = self._matching(url)
        public_only = all(pattern.host == "*" for pattern in matching)
        if matching and public_only and _is_literal(host) and not _public_or_loopback(host):
            return self._private_message(url, f"{host} is")
        if matching:
            return ""
        listed = ", ".join(repr(text) for text in self.allowed) or "nothing"
        origin = policy.origin_of(url)
        return (
            f"The model endpoint {origin} is not allowed on this server: it matches none of {SETTING} ({listed}). "
            f"Use an endpoint it allows, or ask an administrator to add a pattern such as {origin!r} to {SETTING} "
            "in jupyter_server_config.py."
        )

    async def addresses(self, url: str, source: str) -> list[tuple[socket.AddressFamily, tuple[Any, ...]]]:
        """The checked addresses to connect to; EndpointRefused before any connection, OSError when the name
        does not resolve."""
        refusal = self.url_refusal(url, source)
        if refusal:
            raise EndpointRefused(refusal)
        _scheme, host, port = _where(url)
        try:
            addresses = await policy.checked_addresses(url, host, port, never=_never_message)
        except policy.PlannerRefused as refused:
            raise EndpointRefused(refused.message) from None
        public_only = source != ADMINISTRATOR and all(pattern.host == "*" for pattern in self._matching(url))
        for _family, sockaddr in addresses:
            address = str(sockaddr[0]).split("%", 1)[0]
            if public_only and not _public_or_loopback(address):
                raise EndpointRefused(self._private_message(url, f"{host} resolves to {address},"))
        return addresses

    @staticmethod
    def _private_message(url: str, what: str) -> str:
        origin = policy.origin_of(url)
        return (
            f"The model endpoint {origin} is refused: {what} a private address, and {SETTING} allows private "
            f"addresses only where a pattern names them. An administrator can allow it by adding {origin!r} (or "
            f"its network) to {SETTING} in jupyter_server_config.py."
        )


def http_library() -> ModuleType:
    """The HTTP library the installed `openai` SDK is built on: `httpx2` (openai 3), else `httpx`."""
    import openai

    for cls in openai.DefaultAsyncHttpxClient.__mro__:
        root = cls.__module__.split(".", 1)[0]
        if cls.__name__ == "AsyncClient" and root in ("httpx", "httpx2"):
            return importlib.import_module(root)
    return importlib.import_module("httpx")


class CheckedTransport:
    """An HTTP transport (httpx's interface) that sends each request to an address the policy checked."""

    def __init__(self, library: ModuleType, destinations: Destinations, source: str) -> None:
        self.library = library
        self.destinations = destinations
        self.source = source
        self.inner = library.AsyncHTTPTransport(trust_env=False, retries=0)

    async def handle_async_request(self, request: Any) -> Any:
        url = request.url
        host = str(url.host)
        addresses = await self.destinations.addresses(str(url), self.source)
        # The name stays in `Host` (set when the request was built) and, over TLS, in SNI and the certificate.
        request.extensions = {**request.extensions, "sni_hostname": host}
        last: Exception | None = None
        for _family, sockaddr in addresses:
            request.url = url.copy_with(host=str(sockaddr[0]))
            try:
                return await self.inner.handle_async_request(request)
            except self.library.ConnectError as error:
                last = error
            finally:
                request.url = url
        assert last is not None
        raise last

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def __aenter__(self) -> CheckedTransport:
        return self

    async def __aexit__(self, *args: object) -> None:
        await self.aclose()


def http_client(destinations: Destinations, source: str) -> Any:
    """The `http_client` of the SDK: the checked transport, no redirects, no proxy or other variables."""
    library = http_library()
    return library.AsyncClient(
        transport=CheckedTransport(library, destinations, source),
        follow_redirects=False,
        trust_env=False,
        timeout=None,
    )


def refusal_in(error: BaseException) -> EndpointRefused | None:
    """The policy's refusal behind an error the SDK raised (openai 1 and 2 wrap it, 3 lets it through)."""
    current: BaseException | None = error
    for _ in range(8):
        if current is None:
            return None
        if isinstance(current, EndpointRefused):
            return current
        current = current.__cause__ or current.__context__
    return None


def parse_allowed(patterns: Sequence[str]) -> list[str]:
    """`allowed_base_urls` as given; ValueError says which pattern is wrong."""
    policy.parse_patterns(patterns)
    return list(patterns)
