"""Where the relay may connect.

Two rules, in this order:

- **The allowlist** (`c.NotebookBCC.allowed_planner_urls`): a planner URL that the user set (their
  `baseUrl`, or the built-in default) must match one of the administrator's patterns; by default only
  loopback (`localhost`, `127.0.0.0/8`, `::1`) on any port, the single-user server's own planner. The
  administrator's own URLs (`c.NotebookBCC.planner_url`, JupyterLab's `overrides.json`) are not checked.
- **Never link-local**: whatever the URL and whoever set it, the relay resolves the host itself, checks
  every address it got, and connects only to those addresses (so a name cannot resolve to a harmless
  address for the check and to the metadata service for the connection). Link-local addresses
  (`169.254.0.0/16`, `fe80::/10`) and the cloud-metadata addresses outside them are refused.

A pattern is `SCHEME://HOST[:PORT]`: SCHEME is `http`, `https` or `*`; HOST a name, `*.` and a domain
(its subdomains), an IP address (`[::1]` for IPv6) or network (`10.0.0.0/8`, `[fd00::/8]`), or `*`;
PORT a number or `*`, the scheme's default port when left out. `*` alone allows every host.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# The single-user default: the planner runs on the same machine as the Jupyter server.
DEFAULT_ALLOWED = ("*://localhost:*", "*://127.0.0.0/8:*", "*://[::1]:*")
# Sources whose URL an administrator chose (config.py's `Source`); the others are checked against the list.
ADMINISTRATOR_SOURCES = ("server", "overrides")
SETTING = "c.NotebookBCC.allowed_planner_urls"

LINK_LOCAL = (ipaddress.ip_network("169.254.0.0/16"), ipaddress.ip_network("fe80::/10"))
# Metadata services outside the link-local ranges: AWS's IPv6 endpoint, Alibaba Cloud's.
METADATA_ADDRESSES = (ipaddress.ip_address("fd00:ec2::254"), ipaddress.ip_address("100.100.100.200"))
# IPv6 forms that carry an IPv4 address: NAT64's well-known prefix (64:ff9b::/96).
NAT64 = ipaddress.ip_network("64:ff9b::/96")

DEFAULT_PORTS = {"http": 80, "https": 443}

_PATTERN = re.compile(
    r"^(?P<scheme>\*|https?)://"
    r"(?P<host>\[[^\]]+\]|[^:/\[\]]+(?:/\d{1,3})?)"
    r"(?::(?P<port>\*|\d{1,5}))?/?$",
    re.IGNORECASE,
)


class PlannerRefused(Exception):
    """The relay will not connect there; `message` says which rule refused and what can be done."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Pattern:
    text: str
    scheme: str  # "http", "https" or "*"
    host: str  # a lowercased name, "*.domain", or "*"
    network: IPNetwork | None  # set for an IP address or network
    port: int | None  # None: any port

    def matches(self, scheme: str, host: str, port: int) -> bool:
        if self.scheme != "*" and self.scheme != scheme:
            return False
        if self.port is not None and self.port != port:
            return False
        if self.host == "*":
            return True
        address = _ip(host)
        if self.network is not None:
            return address is not None and address in self.network
        if address is not None:
            return False
        if self.host.startswith("*."):
            return host.endswith(self.host[1:])
        return host == self.host


def parse_pattern(text: str) -> Pattern:
    """A pattern of `allowed_planner_urls`; ValueError says what is wrong with it."""
    stripped = text.strip()
    if stripped == "*":
        return Pattern(stripped, "*", "*", None, None)
    match = _PATTERN.match(stripped)
    if not match:
        raise ValueError(
            f"{text!r} is not a planner URL pattern like 'http://localhost:*', 'https://*.corp.example' "
            "or 'http://10.0.0.0/8:8000' (SCHEME://HOST[:PORT]; or '*' for every host)"
        )
    scheme = match["scheme"].lower()
    host = match["host"].lower()
    port_text = match["port"]
    network: IPNetwork | None = None
    bare = host[1:-1] if host.startswith("[") else host
    if host.startswith("[") or bare[:1].isdigit():
        try:
            network = ipaddress.ip_network(bare, strict=False)
        except ValueError as error:
            raise ValueError(f"{text!r}: {bare!r} is not an IP address or network ({error})") from None
    elif "/" in host or ("*" in host and host != "*" and not (host.startswith("*.") and "*" not in host[2:])):
        raise ValueError(f"{text!r}: a host is a name, '*.' and a domain, an IP address or network, or '*'")
    if port_text == "*":
        port = None
    elif port_text is not None:
        port = int(port_text)
        if not 0 < port < 65536:
            raise ValueError(f"{text!r}: port {port} is out of range 1-65535")
    elif scheme == "*":
        raise ValueError(f"{text!r}: with the scheme '*', name the port (a number or '*')")
    else:
        port = DEFAULT_PORTS[scheme]
    return Pattern(stripped, scheme, host.rstrip("."), network, port)


def parse_patterns(texts: Iterable[str]) -> list[Pattern]:
    return [parse_pattern(text) for text in texts]


def _ip(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return None


def _where(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, the host lowercased without a trailing dot."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or DEFAULT_PORTS.get(scheme, 0)
    return scheme, (parts.hostname or "").rstrip("."), port


def origin_of(url: str) -> str:
    """`scheme://host:port` of a URL, never its credentials or path."""
    scheme, host, port = _where(url)
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def url_refusal(url: str, source: str, allowed: Sequence[str]) -> str:
    """Why the allowlist refuses a planner URL from `source`, or "" when it may be used."""
    scheme, host, port = _where(url)
    if address_refusal(host):
        # An address no pattern can allow: say so rather than suggest a pattern.
        return _never_message(url, f"{host} is", address_refusal(host))
    if source in ADMINISTRATOR_SOURCES:
        return ""
    if any(pattern.matches(scheme, host, port) for pattern in parse_patterns(allowed)):
        return ""
    listed = ", ".join(repr(text) for text in allowed) or "nothing"
    origin = origin_of(url)
    return (
        f"Planner URL {origin} ({source} setting) is not allowed on this server: it matches none of "
        f"{SETTING} ({listed}). An administrator can allow it by adding a pattern such as "
        f"{origin!r} to {SETTING} in jupyter_server_config.py, or set c.NotebookBCC.planner_url."
    )


def _never_message(url: str, what: str, kind: str) -> str:
    return (
        f"Planner at {origin_of(url)} is refused: {what} {kind}. The relay never connects to link-local or "
        "cloud-metadata addresses, and no setting allows it: run the planner at another address."
    )


def address_refusal(address: str) -> str:
    """What kind of address the relay never connects to `address` is, or "" when it may."""
    ip = _ip(address)
    if ip is None:
        return ""
    candidates: list[IPAddress] = [ip]
    if isinstance(ip, ipaddress.IPv6Address):
        for embedded in (ip.ipv4_mapped, ip.sixtofour):
            if embedded is not None:
                candidates.append(embedded)
        if ip in NAT64:
            candidates.append(ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF))
    for candidate in candidates:
        if candidate in METADATA_ADDRESSES:
            return "a cloud-metadata address"
        if any(candidate in network for network in LINK_LOCAL):
            return "a link-local address (169.254.0.0/16, fe80::/10), where cloud metadata services answer"
    return ""


async def getaddrinfo(host: str, port: int) -> list[tuple[Any, ...]]:
    """The system resolver, off the event loop (tests replace `socket.getaddrinfo` under it)."""
    return await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)


async def checked_addresses(
    url: str, host: str, port: int, never: Callable[[str, str, str], str] | None = None
) -> list[tuple[socket.AddressFamily, tuple[Any, ...]]]:
    """Resolves `host` once and returns every address as (family, sockaddr), to connect to exactly these.

    Raises PlannerRefused when any of them is link-local or a metadata address (an answer that mixes a
    harmless address with a forbidden one is refused as a whole), OSError when the name does not resolve.
    `never(url, what, kind)` words the refusal (the relay's own words by default; the LLM planner's model
    requests go through here too).
    """
    never = never or _never_message
    literal = _ip(host)
    if literal is not None:
        family = socket.AF_INET6 if literal.version == 6 else socket.AF_INET
        results = [(family, socket.SOCK_STREAM, 0, "", (host, port) if family == socket.AF_INET else (host, port, 0, 0))]
    else:
        results = await getaddrinfo(host, port)
    addresses: list[tuple[socket.AddressFamily, tuple[Any, ...]]] = []
    for family, _type, _proto, _name, sockaddr in results:
        address = str(sockaddr[0])
        kind = address_refusal(address)
        if kind:
            resolved = f"{host} is" if literal is not None else f"{host} resolves to {address.split('%', 1)[0]},"
            raise PlannerRefused(never(url, resolved, kind))
        if (family, sockaddr) not in addresses:
            addresses.append((family, sockaddr))
    if not addresses:
        raise OSError(f"{host} has no address")
    return addresses
