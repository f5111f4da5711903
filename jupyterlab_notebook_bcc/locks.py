"""One live run per notebook: in-memory run locks with a heartbeat (`{base_url}notebook-bcc/locks/<path>`).

A window that runs a notebook's workflow holds its lock and renews it every few seconds; a lock not
renewed within its time to live is free again, so a closed or crashed window never blocks the notebook
for long. See docs/architecture.md#one-run-per-notebook.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tornado.web
from jupyter_server.base.handlers import APIHandler

# Bounds on what a browser may store here: the server keeps every lock in memory.
MAX_KEY_CHARS = 4096
MAX_OWNER_CHARS = 128
MAX_STATUS_BYTES = 4096
MAX_LOCKS = 10000
MIN_TTL_MS = 1000
MAX_TTL_MS = 300000
DEFAULT_TTL_MS = 10000

CONTENTS_EVENTS = "https://events.jupyter.org/jupyter_server/contents_service/v1"


@dataclass
class RunLock:
    owner: str
    expires: float
    ttl_ms: int
    status: dict[str, Any] = field(default_factory=dict)

    def public(self, key: str, now: float) -> dict[str, Any]:
        return {
            "key": key,
            "held": True,
            "owner": self.owner,
            "ttl_ms": self.ttl_ms,
            "expires_in_ms": max(0, round((self.expires - now) * 1000)),
            "status": self.status,
        }


class LockFull(Exception):
    """Every slot holds a live lock."""


class RunLocks:
    """The locks of this server, by notebook path; expired ones are dropped as they are met."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._locks: dict[str, RunLock] = {}

    def get(self, key: str) -> RunLock | None:
        lock = self._locks.get(key)
        if lock is not None and lock.expires <= self.clock():
            del self._locks[key]
            return None
        return lock

    def acquire(self, key: str, owner: str, ttl_ms: int, status: dict[str, Any]) -> tuple[bool, RunLock]:
        """Takes a free (or expired) lock or renews the owner's own; else answers the holder's lock."""
        held = self.get(key)
        if held is not None and held.owner != owner:
            return False, held
        if held is None and len(self._locks) >= MAX_LOCKS:
            self._drop_expired()
            if len(self._locks) >= MAX_LOCKS:
                raise LockFull()
        lock = RunLock(owner, self.clock() + ttl_ms / 1000, ttl_ms, status)
        self._locks[key] = lock
        return True, lock

    def release(self, key: str, owner: str) -> RunLock | None:
        """Frees the owner's lock; answers the lock another owner holds (left as it is), else None."""
        held = self.get(key)
        if held is None:
            return None
        if held.owner != owner:
            return held
        del self._locks[key]
        return None

    def move(self, old: str, new: str) -> None:
        """A renamed notebook keeps its lock under the new path."""
        lock = self.get(old)
        if lock is not None and self.get(new) is None:
            del self._locks[old]
            self._locks[new] = lock

    def now(self) -> float:
        return self.clock()

    def _drop_expired(self) -> None:
        now = self.clock()
        for key in [key for key, lock in self._locks.items() if lock.expires <= now]:
            del self._locks[key]


def _free(key: str) -> dict[str, Any]:
    return {"key": key, "held": False}


class LockHandler(APIHandler):
    """GET: who holds the lock; PUT: acquire or renew it (409 when another owner holds it); DELETE: release."""

    def initialize(self, locks: RunLocks) -> None:
        self.locks = locks

    def _key(self, path: str) -> str:
        if not path or len(path) > MAX_KEY_CHARS:
            raise tornado.web.HTTPError(400, "not a notebook path")
        return path

    def _owner(self, value: Any) -> str:
        if not isinstance(value, str) or not value or len(value) > MAX_OWNER_CHARS:
            raise tornado.web.HTTPError(400, f"owner: a string of 1 to {MAX_OWNER_CHARS} characters")
        return value

    @tornado.web.authenticated
    def get(self, path: str) -> None:
        # Every open notebook asks this while its page is visible: not the user's activity, so an idle
        # server can still be culled. A heartbeat (PUT) is a live run, and counts.
        self._track_activity = False
        key = self._key(path)
        lock = self.locks.get(key)
        self.finish(json.dumps(lock.public(key, self.locks.now()) if lock else _free(key)))

    @tornado.web.authenticated
    def put(self, path: str) -> None:
        key = self._key(path)
        try:
            body = json.loads(self.request.body or b"{}")
        except ValueError as error:
            raise tornado.web.HTTPError(400, "the body is not JSON") from error
        if not isinstance(body, dict):
            raise tornado.web.HTTPError(400, "the body is not a JSON object")
        owner = self._owner(body.get("owner"))
        ttl = body.get("ttl_ms", DEFAULT_TTL_MS)
        if not isinstance(ttl, int) or isinstance(ttl, bool):
            raise tornado.web.HTTPError(400, "ttl_ms: an integer")
        ttl = min(MAX_TTL_MS, max(MIN_TTL_MS, ttl))
        status = body.get("status", {})
        if not isinstance(status, dict):
            raise tornado.web.HTTPError(400, "status: a JSON object")
        if len(json.dumps(status).encode()) > MAX_STATUS_BYTES:
            raise tornado.web.HTTPError(413, f"status: at most {MAX_STATUS_BYTES} bytes of JSON")
        try:
            ok, lock = self.locks.acquire(key, owner, ttl, status)
        except LockFull as error:
            raise tornado.web.HTTPError(503, "too many notebooks hold a run lock") from error
        if not ok:
            self.set_status(409)
        self.finish(json.dumps(lock.public(key, self.locks.now())))

    @tornado.web.authenticated
    def delete(self, path: str) -> None:
        key = self._key(path)
        owner = self._owner(self.get_query_argument("owner", None))
        other = self.locks.release(key, owner)
        if other is not None:
            self.set_status(409)
            self.finish(json.dumps(other.public(key, self.locks.now())))
            return
        self.finish(json.dumps(_free(key)))


def follow_renames(serverapp: Any, locks: RunLocks) -> None:
    """Moves a lock when its notebook is renamed through the contents API (when the server emits events)."""
    event_logger = getattr(serverapp, "event_logger", None)
    if event_logger is None:
        return

    async def on_contents(logger: Any, schema_id: str, data: dict[str, Any]) -> None:
        if data.get("action") == "rename" and data.get("source_path") and data.get("path"):
            locks.move(str(data["source_path"]).strip("/"), str(data["path"]).strip("/"))

    try:
        event_logger.add_listener(schema_id=CONTENTS_EVENTS, listener=on_contents)
    except Exception as error:  # an older server without this schema: locks simply stay on the old path
        serverapp.log.debug("Notebook-BCC: run locks do not follow renames (%s)", error)
