"""The LLM planner takes the user's notes (observation.context.user_notes) into its code prompt."""

from __future__ import annotations

import asyncio
from typing import Any

from jupyterlab_notebook_bcc.llm_planner.notes import MAX_NOTE_CHARS, MAX_NOTES, user_notes, with_user_notes

from .fake_openai import FakeOpenAI, Reply, cell, plan
from .test_llm_planner import ask, loaded_run, observation, service_for

MEDIAN = {"text": "use the median,\nnot the mean", "step_id": "revenue_by_region", "created_at": "2025-05-02T09:14:03Z"}
ROWS = {"text": "ignore the 2019 rows", "cell_id": "c7", "step_id": "load_data"}


def with_notes(notes: list[dict[str, Any]]) -> dict[str, Any]:
    return {"context": {"user_notes": notes}}


def test_the_notes_on_the_step_come_first_each_saying_where_it_was_made() -> None:
    assert user_notes(with_notes([ROWS, MEDIAN, {"text": "round to 2 decimals"}]), "revenue_by_region") == [
        "- use the median, not the mean (on step revenue_by_region)",
        "- ignore the 2019 rows (on a cell of step load_data)",
        "- round to 2 decimals",
    ]


def test_notes_are_read_liberally_and_bounded() -> None:
    assert user_notes({}, "s") == []
    assert user_notes({"context": {"user_notes": "use the median"}}, "s") == []
    assert user_notes(with_notes([{"text": 3}, {"text": "  "}, "x", {"no": "text"}]), "s") == []
    many = [{"text": f"note {i}"} for i in range(MAX_NOTES + 5)]
    assert len(user_notes(with_notes(many), "s")) == MAX_NOTES
    long = user_notes(with_notes([{"text": "x" * (MAX_NOTE_CHARS + 50)}]), "s")
    assert long == ["- " + "x" * MAX_NOTE_CHARS]


def test_the_notes_go_above_the_requests_defaults_and_nothing_changes_without_them() -> None:
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "content": "Task: t\nStep: s. goal\nWrite one cell."}]
    assert with_user_notes(messages, {}, "s") is messages
    noted = with_user_notes(messages, with_notes([MEDIAN]), "revenue_by_region")
    assert noted[0] == messages[0]
    assert noted[-1]["content"] == (
        "Task: t\n"
        "The user's instructions for this analysis (follow them; they take precedence over the defaults below):\n"
        "- use the median, not the mean (on step revenue_by_region)\n"
        "Step: s. goal\nWrite one cell."
    )
    assert messages[-1]["content"] == "Task: t\nStep: s. goal\nWrite one cell."


def test_a_note_reaches_the_model_in_the_code_prompt() -> None:
    answers = iter([
        Reply(text=plan(("revenue_by_region", ["by_region"]))),
        Reply(text=cell("Median revenue by region.", "by_region = df.groupby('region').revenue.median()")),
    ])
    with FakeOpenAI(lambda body: next(answers)) as fake:
        service = service_for(fake)
        asyncio.run(loaded_run(service))
        request = observation("analysis", "revenue_by_region", 1, {"df": "DataFrame(12×3)"})
        request["context"]["user_notes"] = [MEDIAN, ROWS]
        run = asyncio.run(ask(service, "generating", {"observation": request}))
        assert run.status == 200
        messages = fake.requests[-1]["messages"]
        prompt = messages[-1]["content"]
        # The few-shot example before it is left as it is.
        assert not any("The user's instructions" in m["content"] for m in messages[:-1])
        instructions = prompt.index("The user's instructions")
        assert prompt.index("Task: ") < instructions < prompt.index("Step: ")
        assert "- use the median, not the mean (on step revenue_by_region)" in prompt
        assert "- ignore the 2019 rows (on a cell of step load_data)" in prompt
