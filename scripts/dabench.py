"""InfiAgent-DABench for `make eval`: the questions, the subset, the task text, and the official scoring.

The data (CC BY-NC 4.0: evaluation only, never copied into the repository or the package) is read at run
time from BCC_DABENCH_DIR, by default `../shared/dabench` beside the repository (its README says where it
comes from). What is computed here:

- **The subset** (`docs/eval.md` names it): for each level (easy, medium, hard), the level's question ids
  ordered by the sha256 of `"{SEED}:{id}"` (hex), the first 20 of them. It is deterministic, needs no
  random-number generator, and any language reproduces it. `SUBSET` below is its result on the published
  validation split; `tasks` checks at run time that the data still gives it.
- **The task text**: the question as the benchmark sends it (`Question: {question}\\n{constraints}`), its
  `format` text, and where to put the answer (a kernel variable per `@name`, and the `@name[value]` lines in
  the report).
- **The score**, as `examples/DA-Agent/eval_closed_form.py` computes it: every `@name[value]` of the response
  (regex `@(\\w+)\\[(.*?)\\]`, the last one of a name counts), a sub-answer right when the strings are equal or
  both parse as floats within 1e-6. The response is the run's final report: the markdown cells the run wrote
  in its last stage (the model's thinking and the
  notebook's title, which repeats the task, excluded).

Commands (JSON on stdout):

    python scripts/dabench.py subset [--markdown]   the subset's ids by level
    python scripts/dabench.py tasks                 the selected questions (BCC_EVAL_SET, BCC_EVAL_IDS, ...)
    python scripts/dabench.py score < run.json      one run scored: {"id", "notebook", "kernel"} in
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LEVELS = ("easy", "medium", "hard")
SEED = "notebook-bcc-issue-40"
PER_LEVEL = 20
ANSWER = re.compile(r"@(\w+)\[(.*?)\]")
# What the run's cells carry (src/notebook/metadata.ts): stage, step, behavior and role of each cell it wrote.
CELL_METADATA_KEY = "notebook_bcc"
# The notebook's title echoes the task (and its `@name[…]` placeholders); thinking is the model's draft.
NOT_REPORT_ROLES = {"thinking", "title"}
REPORT_CHARS = 8000

SUBSET: dict[str, list[int]] = {
    "easy": [9, 24, 25, 33, 57, 59, 71, 123, 216, 255, 351, 359, 409, 472, 474, 492, 516, 715, 729, 737],
    "medium": [11, 27, 66, 69, 105, 117, 180, 272, 338, 468, 528, 543, 552, 588, 663, 688, 730, 740, 741, 760],
    "hard": [70, 77, 125, 133, 249, 275, 310, 428, 429, 452, 453, 480, 496, 523, 530, 574, 575, 590, 726, 733],
}


class DataError(RuntimeError):
    """The benchmark's files are missing or not the published ones."""


def data_dir() -> Path:
    configured = os.environ.get("BCC_DABENCH_DIR")
    return Path(configured).resolve() if configured else (REPO.parent / "shared" / "dabench").resolve()


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DataError(
            f"{path} not found: set BCC_DABENCH_DIR to the folder of InfiAgent-DABench's da-dev-questions.jsonl, "
            "da-dev-labels.jsonl and da-dev-tables/"
        )
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def questions(folder: Path) -> dict[int, dict[str, Any]]:
    return {int(q["id"]): q for q in read_jsonl(folder / "da-dev-questions.jsonl")}


def labels(folder: Path) -> dict[int, dict[str, str]]:
    return {
        int(label["id"]): {str(name): str(value) for name, value in label["common_answers"]}
        for label in read_jsonl(folder / "da-dev-labels.jsonl")
    }


def subset_rank(question_id: int) -> str:
    return hashlib.sha256(f"{SEED}:{question_id}".encode()).hexdigest()


def choose_subset(all_questions: Mapping[int, Mapping[str, Any]], per_level: int = PER_LEVEL) -> dict[str, list[int]]:
    """For each level, the first `per_level` ids by `subset_rank`, in ascending order."""
    chosen: dict[str, list[int]] = {}
    for level in LEVELS:
        ids = [i for i, q in all_questions.items() if q["level"] == level]
        if len(ids) < per_level:
            raise DataError(f"only {len(ids)} {level} questions, {per_level} wanted")
        chosen[level] = sorted(sorted(ids, key=subset_rank)[:per_level])
    return chosen


def interleaved(by_level: Mapping[str, Sequence[int]]) -> list[int]:
    """easy, medium, hard, easy, …: a run cut short has every level alike."""
    ordered: list[int] = []
    longest = max((len(ids) for ids in by_level.values()), default=0)
    for index in range(longest):
        ordered += [by_level[level][index] for level in LEVELS if index < len(by_level.get(level, []))]
    return ordered


def answer_names(text: str) -> list[str]:
    """The `@name` of each `@name[…]` in `text`, once each, in order."""
    return list(dict.fromkeys(name for name, _ in ANSWER.findall(text)))


def task_text(question: Mapping[str, Any]) -> str:
    names = answer_names(str(question["format"]))
    variables = ", ".join(f"`{name}`" for name in names)
    return "\n".join(
        [
            f"Question: {question['question']}",
            str(question["constraints"]),
            str(question["format"]),
            "",
            f"Leave each answer in a kernel variable of its name ({variables}), and write the answers in the "
            "report, one line each, as @name[value].",
        ]
    )


def csv_list(value: str | None) -> list[str]:
    return [item.strip() for item in (value or "").split(",") if item.strip()]


def select(
    all_questions: Mapping[int, Mapping[str, Any]],
    which: str,
    ids: Sequence[str] = (),
    levels: Sequence[str] = (),
) -> list[int]:
    """The DABench ids of a selection: the subset (`dabench`, `all`), every question (`dabench-full`), or
    the ids given (any of the benchmark's), then only the levels given."""
    if ids:
        chosen = [int(i) for i in ids if i.isdigit()]
        unknown = [i for i in chosen if i not in all_questions]
        if unknown:
            raise DataError(f"no DABench question with id {', '.join(map(str, unknown))}")
    elif which in ("dabench", "all"):
        chosen = interleaved(SUBSET)
    elif which == "dabench-full":
        chosen = interleaved({lv: sorted(i for i, q in all_questions.items() if q["level"] == lv) for lv in LEVELS})
    else:
        chosen = []
    return [i for i in chosen if not levels or all_questions[i]["level"] in levels]


def tasks(folder: Path, environ: Mapping[str, str]) -> list[dict[str, Any]]:
    """The selected questions as the eval runs them: id, level, CSV path, task text, answer names, labels."""
    which = environ.get("BCC_EVAL_SET", "all")
    ids = csv_list(environ.get("BCC_EVAL_IDS"))
    levels = csv_list(environ.get("BCC_EVAL_LEVELS"))
    if which not in ("own", "dabench", "dabench-full", "all"):
        raise DataError(f"BCC_EVAL_SET={which}: choose own, dabench, dabench-full or all")
    unknown_levels = [level for level in levels if level not in LEVELS]
    if unknown_levels:
        raise DataError(f"BCC_EVAL_LEVELS: no level {', '.join(unknown_levels)} (easy, medium, hard)")
    if which == "own" or (ids and not any(i.isdigit() for i in ids)):
        return []
    all_questions = questions(folder)
    if which in ("dabench", "all") and not ids:
        computed = choose_subset(all_questions)
        if computed != SUBSET:
            raise DataError(f"the data in {folder} does not give the subset docs/eval.md names: {computed}")
    all_labels = labels(folder)
    selected = []
    for question_id in select(all_questions, which, ids, levels):
        question = all_questions[question_id]
        table = folder / "da-dev-tables" / str(question["file_name"])
        if not table.is_file():
            raise DataError(f"question {question_id}: its table {table} is missing")
        selected.append(
            {
                "set": "dabench",
                "id": str(question_id),
                "level": question["level"],
                "file": str(table),
                "fileName": question["file_name"],
                "task": task_text(question),
                "names": answer_names(str(question["format"])),
                "expected": all_labels[question_id],
            }
        )
    return selected


# --- scoring ---


def is_equal(response: str | None, label: str) -> bool:
    """The benchmark's comparison: the same string, or both floats within 1e-6."""
    if response == label:
        return True
    try:
        return abs(float(response) - float(label)) < 1e-6  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def extract(text: str) -> dict[str, str]:
    """Every `@name[value]` of `text`; a name given twice keeps its last value (as the benchmark's dict)."""
    return dict(ANSWER.findall(text))


def cell_source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def final_report(notebook: Mapping[str, Any]) -> str:
    """The markdown the run wrote in its last stage: the cells whose provenance names the stage of the last
    cell the run wrote, the model's thinking and the notebook's title (the task) excluded."""
    cells = [c for c in notebook.get("cells", []) if isinstance(c, dict)]
    made = [(c, c.get("metadata", {}).get(CELL_METADATA_KEY)) for c in cells]
    made = [(c, m) for c, m in made if isinstance(m, dict) and m.get("stage_id")]
    if not made:
        return ""
    last_stage = made[-1][1]["stage_id"]
    return "\n\n".join(
        cell_source(c)
        for c, m in made
        if m["stage_id"] == last_stage and c.get("cell_type") == "markdown" and m.get("role") not in NOT_REPORT_ROLES
    )


def score(expected: Mapping[str, str], report: str, kernel: Mapping[str, Mapping[str, Any] | None]) -> dict[str, Any]:
    """One question scored from its report, with the kernel's variables of the same names beside it."""
    got = extract(report)
    answers = []
    for name, label in expected.items():
        variable = kernel.get(name)
        kernel_value = None if variable is None else variable.get("value")
        answers.append(
            {
                "name": name,
                "expected": label,
                "got": got.get(name),
                "right": is_equal(got.get(name), label),
                "kernel": kernel_value,
                "kernelType": None if variable is None else variable.get("type"),
                "kernelRight": is_equal(None if kernel_value is None else str(kernel_value), label),
            }
        )
    right = sum(bool(answer["right"]) for answer in answers)
    return {
        "answers": answers,
        "allRight": bool(answers) and right == len(answers),
        "fraction": right / len(answers) if answers else 0.0,
        "report": report[:REPORT_CHARS],
    }


def score_run(run: Mapping[str, Any], folder: Path) -> dict[str, Any]:
    expected = labels(folder)[int(run["id"])]
    notebook = json.loads(Path(run["notebook"]).read_text(encoding="utf-8"))
    return score(expected, final_report(notebook), run.get("kernel") or {})


def subset_markdown(chosen: Mapping[str, Sequence[int]]) -> str:
    return "\n".join(f"- {level} ({len(ids)}): {', '.join(map(str, ids))}" for level, ids in chosen.items())


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["subset", "tasks", "score"])
    parser.add_argument("--markdown", action="store_true", help="subset: as the list of docs/eval.md")
    args = parser.parse_args(list(argv) if argv is not None else None)
    folder = data_dir()
    try:
        if args.command == "subset":
            chosen = choose_subset(questions(folder))
            print(subset_markdown(chosen) if args.markdown else json.dumps(chosen))
        elif args.command == "tasks":
            print(json.dumps(tasks(folder, os.environ)))
        else:
            print(json.dumps(score_run(json.load(sys.stdin), folder)))
    except DataError as error:
        print(f"dabench.py: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
