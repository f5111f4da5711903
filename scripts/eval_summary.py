"""`make eval`'s table: reads the per-question results (one JSON line each, `ui-tests/eval-results/eval.jsonl`)
and prints, per level (the project's own set, DABench's easy, medium, hard, and DABench in all): questions,
ABQ (every sub-answer right), PSAQ (the share of each question's sub-answers right, averaged), UASQ (the share
of all sub-answers right), and tokens and seconds per question.

    python scripts/eval_summary.py [RESULTS] [--markdown FILE] [--json FILE]

`--markdown` writes the same table as Markdown (for docs/eval.md's results section).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "ui-tests" / "eval-results" / "eval.jsonl"
GROUPS = ("own", "easy", "medium", "hard")
DABENCH = "DABench"


def read(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def latest(rows: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """One row per question (set and id): a question run again (a resumed run) counts once, its last run."""
    by_question: dict[tuple[str, str], Mapping[str, Any]] = {}
    for row in rows:
        by_question[(str(row["set"]), str(row["id"]))] = row
    return list(by_question.values())


def group_row(group: str, rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    answers = [answer for row in rows for answer in row["answers"]]
    count = len(rows)
    return {
        "group": group,
        "questions": count,
        "subAnswers": len(answers),
        "abq": sum(bool(row["allRight"]) for row in rows) / count,
        "psaq": sum(float(row["fraction"]) for row in rows) / count,
        "uasq": sum(bool(a["right"]) for a in answers) / len(answers) if answers else 0.0,
        "completed": sum(row.get("state") == "WORKFLOW_COMPLETED" for row in rows) / count,
        "promptTokens": sum(int(row.get("promptTokens") or 0) for row in rows) / count,
        "completionTokens": sum(int(row.get("completionTokens") or 0) for row in rows) / count,
        "seconds": sum(float(row.get("seconds") or 0) for row in rows) / count,
        "estimated": any(row.get("tokensEstimated") for row in rows),
    }


def table(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A row per group that has results, then DABench in all."""
    kept = latest(rows)
    out = [group_row(g, [r for r in kept if r["level"] == g]) for g in GROUPS if any(r["level"] == g for r in kept)]
    dabench = [r for r in kept if r["set"] == "dabench"]
    if dabench:
        out.append(group_row(DABENCH, dabench))
    return out


def percent(value: float) -> str:
    return f"{100 * value:.0f} %"


COLUMNS = ("set", "questions", "ABQ", "PSAQ", "UASQ", "completed", "prompt tok.", "compl. tok.", "seconds")


def cells(row: Mapping[str, Any]) -> list[str]:
    return [
        row["group"],
        str(row["questions"]),
        percent(row["abq"]),
        percent(row["psaq"]),
        percent(row["uasq"]),
        percent(row["completed"]),
        f"{row['promptTokens']:,.0f}",
        f"{row['completionTokens']:,.0f}",
        f"{row['seconds']:,.0f}",
    ]


def about(rows: Sequence[Mapping[str, Any]]) -> str:
    models = sorted({str(r.get("model")) for r in rows})
    commits = sorted({str(r.get("commit")) for r in rows})
    hours = sum(float(r.get("seconds") or 0) for r in rows) / 3600
    estimated = any(r.get("tokensEstimated") for r in rows)
    note = "; tokens estimated (the endpoint sent no counts)" if estimated else ""
    return (
        f"model {', '.join(models)}; commit {', '.join(commits)}; {len(latest(rows))} questions in {hours:.1f} h; "
        f"tokens and seconds are per question{note}"
    )


def text(rows_table: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]) -> str:
    lines = [[*COLUMNS], *[cells(row) for row in rows_table]]
    widths = [max(len(line[i]) for line in lines) for i in range(len(COLUMNS))]
    rendered = [
        "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(line, widths))) for line in lines
    ]
    return "\n".join([*rendered, about(rows)])


def markdown(rows_table: Sequence[Mapping[str, Any]], rows: Sequence[Mapping[str, Any]]) -> str:
    head = "| " + " | ".join(COLUMNS) + " |"
    rule = "|" + "|".join(["---", *["---:"] * (len(COLUMNS) - 1)]) + "|"
    body = ["| " + " | ".join(cells(row)) + " |" for row in rows_table]
    return "\n".join([head, rule, *body, "", about(rows), ""])


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", nargs="?", type=Path, default=RESULTS)
    parser.add_argument("--markdown", type=Path, help="also write the table as Markdown to this file")
    parser.add_argument("--json", type=Path, help="also write the table and the results as JSON to this file")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not args.results.is_file():
        print(f"eval_summary.py: no results at {args.results}", file=sys.stderr)
        return 1
    rows = read(args.results)
    if not rows:
        print(f"eval_summary.py: {args.results} holds no result yet", file=sys.stderr)
        return 1
    rows_table = table(rows)
    print(text(rows_table, rows))
    if args.markdown:
        args.markdown.write_text(markdown(rows_table, rows), encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps({"table": rows_table, "results": latest(rows)}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
