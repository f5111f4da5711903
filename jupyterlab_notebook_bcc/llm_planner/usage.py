"""Token counts: of one model call, of a behavior, of a run. Counted only by the accounting (accounting.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .model import Completion


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_calls: int = 0
    estimated: bool = False

    def add(self, completion: Completion) -> None:
        self.prompt_tokens += completion.prompt_tokens
        self.completion_tokens += completion.completion_tokens
        self.model_calls += 1
        self.estimated = self.estimated or completion.estimated

    @property
    def total(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def public(self) -> dict[str, Any]:
        public: dict[str, Any] = {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                                  "model_calls": self.model_calls}
        if self.estimated:
            public["estimated"] = True
        return public

    def cost(self, price: dict[str, Any]) -> float:
        prompt = float(price.get("prompt", 0) or 0)
        completion = float(price.get("completion", 0) or 0)
        return round((self.prompt_tokens * prompt + self.completion_tokens * completion) / 1_000_000, 6)


# A behavior is named by its step and its id: behavior ids start again at behavior_001 in each step.
BehaviorKey = tuple[str, str]


@dataclass
class RunUsage:
    """A run's tokens, in all and per behavior."""

    run: Usage = field(default_factory=Usage)
    by_behavior: dict[BehaviorKey, Usage] = field(default_factory=dict)

    def add(self, key: BehaviorKey | None, completion: Completion) -> None:
        self.run.add(completion)
        if key is not None and key[1]:
            self.by_behavior.setdefault(key, Usage()).add(completion)

    def behavior(self, key: BehaviorKey | None) -> Usage | None:
        return self.by_behavior.get(key) if key is not None else None

    @property
    def total(self) -> int:
        return self.run.total
