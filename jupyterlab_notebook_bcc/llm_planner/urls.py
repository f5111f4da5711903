"""URLs in the planner's messages and logs: never with a `user:password@` part, a query string or a fragment
(where some endpoints take a key: `?api-key=…`)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit, urlunsplit

# A URL in an endpoint's text: shown without its userinfo and query (display_url).
_URL = re.compile(r"[a-z][a-z0-9+.-]*://[^\s'\"<>]+", re.IGNORECASE)


def display_url(url: str) -> str:
    """The URL without any `user:password@` part, query string or fragment, for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url.split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=netloc, query="", fragment=""))


def without_secrets(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with each of `secrets` (an API key) replaced and every URL in it shown as display_url shows it."""
    for secret in secrets:
        if len(secret) >= 4:
            text = text.replace(secret, "[key]")
    return _URL.sub(lambda match: display_url(match.group(0)), text)
