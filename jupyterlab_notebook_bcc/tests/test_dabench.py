"""`scripts/dabench.py` (`make eval`'s InfiAgent-DABench part) and `scripts/eval_summary.py`, on a small
benchmark made here in the benchmark's file layout: the subset rule, the selection, the task text, the
official scoring over the run's final report, and the table per level. No DABench data is used or copied."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, REPO / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


dabench = load("dabench")
summary = load("eval_summary")


def make_benchmark(folder: Path, per_level: int = 25) -> dict[int, dict[str, Any]]:
    """`per_level` questions of each level, ids 0, 3, 6, …, each on its own small table."""
    (folder / "da-dev-tables").mkdir(parents=True)
    made: dict[int, dict[str, Any]] = {}
    with (folder / "da-dev-questions.jsonl").open("w") as qs, (folder / "da-dev-labels.jsonl").open("w") as ls:
        for n in range(3 * per_level):
            qid = 3 * n
            question = {
                "id": qid,
                "question": f"What is the mean of x in table {qid}?",
                "concepts": ["Summary Statistics"],
                "constraints": "Round to two decimal places.",
                "format": "@mean_x[value] where value is a number, and @label[name].",
                "file_name": f"t{qid}.csv",
                "level": dabench.LEVELS[n % 3],
            }
            made[qid] = question
            qs.write(json.dumps(question) + "\n")
            ls.write(json.dumps({"id": qid, "common_answers": [["mean_x", "1.50"], ["label", "north"]]}) + "\n")
            (folder / "da-dev-tables" / f"t{qid}.csv").write_text("x\n1\n2\n")
    return made


def test_the_subset_rule_is_the_documented_hash_order(tmp_path: Path) -> None:
    made = make_benchmark(tmp_path)
    chosen = dabench.choose_subset(made, per_level=5)
    assert list(chosen) == ["easy", "medium", "hard"]
    for level, ids in chosen.items():
        of_level = [i for i, q in made.items() if q["level"] == level]
        # The rule, restated: the level's ids by sha256("SEED:id"), the first five, then ascending.
        import hashlib

        by_hash = sorted(of_level, key=lambda i: hashlib.sha256(f"{dabench.SEED}:{i}".encode()).hexdigest())
        assert ids == sorted(by_hash[:5])
    assert dabench.choose_subset(made, per_level=5) == chosen
    with pytest.raises(dabench.DataError, match="only 25 easy questions, 26 wanted"):
        dabench.choose_subset(made, per_level=26)


def test_docs_eval_md_names_the_subset_the_code_runs() -> None:
    docs = (REPO / "docs" / "eval.md").read_text(encoding="utf-8")
    for level, ids in dabench.SUBSET.items():
        assert len(ids) == dabench.PER_LEVEL == 20
        assert f"- {level} (20): {', '.join(map(str, ids))}" in docs
    assert dabench.SEED in docs


def test_a_run_cut_short_has_every_level_alike() -> None:
    assert dabench.interleaved({"easy": [1, 4], "medium": [2, 5], "hard": [3]}) == [1, 2, 3, 4, 5]


def test_the_task_is_the_benchmark_question_and_where_to_put_the_answer() -> None:
    text = dabench.task_text({"question": "Q?", "constraints": "C.", "format": "@a[x], @b_2[y] and @a[again]"})
    assert text.startswith("Question: Q?\nC.\n@a[x], @b_2[y] and @a[again]\n")
    assert "kernel variable of its name (`a`, `b_2`)" in text
    assert "as @name[value]" in text


def test_selection_by_set_ids_and_levels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    made = make_benchmark(tmp_path)
    monkeypatch.setattr(dabench, "SUBSET", dabench.choose_subset(made))
    env = {"BCC_EVAL_SET": "dabench"}
    selected = dabench.tasks(tmp_path, env)
    assert len(selected) == 60
    assert [t["level"] for t in selected[:3]] == ["easy", "medium", "hard"]
    first = selected[0]
    assert first["set"] == "dabench"
    assert first["file"] == str(tmp_path / "da-dev-tables" / made[int(first["id"])]["file_name"])
    assert first["names"] == ["mean_x", "label"]
    assert first["expected"] == {"mean_x": "1.50", "label": "north"}
    assert first["task"] == dabench.task_text(made[int(first["id"])])
    assert {t["level"] for t in dabench.tasks(tmp_path, {**env, "BCC_EVAL_LEVELS": "hard"})} == {"hard"}
    assert len(dabench.tasks(tmp_path, {"BCC_EVAL_SET": "dabench-full"})) == 75
    assert dabench.tasks(tmp_path, {"BCC_EVAL_SET": "own"}) == []
    # Ids pick any question of the benchmark, in the order given; own ids are not DABench's.
    assert [t["id"] for t in dabench.tasks(tmp_path, {"BCC_EVAL_IDS": "9, top_region,0"})] == ["9", "0"]
    assert dabench.tasks(tmp_path, {"BCC_EVAL_IDS": "top_region"}) == []
    with pytest.raises(dabench.DataError, match="no DABench question with id 1"):
        dabench.tasks(tmp_path, {"BCC_EVAL_IDS": "1"})
    with pytest.raises(dabench.DataError, match="BCC_EVAL_LEVELS: no level tricky"):
        dabench.tasks(tmp_path, {"BCC_EVAL_LEVELS": "tricky"})
    with pytest.raises(dabench.DataError, match="BCC_EVAL_SET=some"):
        dabench.tasks(tmp_path, {"BCC_EVAL_SET": "some"})


def test_other_data_than_the_published_split_is_refused_for_the_subset(tmp_path: Path) -> None:
    make_benchmark(tmp_path)
    with pytest.raises(dabench.DataError, match="does not give the subset docs/eval.md names"):
        dabench.tasks(tmp_path, {"BCC_EVAL_SET": "dabench"})


def test_missing_data_says_where_it_was_looked_for(tmp_path: Path) -> None:
    with pytest.raises(dabench.DataError, match=re.escape(f"{tmp_path}/da-dev-questions.jsonl not found")):
        dabench.tasks(tmp_path, {"BCC_EVAL_SET": "dabench"})


def test_the_official_comparison() -> None:
    assert dabench.is_equal("north", "north")
    assert not dabench.is_equal("North", "north")
    assert dabench.is_equal("1.5", "1.50")
    assert dabench.is_equal(" 1.5000001 ", "1.50")
    assert not dabench.is_equal("1.51", "1.50")
    # Rounding has to match: 1e-6, not the question's precision.
    assert not dabench.is_equal("1.504", "1.50")
    assert not dabench.is_equal(None, "1.50")
    assert dabench.is_equal("nan", "nan")
    assert not dabench.is_equal("nan", "NaN")
    assert dabench.is_equal("", "")


def notebook(*cells: tuple[str, str, dict[str, Any] | None]) -> dict[str, Any]:
    return {
        "cells": [
            {"cell_type": kind, "source": source, "metadata": {"notebook_bcc": meta} if meta else {}}
            for kind, source, meta in cells
        ]
    }


def made_by(stage: str, role: str = "content") -> dict[str, Any]:
    return {"stage_id": stage, "step_id": f"{stage}_step", "behavior_id": "b1", "action_index": 0, "role": role}


def test_the_report_is_the_markdown_of_the_runs_last_stage() -> None:
    nb = notebook(
        ("markdown", "The user's own note @mean_x[9]", None),
        ("markdown", "Plan: deliver @mean_x[mean_x_value]", made_by("plan")),
        ("code", "mean_x = 1.5", made_by("analysis", "code")),
        ("markdown", "## Findings", made_by("findings", "chapter")),
        ("markdown", "Thinking: maybe @mean_x[2]", made_by("findings", "thinking")),
        ("markdown", ["The mean is\n", "@mean_x[1.50]"], made_by("findings")),
        ("markdown", "@label[north]", made_by("findings")),
    )
    report = dabench.final_report(nb)
    assert "@mean_x[1.50]" in report and "@label[north]" in report
    assert "9]" not in report and "@mean_x[2]" not in report and "mean_x_value" not in report
    assert dabench.final_report(notebook(("markdown", "@a[1]", None))) == ""
    # A run that ended in its first stage: the notebook's title repeats the task and its placeholders.
    first = notebook(
        ("markdown", "# Question: … @mean_x[value]", made_by("data_loading", "title")),
        ("markdown", "Read `t0.csv`.", made_by("data_loading")),
    )
    assert dabench.final_report(first) == "Read `t0.csv`."


def test_a_question_is_scored_from_its_report_with_the_kernel_beside_it() -> None:
    expected = {"mean_x": "1.50", "label": "north"}
    scored = dabench.score(
        expected,
        "@mean_x[1.5]\n@label[South]\n",
        {"mean_x": {"type": "float", "value": "1.5"}, "label": {"type": "str", "value": "north"}},
    )
    assert scored["allRight"] is False
    assert scored["fraction"] == 0.5
    assert scored["answers"] == [
        {
            "name": "mean_x",
            "expected": "1.50",
            "got": "1.5",
            "right": True,
            "kernel": "1.5",
            "kernelType": "float",
            "kernelRight": True,
        },
        {
            "name": "label",
            "expected": "north",
            "got": "South",
            "right": False,
            "kernel": "north",
            "kernelType": "str",
            "kernelRight": True,
        },
    ]
    # The last value of a name counts; a missing name is wrong; a missing variable is null.
    scored = dabench.score(expected, "@mean_x[7] then @mean_x[1.50]", {})
    assert [a["got"] for a in scored["answers"]] == ["1.50", None]
    assert [a["kernel"] for a in scored["answers"]] == [None, None]


def record(set_: str, level: str, rights: list[bool], qid: str = "q", **extra: Any) -> dict[str, Any]:
    answers = [{"name": f"a{i}", "expected": "1", "got": "1" if r else "2", "right": r} for i, r in enumerate(rights)]
    base = {
        "set": set_,
        "id": qid,
        "level": level,
        "answers": answers,
        "allRight": all(rights),
        "fraction": sum(rights) / len(rights),
        "promptTokens": 1000,
        "completionTokens": 100,
        "tokensEstimated": True,
        "seconds": 60.0,
        "model": "m",
        "commit": "abc",
        "state": "WORKFLOW_COMPLETED",
        "panelState": "Completed",
    }
    return {**base, **extra}


def test_the_summary_per_level(tmp_path: Path) -> None:
    rows = [
        record("own", "own", [True], "top_region"),
        record("own", "own", [False], "row_count"),
        # Run again after a resume: only its last run counts.
        record("dabench", "easy", [False, False], "1"),
        record("dabench", "easy", [True, True], "1"),
        record("dabench", "easy", [True, False], "4", seconds=120.0),
        record("dabench", "hard", [False, False, True], "3", promptTokens=3000),
    ]
    table = summary.table(rows)
    by = {row["group"]: row for row in table}
    assert by["own"]["questions"] == 2 and by["own"]["abq"] == 0.5
    easy = by["easy"]
    assert (easy["abq"], easy["psaq"], easy["uasq"]) == (0.5, 0.75, 0.75)
    assert easy["seconds"] == 90.0 and easy["promptTokens"] == 1000
    hard = by["hard"]
    assert (hard["abq"], round(hard["psaq"], 4), round(hard["uasq"], 4)) == (0.0, 0.3333, 0.3333)
    total = by["DABench"]
    # UASQ counts sub-answers: 3 + 1 right of 2 + 2 + 3.
    assert (total["questions"], round(total["abq"], 4), round(total["uasq"], 4)) == (3, 0.3333, round(4 / 7, 4))
    assert "medium" not in by
    markdown = summary.markdown(table, rows)
    assert "| easy | 2 | 50 % | 75 % | 75 % |" in markdown
    assert "model m" in markdown and "commit abc" in markdown
    assert "estimated" in markdown


def test_the_summary_command_reads_the_results_and_writes_markdown(tmp_path: Path) -> None:
    results = tmp_path / "eval.jsonl"
    results.write_text("\n".join(json.dumps(r) for r in [record("dabench", "medium", [True])]) + "\n")
    out = tmp_path / "summary.md"
    assert summary.main([str(results), "--markdown", str(out)]) == 0
    assert "| medium | 1 | 100 % |" in out.read_text()
    assert summary.main([str(tmp_path / "none.jsonl")]) == 1
