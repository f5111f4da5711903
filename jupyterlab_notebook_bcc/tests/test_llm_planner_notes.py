"""The LLM planner takes the user's notes (observation.context.user_notes) into its code prompt."""

from __future__ import annotations

import asyncio
from typing import Any

from jupyterlab_notebook_bcc.llm_planner.observation import MAX_NOTE_CHARS, MAX_NOTES, read_request
from jupyterlab_notebook_bcc.llm_planner.prompts import cell_messages, user_notes_block

from .fake_openai import FakeOpenAI, Reply, cell, plan
from .test_llm_planner import ask, loaded_run, observation, service_for

MEDIAN = {"text": "use the median,\nnot the mean", "step_id": "revenue_by_region", "created_at": "2025-05-02T09:14:03Z"}
ROWS = {"text": "ignore the 2019 rows", "cell_id": "c7", "step_id": "load_data"}


def notes_of(notes: Any) -> list[str]:
    """The notes of a request as the code prompt shows them, for the step `revenue_by_region`."""
    block = user_notes_block(read_request({"observation": {"context": {"user_notes": notes}}}).user_notes,
                             "revenue_by_region")
    return block.splitlines()[1:]


def test_the_notes_on_the_step_come_first_each_saying_where_it_was_made() -> None:
    assert notes_of([ROWS, MEDIAN, {"text": "round to 2 decimals"}, {"text": "drop NaN", "cell_id": "c2"}]) == [
        "- use the median, not the mean (on step revenue_by_region)",
        "- ignore the 2019 rows (on a cell of step load_data)",
        "- round to 2 decimals",
        "- drop NaN (on a cell)",
    ]


def test_notes_are_read_liberally_and_bounded() -> None:
    assert read_request({}).user_notes == []
    assert notes_of("use the median") == []
    assert notes_of([{"text": 3}, {"text": "  "}, "x", {"no": "text"}]) == []
    assert notes_of([{"text": f"note {i}"} for i in range(MAX_NOTES + 5)]) == [f"- note {i}" for i in range(MAX_NOTES)]
    assert notes_of([{"text": "x" * (MAX_NOTE_CHARS + 50)}]) == ["- " + "x" * MAX_NOTE_CHARS]


def test_the_notes_go_under_the_task_above_the_defaults_and_nothing_changes_without_them() -> None:
    def prompt(notes: str) -> list[dict[str, str]]:
        return cell_messages("Median revenue by region", "", {}, "", {"df": "DataFrame(12×3)"}, "Revenue",
                             "Median revenue by region.", [], "", notes)

    plain = prompt("")
    assert "The user's instructions" not in plain[-1]["content"]
    block = user_notes_block(read_request({"observation": {"context": {"user_notes": [MEDIAN]}}}).user_notes,
                             "revenue_by_region")
    noted = prompt(block)
    assert noted[:-1] == plain[:-1]
    assert noted[-1]["content"].startswith(
        "Task: Median revenue by region\n"
        "The user's instructions for this analysis (follow them; they take precedence over the defaults below):\n"
        "- use the median, not the mean (on step revenue_by_region)\n"
    )
    assert noted[-1]["content"].replace(block + "\n", "") == plain[-1]["content"]
    assert user_notes_block([], "s") == ""


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
