#!/usr/bin/env python3
"""Reads one test runner's report for scripts/run-tests.sh and prints one line:

    PASSED FAILED EXTRA REASON...

PASSED and FAILED count tests (a skipped test, or one that did not run, counts as failed); EXTRA is 1 when
the suite failed as a whole (no test ran, a failure outside any test, an error the runner reported, a
non-zero exit with no failed test, a stale report), with REASON saying why. With --failed FILE, the tests
that did not pass are written there, one a line.

Usage: summarize.py {jest,pytest,playwright} REPORT --status N [--since EPOCH] [--failed FILE]

--status is the runner's exit status; --since the time (seconds since the epoch) just before the runner
started: a report written before it, or whose own start time is before it, is stale.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class Summary:
    passed: int = 0
    failed: int = 0
    # Reasons the suite failed as a whole (one failure more), then notes that do not add one.
    broken: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    not_passed: list[str] = field(default_factory=list)
    started: float | None = None  # the report's own start time, seconds since the epoch

    def line(self) -> str:
        extra = 1 if self.broken else 0
        reason = "; ".join(self.broken + self.notes)
        return f"{self.passed} {self.failed} {extra} {reason}".rstrip()


def first_line(text: str) -> str:
    lines = [line.strip() for line in ANSI.sub("", text).split("\n")]
    return next((line for line in lines if line and not line.startswith("●")), "no message")


def relative(path: str, root: str) -> str:
    return path[len(root) + 1 :] if path.startswith(root + "/") else path


def summarize_jest(report: dict[str, Any], root: str) -> Summary:
    summary = Summary(passed=int(report.get("numPassedTests", 0)), failed=int(report.get("numFailedTests", 0)))
    not_run = 0
    for suite in report.get("testResults", []):
        name = relative(str(suite.get("name", "")), root)
        assertions = suite.get("assertionResults", [])
        if suite.get("status") == "failed" and not any(a.get("status") == "failed" for a in assertions):
            text = suite.get("message") or suite.get("failureMessage") or ""
            summary.broken.append(f"{name} failed outside its tests: {first_line(text)}")
        for assertion in assertions:
            status = assertion.get("status")
            if status != "passed":
                summary.not_passed.append(f"{status}: {name} > {assertion.get('fullName', '')}")
            if status not in ("passed", "failed"):
                not_run += 1
    runtime_errors = int(report.get("numRuntimeErrorTestSuites", 0))
    if runtime_errors > 0 and not summary.broken:
        summary.broken.append(f"{runtime_errors} suite(s) failed to run")
    if int(report.get("numTotalTests", 0)) == 0:
        summary.broken.append("no test ran")
    if not report.get("success", False) and not summary.broken and summary.failed == 0:
        summary.broken.append("jest reports no success")
    skipped = max(int(report.get("numPendingTests", 0)) + int(report.get("numTodoTests", 0)), not_run)
    if skipped:
        summary.failed += skipped
        summary.notes.append(f"{skipped} skipped, todo or not run (each counted as failed)")
    if isinstance(report.get("startTime"), (int, float)):
        summary.started = report["startTime"] / 1000
    return summary


def summarize_pytest(root_element: ET.Element) -> Summary:
    suites = [root_element] if root_element.tag == "testsuite" else root_element.findall("testsuite")
    total = sum(int(s.get("tests", 0)) for s in suites)
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    summary = Summary(passed=total - bad - skipped, failed=bad + skipped)
    if total == 0:
        summary.broken.append("no test ran")
    if skipped:
        summary.notes.append(f"{skipped} skipped (each counted as failed)")
    for case in root_element.iter("testcase"):
        for kind in ("failure", "error", "skipped"):
            if case.find(kind) is not None:
                summary.not_passed.append(f"{kind}: {case.get('classname')}::{case.get('name')}")
    return summary


def summarize_playwright(report: dict[str, Any]) -> Summary:
    stats = report.get("stats", {})
    expected, unexpected = int(stats.get("expected", 0)), int(stats.get("unexpected", 0))
    flaky, skipped = int(stats.get("flaky", 0)), int(stats.get("skipped", 0))
    summary = Summary(passed=expected + flaky, failed=unexpected)
    for error in report.get("errors") or []:
        text = error.get("message") or error.get("value") or str(error) if isinstance(error, dict) else str(error)
        summary.broken.append(first_line(str(text)))
    not_run = 0

    def walk(suite: dict[str, Any], titles: list[str]) -> None:
        nonlocal not_run
        here = [*titles, suite["title"]] if suite.get("title") else titles
        for spec in suite.get("specs") or []:
            for test in spec.get("tests") or []:
                status = test.get("status") or ("expected" if spec.get("ok") else "unexpected")
                if status == "expected":
                    continue
                if status == "skipped" and not test.get("results"):
                    status = "did not run"
                if status in ("skipped", "did not run"):
                    not_run += 1
                path = " > ".join([*here[1:], str(spec.get("title", ""))])
                summary.not_passed.append(
                    f"{status}: [{test.get('projectName', '')}] {spec.get('file', '')}:{spec.get('line', '')} > {path}"
                )
        for child in suite.get("suites") or []:
            walk(child, here)

    for suite in report.get("suites") or []:
        walk(suite, [])
    if expected + unexpected + flaky == 0:
        summary.broken.append("no test ran")
    skipped = max(skipped, not_run)
    if skipped:
        summary.failed += skipped
        summary.notes.append(f"{skipped} skipped or not run (each counted as failed)")
    started = stats.get("startTime")
    if isinstance(started, str):
        try:
            summary.started = datetime.fromisoformat(started.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return summary


def summarize(kind: str, path: Path, status: int, since: float | None, root: str) -> Summary:
    try:
        if kind == "pytest":
            summary = summarize_pytest(ET.parse(path).getroot())
        else:
            report = json.loads(path.read_text(encoding="utf-8"))
            summary = summarize_jest(report, root) if kind == "jest" else summarize_playwright(report)
    except (OSError, ValueError, ET.ParseError, AttributeError, TypeError) as error:
        return Summary(broken=[f"its report {path} could not be read: {error}"])
    if since is not None:
        written = path.stat().st_mtime
        # A report from an earlier run: this run's tests did not write it. One second of slack for
        # file systems that keep whole seconds.
        if written < since - 1 or (summary.started is not None and summary.started < since - 1):
            when = datetime.fromtimestamp(min(written, summary.started or written)).isoformat(timespec="seconds")
            summary.broken.append(f"its report is stale (from {when}, before this run started)")
    if status != 0 and summary.failed == 0 and not summary.broken:
        summary.broken.append(f"exited with status {status} although no test failed")
    return summary


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kind", choices=("jest", "pytest", "playwright"))
    parser.add_argument("report", type=Path)
    parser.add_argument("--status", type=int, required=True, help="the runner's exit status")
    parser.add_argument("--since", type=float, help="seconds since the epoch when the runner started")
    parser.add_argument("--failed", type=Path, help="write the tests that did not pass here")
    parser.add_argument("--root", default=os.getcwd(), help="shown paths are relative to this folder")
    args = parser.parse_args(argv)
    summary = summarize(args.kind, args.report, args.status, args.since, args.root)
    if args.failed is not None:
        args.failed.write_text("".join(line + "\n" for line in summary.not_passed), encoding="utf-8")
    print(summary.line())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
