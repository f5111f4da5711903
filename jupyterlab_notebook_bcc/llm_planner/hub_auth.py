"""Who asks the shared planner on a JupyterHub: the user whose own Hub API token the request carries.

Each user's relay sends its single-user server's `JUPYTERHUB_API_TOKEN` (`c.NotebookBCC.planner_auth =
"hub"`), never a secret shared by all users. The planner asks the Hub who owns it (`GET {hub api}/user` with
that token, as JupyterHub's own `HubAuth` does) and keeps the answer for `cache_seconds`, so a revoked token
is refused within that time. Only the token's SHA-256 is kept, never the token.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from tornado.httpclient import AsyncHTTPClient, HTTPClientError, HTTPRequest

# The variables JupyterHub gives a managed service (and every single-user server).
API_URL_VARIABLE = "JUPYTERHUB_API_URL"
API_TOKEN_VARIABLE = "JUPYTERHUB_API_TOKEN"
SERVICE_URL_VARIABLE = "JUPYTERHUB_SERVICE_URL"
MAX_CACHED = 4096


class HubRefusal(Exception):
    """The request cannot be served: its HTTP status (401, 403, 502) and a message for the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class HubUser:
    name: str
    # The scopes the Hub says the request's token holds.
    scopes: frozenset[str] = frozenset()


def covers(held: frozenset[str], required: str) -> bool:
    """Whether `held` holds `required`, itself or unfiltered (`access:services` holds
    `access:services!service=notebook-bcc-planner`)."""
    return required in held or required.split("!", 1)[0] in held


def token_of(authorization: str) -> str:
    """The token of an `Authorization: token …` or `Authorization: Bearer …` header, or ""."""
    scheme, _, value = authorization.strip().partition(" ")
    if scheme.lower() not in ("token", "bearer"):
        return ""
    return value.strip()


class HubUsers:
    """Resolves a user's Hub API token to the user, through the Hub's API, with a cache.

    `cache_seconds` bounds how long a revoked token still works; a refused token is remembered for
    `refusal_seconds`, so a client retrying a bad token does not load the Hub.
    """

    def __init__(
        self,
        api_url: str,
        cache_seconds: float = 60.0,
        refusal_seconds: float = 5.0,
        request_timeout: float = 10.0,
        clock: Callable[[], float] = time.monotonic,
        required_scope: str = "",
    ) -> None:
        self.api_url = api_url.rstrip("/")
        # A scope each user's token must hold ("access:services!service=notebook-bcc-planner"), "" for none.
        self.required_scope = required_scope
        self.cache_seconds = cache_seconds
        self.refusal_seconds = refusal_seconds
        self.request_timeout = request_timeout
        self.clock = clock
        self._cache: OrderedDict[str, tuple[float, HubUser | None]] = OrderedDict()
        # How many times the Hub was asked (the cache's effect shows in tests).
        self.hub_requests = 0

    async def user_for(self, authorization: str) -> HubUser:
        """The user who owns the header's token; raises HubRefusal when there is none or the Hub refuses it."""
        token = token_of(authorization)
        if not token:
            raise HubRefusal(
                401,
                "LLM planner: this planner serves JupyterHub users; the request carries no Hub API token "
                "(set c.NotebookBCC.planner_auth = 'hub' on the single-user servers).",
            )
        key = hashlib.sha256(token.encode()).hexdigest()
        now = self.clock()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            self._cache.move_to_end(key)
            if cached[1] is None:
                raise _unknown()
            return self._scoped(cached[1])
        user = await self._ask(token)
        self._cache[key] = (now + (self.cache_seconds if user else self.refusal_seconds), user)
        self._cache.move_to_end(key)
        while len(self._cache) > MAX_CACHED:
            self._cache.popitem(last=False)
        if user is None:
            raise _unknown()
        return self._scoped(user)

    def _scoped(self, user: HubUser) -> HubUser:
        if self.required_scope and not covers(user.scopes, self.required_scope):
            raise HubRefusal(
                403,
                f"LLM planner: {user.name}'s Hub token does not hold the scope {self.required_scope!r} this planner "
                "requires; ask your administrator to grant it (a role in c.JupyterHub.load_roles), then restart your "
                "server from the Hub's control panel.",
            )
        return user

    async def _ask(self, token: str) -> HubUser | None:
        self.hub_requests += 1
        client = AsyncHTTPClient()
        request = HTTPRequest(
            f"{self.api_url}/user",
            headers={"Authorization": f"token {token}"},
            request_timeout=self.request_timeout,
            follow_redirects=False,
        )
        try:
            response = await client.fetch(request)
        except HTTPClientError as error:
            if error.code in (401, 403, 404):
                return None
            raise HubRefusal(
                502, f"LLM planner: JupyterHub's API at {self.api_url} answered HTTP {error.code}; try again later."
            ) from error
        except OSError as error:
            raise HubRefusal(
                502, f"LLM planner: JupyterHub's API at {self.api_url} cannot be reached ({error}); try again later."
            ) from error
        try:
            model = json.loads(response.body)
        except ValueError:
            model = None
        if not isinstance(model, dict) or not isinstance(model.get("name"), str):
            raise HubRefusal(502, f"LLM planner: JupyterHub's API at {self.api_url} did not name a user.")
        if model.get("kind", "user") != "user":
            # A service's or another program's token: the planner's budgets and sessions are per user.
            return None
        scopes = model.get("scopes")
        held = frozenset(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else frozenset()
        return HubUser(model["name"], held)


def _unknown() -> HubRefusal:
    return HubRefusal(
        403,
        "LLM planner: JupyterHub does not know this user's token (it was revoked, or the server was "
        "restarted with a new one); restart your server from the Hub's control panel.",
    )
