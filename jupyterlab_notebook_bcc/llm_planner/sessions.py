"""What the planner keeps of each run, per user and notebook: bounded (the least recently used go first)
and forgotten after a while without a request. A run whose session went goes on from the observation, which
carries everything else it needs; its token count starts again."""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from .contract import TaskContract
from .memory import RunMemory
from .observation import Check
from .plan import Stage, Step, find_step
from .usage import RunUsage


@dataclass(frozen=True)
class Caller:
    """Who asks: the Jupyter (or Hub) user and the notebook; sessions are kept apart by both."""

    user: str
    notebook_id: str


@dataclass
class Session:
    """One run of one notebook for one user."""

    model: str = ""
    title: str = ""
    stages: list[Stage] = field(default_factory=list)
    contract: TaskContract = field(default_factory=TaskContract)
    # The data's columns and dtypes, from the load step's preview.
    columns: dict[str, str] = field(default_factory=dict)
    usage: RunUsage = field(default_factory=RunUsage)
    behaviors: int = 0
    # Behaviors whose answer could not be read, and why: they wrote no cell, so they reach no goal.
    unread: dict[tuple[str, str], str] = field(default_factory=dict)
    memory: RunMemory = field(default_factory=RunMemory)
    # The latest output check of each name the extension checked (CONTRACTS.md §3).
    checks: dict[str, Check] = field(default_factory=dict)
    # Steps given up: (name, reason), in order.
    given_up: list[tuple[str, str]] = field(default_factory=list)
    # Parts of the task no step covers.
    not_planned: list[str] = field(default_factory=list)
    # Steps the model wrote the failed code again for (twice): step id -> reason; the step is given up.
    repeated: dict[str, str] = field(default_factory=dict)
    # The contract as last sent to the extension (it is sent again when it changes).
    contract_sent: dict[str, Any] = field(default_factory=dict)

    def step(self, step_id: str) -> Step | None:
        return find_step(self.stages, step_id)

    def stage(self, stage_id: str) -> Stage | None:
        return next((stage for stage in self.stages if stage.id == stage_id), None)

    def delivered_before(self, step_id: str) -> list[str]:
        """The task's values that the steps before this one (in the plan's order) delivered and checked,
        less this step's own: a later step's code does not assign them again (`delivered.py`)."""
        steps = [step for stage in self.stages for step in stage.steps]
        at = next((index for index, step in enumerate(steps) if step.id == step_id), None)
        if at is None:
            return []
        # An achieved step's variables each passed their check in the kernel.
        achieved = {record.step_id for record in self.memory.done}
        wanted = set(self.contract.names()) - set(steps[at].expected)
        return [name for step in steps[:at] if step.id in achieved for name in step.expected if name in wanted]


Evicted = Callable[[Caller, Session, str], None]


class Sessions:
    """The sessions of all callers: at most `limit`, each forgotten `idle_seconds` after its last request.
    `on_evict(caller, session, why)` is told of each one that goes ("evicted" or "expired")."""

    def __init__(self, limit: int = 200, idle_seconds: float = 12 * 3600, on_evict: Evicted | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit = max(1, limit)
        self.idle_seconds = idle_seconds
        self.on_evict = on_evict
        self.clock = clock
        self._sessions: OrderedDict[Caller, tuple[Session, float]] = OrderedDict()

    def get(self, caller: Caller) -> Session | None:
        self._expire()
        found = self._sessions.get(caller)
        if found is None:
            return None
        self._sessions[caller] = (found[0], self.clock())
        self._sessions.move_to_end(caller)
        return found[0]

    def peek(self, caller: Caller) -> Session | None:
        """The caller's session without counting it as used (for the accounting's bookkeeping)."""
        found = self._sessions.get(caller)
        return found[0] if found else None

    def put(self, caller: Caller, session: Session) -> None:
        self._expire()
        self._sessions.pop(caller, None)
        self._sessions[caller] = (session, self.clock())
        while len(self._sessions) > self.limit:
            old_caller, (old, _seen) = self._sessions.popitem(last=False)
            self._tell(old_caller, old, "evicted")

    def __getitem__(self, caller: Caller) -> Session:
        return self._sessions[caller][0]

    def __contains__(self, caller: object) -> bool:
        return caller in self._sessions

    def __len__(self) -> int:
        return len(self._sessions)

    def __iter__(self) -> Iterator[Caller]:
        return iter(list(self._sessions))

    def _expire(self) -> None:
        if self.idle_seconds <= 0:
            return
        deadline = self.clock() - self.idle_seconds
        for caller, (session, seen) in list(self._sessions.items()):
            if seen < deadline:
                del self._sessions[caller]
                self._tell(caller, session, "expired")

    def _tell(self, caller: Caller, session: Session, why: str) -> None:
        if self.on_evict is not None:
            self.on_evict(caller, session, why)
