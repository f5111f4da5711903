"""What the model is asked, and the JSON shapes its answers must have. Prompts are short: small local models
follow short, concrete instructions better, and every token is the user's money on a paid endpoint."""

from __future__ import annotations

import json
from typing import Any

TEMPLATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "stages": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "steps": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "name": {"type": "string"},
                                "goal": {"type": "string"},
                                "expected_variables": {"type": "array", "items": {"type": "string"}},
                            },
                            "required": ["name", "goal", "expected_variables"],
                        },
                    },
                },
                "required": ["name", "steps"],
            },
        },
    },
    "required": ["title", "stages"],
}

CELL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"explanation": {"type": "string"}, "code": {"type": "string"}},
    "required": ["explanation", "code"],
}

REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"report": {"type": "string"}},
    "required": ["report"],
}


# One worked example per kind of answer, given as an earlier turn of the conversation: small models copy the
# form of an example far more reliably than they follow a description of it.
_EXAMPLE_TASK = "Which city has the highest average price? Store the city in a variable named answer."
_EXAMPLE_DATA = "Shape: 40 rows x 2 columns\nColumns and types:\ncity object\nprice float64"
_EXAMPLE_TEMPLATE = {
    "title": "Average price by city",
    "stages": [{"name": "Analysis", "steps": [
        {"name": "Average price per city", "goal": "Group the rows by city and average the price column.",
         "expected_variables": ["price_by_city"]},
        {"name": "Pick the answer", "goal": "Store the city with the highest average price in answer.",
         "expected_variables": ["answer"]},
    ]}],
}
_EXAMPLE_CELL = {
    "explanation": "Group by city, average the price, and keep the most expensive city.",
    "code": "price_by_city = df.groupby('city')['price'].mean()\nprint(price_by_city)\n"
            "answer = price_by_city.idxmax()\nprint(answer)",
}
_EXAMPLE_REPORT = {
    "report": "- The most expensive city on average is **Paris** (412.5), ahead of Lyon (388.0).\n"
              "- The outputs do not show how prices changed over time.",
}
_EXAMPLE_OUTPUTS = "city\nLyon     388.0\nParis    412.5\nName: price, dtype: float64\nParis"


def _example(user: str, answer: dict[str, Any]) -> list[dict[str, str]]:
    return [{"role": "user", "content": user}, {"role": "assistant", "content": json.dumps(answer)}]


def is_chinese(text: str) -> bool:
    """A task written in Chinese: its CJK characters outnumber a tenth of its letters."""
    cjk = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff" or "\u3400" <= ch <= "\u4dbf")
    letters = sum(1 for ch in text if ch.isalpha())
    return cjk > 0 and cjk * 10 >= letters


def language_of(task: str) -> str:
    return "Simplified Chinese" if is_chinese(task) else "English"


def _system(task: str) -> str:
    return (
        "You are a careful data scientist working in a Jupyter notebook with pandas. "
        f"Write every explanation in {language_of(task)}. Answer with one JSON object only."
    )


def template_messages(task: str, data_files: list[str], preview: str) -> list[dict[str, str]]:
    def ask(task_text: str, data: str) -> str:
        lines = [f"Task: {task_text or 'an exploratory analysis of the data'}"]
        if data:
            lines += ["The data is loaded in the DataFrame `df`:", data]
        elif data_files:
            lines.append(f"Data files: {', '.join(data_files)}")
        lines += [
            "Plan the analysis that answers the task, after the data is loaded: 1 to 3 stages of 1 to 3 steps. "
            "expected_variables are the new Python variables each step's code must create. If the task names a "
            "variable for the result, a step must create it. No step for loading the data or for the report.",
            "Answer with the plan as JSON.",
        ]
        return "\n".join(lines)

    return [
        {"role": "system", "content": _system(task)},
        *_example(ask(_EXAMPLE_TASK, _EXAMPLE_DATA), _EXAMPLE_TEMPLATE),
        {"role": "user", "content": ask(task, preview)},
    ]


def cell_messages(
    task: str,
    preview: str,
    variables: dict[str, Any],
    step_name: str,
    goal: str,
    expected: list[str],
    error: str,
    focus: str,
) -> list[dict[str, str]]:
    def ask(task_text: str, data: str, known: str, step: str, step_goal: str, names: list[str]) -> str:
        lines = [f"Task: {task_text}", "Variables in the kernel:", known]
        if data:
            lines += ["The data `df`:", data]
        lines += [f"Step: {step}. {step_goal}"]
        if names:
            lines.append(f"Create the variables: {', '.join(names)}.")
        return "\n".join(lines)

    known = "\n".join(f"- {name}: {_short(value)}" for name, value in list(variables.items())[:40]) or "- none"
    request = ask(task, preview, known, step_name, goal, expected)
    extra = []
    if focus:
        extra.append(f"Note: {focus}")
    if error:
        extra += ["The previous code for this step failed with:", error, "Write corrected code."]
    extra.append(
        "Write one notebook cell for this step only, as JSON: an explanation and Python code that uses pandas and "
        "the variables above and prints what it computes. No shell commands, no other files."
    )
    example = ask(_EXAMPLE_TASK, _EXAMPLE_DATA, "- df: DataFrame(40×2)", "Average price per city",
                  "Group the rows by city and average the price column.", ["price_by_city", "answer"])
    return [
        {"role": "system", "content": _system(task)},
        *_example(example + "\n" + extra[-1], _EXAMPLE_CELL),
        {"role": "user", "content": request + "\n" + "\n".join(extra)},
    ]


def report_messages(task: str, outputs: str) -> list[dict[str, str]]:
    def ask(task_text: str, printed: str) -> str:
        return "\n".join([
            f"Task: {task_text}",
            "What the analysis printed in the kernel:",
            printed or "(nothing)",
            "Write the findings report in Markdown, as JSON: a few bullet points that answer the task. Cite only "
            "numbers that appear in the outputs above; never invent one. Say what the outputs do not show.",
        ])

    return [
        {"role": "system", "content": _system(task)},
        *_example(ask(_EXAMPLE_TASK, _EXAMPLE_OUTPUTS), _EXAMPLE_REPORT),
        {"role": "user", "content": ask(task, outputs)},
    ]


def retry_messages(messages: list[dict[str, str]], answer: str, problem: str) -> list[dict[str, str]]:
    """The same request once more, with the unreadable answer and why it could not be read."""
    return [
        *messages,
        {"role": "assistant", "content": answer[:2000]},
        {
            "role": "user",
            "content": f"Your answer could not be read: {problem}. Answer again with one JSON object only.",
        },
    ]


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= 160 else text[:157] + "…"
