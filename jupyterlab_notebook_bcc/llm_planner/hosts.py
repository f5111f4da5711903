"""Which `Host` the LLM planner on its own answers, as the reference planner does (its requestGuard.ts).

DNS rebinding: a page on `evil.example` whose name later resolves to 127.0.0.1 reaches a loopback planner as
same-origin, but its requests still say `Host: evil.example`. So a request is answered only when its `Host`
is a loopback name, the address the planner listens on, or a name given with `--allowed-host`; on a wildcard
bind (`--host 0.0.0.0`) also this machine's name and addresses.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable

WILDCARDS = frozenset({"", "0.0.0.0", "::", "[::]"})
_BRACKETED = re.compile(r"^\[([^\]]+)\](?::\d+)?$")


def host_of(header: str) -> str:
    """The host of a `Host` header, lowercased, without port, brackets or trailing dot."""
    text = header.strip().lower()
    bracketed = _BRACKETED.match(text)
    if bracketed:
        return bracketed[1]
    return re.sub(r":\d+$", "", text).rstrip(".")


def _is_loopback(host: str) -> bool:
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _machine_names() -> set[str]:
    names = {socket.gethostname().lower()}
    try:
        for *_rest, sockaddr in socket.getaddrinfo(socket.gethostname(), None):
            names.add(str(sockaddr[0]).lower())
    except OSError:
        pass
    return names


def allowed_hosts(bind_host: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The names a request may give in `Host` besides loopback: the bind address and `extra` names."""
    names = {host_of(name) for name in extra}
    if bind_host in WILDCARDS:
        names |= _machine_names()
    else:
        names.add(host_of(f"[{bind_host}]" if ":" in bind_host and not bind_host.startswith("[") else bind_host))
    return frozenset(names)


def host_refusal(header: str | None, allowed: frozenset[str]) -> str:
    """Why a `Host` header is refused, or "" when the request may go on."""
    if header is None or not header.strip():
        return "LLM planner: the request names no Host; send Host: <planner host>:<port>"
    host = host_of(header)
    if _is_loopback(host) or host in allowed:
        return ""
    return (
        f'LLM planner: Host "{header}" is not a name of this planner (DNS rebinding protection): use a loopback '
        "address (localhost, 127.0.0.1, [::1]) or the address it listens on, or start it with --allowed-host NAME"
    )
