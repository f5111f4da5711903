"""Each user's tokens and runs: the day's budget, the run's budget, and the run log.

The planner core counts a run's tokens in its session; this module adds them up per user and day (UTC),
refuses a user whose budget is spent (HTTP 403, the run stops with the message, other users go on), and
writes one JSON line per run when it ends to `c.LLMPlanner.run_log`: user, notebook, model, tokens, start,
end and outcome (`completed`, `budget`, or `replaced` when the user started another run of the notebook).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from .planner import Caller, PlannerFailure, Session
from .settings import LLMPlanner

log = logging.getLogger("notebook_bcc.llm_planner")


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="seconds")


def _day(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).date().isoformat()


@dataclass
class _OpenRun:
    session: Session
    start: float


class Accounting:
    def __init__(self, config: LLMPlanner, clock: Callable[[], float] = time.time) -> None:
        self.config = config
        self.clock = clock
        self.day = _day(clock())
        # Tokens of the day by user, and what of each caller's session was counted already.
        self.used: dict[str, int] = {}
        self._counted: dict[Caller, tuple[int, int]] = {}
        self._open: dict[Caller, _OpenRun] = {}
        self._restore()

    # --- limits -------------------------------------------------------------------------------------

    def _limit(self, user: str, name: str) -> tuple[int, str]:
        """A user's limit `name` and the setting it comes from."""
        limits = self.config.user_limits.get(user) if isinstance(self.config.user_limits, dict) else None
        if isinstance(limits, dict) and isinstance(limits.get(name), int):
            return int(limits[name]), f"c.LLMPlanner.user_limits[{user!r}]"
        return int(getattr(self.config, name)), f"c.LLMPlanner.{name}"

    def run_tokens(self, user: str) -> tuple[int, str]:
        return self._limit(user, "max_run_tokens")

    def check(self, caller: Caller) -> None:
        """Refuses (403) a user who has spent the day's tokens."""
        self._roll()
        limit, setting = self._limit(caller.user, "max_daily_tokens")
        used = self.used.get(caller.user, 0)
        if limit and used >= limit:
            raise PlannerFailure(
                403,
                f"You have used your token budget for today on this planner ({used:,} of {limit:,} tokens, "
                f"{setting}); it starts again at 00:00 UTC, or ask your administrator to raise it.",
            )

    # --- counting -----------------------------------------------------------------------------------

    def settle(self, caller: Caller, session: Session | None) -> None:
        """Adds what the caller's session used since the last count to the user's day."""
        if session is None:
            return
        self._roll()
        seen_id, seen_tokens = self._counted.get(caller, (0, 0))
        before = seen_tokens if seen_id == id(session) else 0
        total = session.usage.total
        if total > before:
            self.used[caller.user] = self.used.get(caller.user, 0) + total - before
        self._counted[caller] = (id(session), total)

    def started(self, caller: Caller, session: Session) -> None:
        previous = self._open.pop(caller, None)
        if previous is not None and previous.session is not session:
            self._write(caller, previous, "replaced")
        self._open[caller] = _OpenRun(session, self.clock())

    def ended(self, caller: Caller, outcome: str, message: str = "") -> None:
        run = self._open.pop(caller, None)
        if run is not None:
            self._write(caller, run, outcome, message)

    # --- the log ------------------------------------------------------------------------------------

    def _write(self, caller: Caller, run: _OpenRun, outcome: str, message: str = "") -> None:
        usage = run.session.usage
        record: dict[str, Any] = {
            "user": caller.user,
            "notebook": caller.notebook_id,
            "model": run.session.model,
            "tokens": usage.total,
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "model_calls": usage.model_calls,
            "behaviors": run.session.behaviors,
            "start": _iso(run.start),
            "end": _iso(self.clock()),
            "outcome": outcome,
        }
        if message:
            record["message"] = message
        line = json.dumps(record, ensure_ascii=False)
        log.info("run %s", line)
        if not self.config.run_log:
            return
        try:
            descriptor = os.open(self.config.run_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
            with os.fdopen(descriptor, "a", encoding="utf-8") as file:
                file.write(line + "\n")
        except OSError as error:
            log.error("LLM planner: cannot write the run log %s: %s", self.config.run_log, error)

    def _restore(self) -> None:
        """Today's tokens per user from the run log, so a restart does not give every user a new day."""
        if not self.config.run_log:
            return
        try:
            with open(self.config.run_log, encoding="utf-8") as file:
                for line in file:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        continue
                    if not isinstance(record, dict) or not str(record.get("end", "")).startswith(self.day):
                        continue
                    user, tokens = record.get("user"), record.get("tokens")
                    if isinstance(user, str) and isinstance(tokens, int):
                        self.used[user] = self.used.get(user, 0) + tokens
        except FileNotFoundError:
            return
        except OSError as error:
            log.error("LLM planner: cannot read the run log %s: %s", self.config.run_log, error)

    def _roll(self) -> None:
        today = _day(self.clock())
        if today != self.day:
            self.day = today
            self.used.clear()
