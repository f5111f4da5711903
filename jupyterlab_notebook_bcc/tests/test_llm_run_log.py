"""The run log is JSON lines (#41): a last line cut by a crash does not swallow the record written after it,
so a restart still counts that record's tokens into the user's day."""

from __future__ import annotations

import json
from pathlib import Path

from jupyterlab_notebook_bcc.llm_planner import LLMPlanner
from jupyterlab_notebook_bcc.llm_planner.accounting import Accounting
from jupyterlab_notebook_bcc.llm_planner.model import Completion
from jupyterlab_notebook_bcc.llm_planner.sessions import Caller, Session

CUT = '{"user": "ada", "notebook": "a.ipynb", "model": "small", "tok'


def _run(accounting: Accounting, user: str, tokens: int) -> None:
    caller, session = Caller(user, "a.ipynb"), Session(model="small")
    accounting.started(caller, session)
    accounting.record(caller, session, None, Completion("x", tokens, 0, 1.0, "none"))
    accounting.ended(caller, "completed")


def test_a_line_cut_by_a_crash_does_not_swallow_the_next_record(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    log.write_text(json.dumps({"user": "cy", "end": "1970-01-01T00:00:00+00:00", "tokens": 5}) + "\n" + CUT)
    config = LLMPlanner(run_log=str(log))
    _run(Accounting(config), "bob", 700)
    lines = log.read_text().split("\n")
    assert lines[1] == CUT
    record = json.loads(lines[2])
    assert (record["user"], record["tokens"]) == ("bob", 700)
    # A restart counts bob's run into his day: the cut line is skipped, his record read.
    assert Accounting(config).used == {"bob": 700}


def test_a_whole_log_gets_no_blank_lines(tmp_path: Path) -> None:
    log = tmp_path / "runs.jsonl"
    config = LLMPlanner(run_log=str(log))
    accounting = Accounting(config)
    _run(accounting, "ada", 100)
    _run(accounting, "bob", 200)
    lines = log.read_text().split("\n")
    assert len(lines) == 3 and lines[2] == ""
    assert [json.loads(line)["user"] for line in lines[:2]] == ["ada", "bob"]
    assert Accounting(config).used == {"ada": 100, "bob": 200}
