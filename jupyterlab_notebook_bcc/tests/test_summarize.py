"""The test gate: `scripts/summarize.py` on canned runner reports, and `scripts/run-tests.sh` end to end with
stand-ins for jest, pytest and Playwright that hand it those reports (in a copy of the scripts in a
temporary folder: the real test results are never touched)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
HOUR = 3600.0
# Canned reports are written before the gate starts its runner: dated a little ahead, they read as that run's.
AHEAD = 60.0


def jest_report(passed: int = 3, failed: int = 0, **overrides: Any) -> dict[str, Any]:
    assertions = [{"status": "passed", "fullName": f"passes {n}"} for n in range(passed)]
    assertions += [{"status": "failed", "fullName": f"fails {n}"} for n in range(failed)]
    report: dict[str, Any] = {
        "success": failed == 0,
        "startTime": (time.time() + AHEAD) * 1000,
        "numTotalTests": passed + failed,
        "numPassedTests": passed,
        "numFailedTests": failed,
        "numPendingTests": 0,
        "numTodoTests": 0,
        "numRuntimeErrorTestSuites": 0,
        "testResults": [
            {"name": "/repo/src/a.spec.ts", "status": "failed" if failed else "passed", "assertionResults": assertions}
        ],
    }
    report.update(overrides)
    return report


def playwright_report(expected: int = 2, **overrides: Any) -> dict[str, Any]:
    tests = [
        {
            "title": f"case {n}",
            "file": "tests/a.spec.ts",
            "line": 10 + n,
            "ok": True,
            "tests": [{"projectName": "chromium", "status": "expected", "results": [{"status": "passed"}]}],
        }
        for n in range(expected)
    ]
    report: dict[str, Any] = {
        "stats": {
            "startTime": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() + AHEAD)),
            "expected": expected,
            "unexpected": 0,
            "flaky": 0,
            "skipped": 0,
        },
        "errors": [],
        "suites": [{"title": "a.spec.ts", "file": "tests/a.spec.ts", "specs": tests, "suites": []}],
    }
    report.update(overrides)
    return report


def junit(passed: int = 2, failures: int = 0, skipped: int = 0) -> str:
    cases = [f'<testcase classname="t.TestA" name="test_{n}"/>' for n in range(passed)]
    cases += [f'<testcase classname="t.TestB" name="test_f{n}"><failure message="no"/></testcase>' for n in range(failures)]
    cases += [f'<testcase classname="t.TestC" name="test_s{n}"><skipped message="later"/></testcase>' for n in range(skipped)]
    total = passed + failures + skipped
    return (
        f'<?xml version="1.0"?><testsuites><testsuite name="pytest" tests="{total}" failures="{failures}" '
        f'errors="0" skipped="{skipped}">{"".join(cases)}</testsuite></testsuites>'
    )


def summarize(tmp_path: Path, kind: str, report: Any, status: int = 0, since: float | None = None) -> tuple[str, list[str]]:
    """Runs the summarizer as run-tests.sh does; returns its line and the tests it listed as not passed."""
    path = tmp_path / ("report.xml" if kind == "pytest" else "report.json")
    path.write_text(report if isinstance(report, str) else json.dumps(report), encoding="utf-8")
    failed = tmp_path / "failed.txt"
    args = [sys.executable, str(SCRIPTS / "summarize.py"), kind, str(path), "--status", str(status)]
    args += ["--failed", str(failed), "--root", "/repo"]
    if since is not None:
        args += ["--since", str(since)]
    line = subprocess.run(args, capture_output=True, text=True, check=True).stdout.strip()
    listed = failed.read_text(encoding="utf-8").splitlines() if failed.exists() else []
    return line, listed


class TestSummarizer:
    def test_a_green_jest_run(self, tmp_path: Path) -> None:
        assert summarize(tmp_path, "jest", jest_report(passed=3), since=time.time() - 5) == ("3 0 0", [])

    def test_failed_tests_are_counted_and_named(self, tmp_path: Path) -> None:
        line, listed = summarize(tmp_path, "jest", jest_report(passed=2, failed=1), status=1)
        assert line == "2 1 0"
        assert listed == ["failed: src/a.spec.ts > fails 0"]

    def test_a_playwright_report_with_errors_and_zero_stats_is_a_failure_naming_the_error(self, tmp_path: Path) -> None:
        report = playwright_report(expected=0)
        report["errors"] = [{"message": "\x1b[31mError: Timed out waiting 120000ms from config.webServer.\x1b[39m\n  at x"}]
        assert summarize(tmp_path, "playwright", report, status=1) == (
            "0 0 1 Error: Timed out waiting 120000ms from config.webServer.; no test ran",
            [],
        )

    def test_errors_besides_passing_tests_still_fail_the_suite(self, tmp_path: Path) -> None:
        report = playwright_report(expected=2)
        report["errors"] = [{"value": "Error: tests/b.spec.ts did not import"}]
        assert summarize(tmp_path, "playwright", report, status=1)[0] == "2 0 1 Error: tests/b.spec.ts did not import"

    @pytest.mark.parametrize("kind", ["jest", "pytest", "playwright"])
    def test_a_non_zero_exit_with_zero_failures_is_one_failure(self, tmp_path: Path, kind: str) -> None:
        report: Any = {"jest": jest_report(passed=4), "pytest": junit(passed=4), "playwright": playwright_report(4)}[kind]
        line, _ = summarize(tmp_path, kind, report, status=1)
        assert line == "4 0 1 exited with status 1 although no test failed"

    def test_a_jest_suite_that_fails_outside_its_tests_says_where(self, tmp_path: Path) -> None:
        report = jest_report(passed=2, success=False)
        report["testResults"].append(
            {"name": "/repo/src/b.spec.ts", "status": "failed", "message": "● b\n\n  afterAll hook: boom", "assertionResults": []}
        )
        assert summarize(tmp_path, "jest", report, status=1)[0] == "2 0 1 src/b.spec.ts failed outside its tests: afterAll hook: boom"

    def test_a_report_older_than_the_run_is_stale(self, tmp_path: Path) -> None:
        report = jest_report(passed=3, startTime=(time.time() - 2 * HOUR) * 1000)
        line, _ = summarize(tmp_path, "jest", report, since=time.time() - 60)
        assert line.startswith("3 0 1 its report is stale (from ")
        assert line.endswith(", before this run started)")

    def test_a_report_file_left_from_before_the_run_is_stale(self, tmp_path: Path) -> None:
        path = tmp_path / "report.xml"
        path.write_text(junit(passed=2), encoding="utf-8")
        os.utime(path, (time.time() - HOUR, time.time() - HOUR))
        line = subprocess.run(
            [sys.executable, str(SCRIPTS / "summarize.py"), "pytest", str(path), "--status", "0", "--since", str(time.time())],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        assert line.startswith("2 0 1 its report is stale")

    def test_a_playwright_test_that_did_not_run_counts_as_failed_and_is_named(self, tmp_path: Path) -> None:
        report = playwright_report(expected=2)
        # Interrupted before it started (max failures, a crashed worker): Playwright reports it "skipped"
        # with no result, and its stats may not count it.
        report["suites"][0]["specs"].append(
            {
                "title": "never started",
                "file": "tests/a.spec.ts",
                "line": 40,
                "ok": False,
                "tests": [{"projectName": "chromium", "status": "skipped", "results": []}],
            }
        )
        line, listed = summarize(tmp_path, "playwright", report)
        assert line == "2 1 0 1 skipped or not run (each counted as failed)"
        assert listed == ["did not run: [chromium] tests/a.spec.ts:40 > never started"]

    def test_a_jest_test_that_did_not_run_counts_as_failed(self, tmp_path: Path) -> None:
        report = jest_report(passed=2)
        report["testResults"][0]["assertionResults"].append({"status": "pending", "fullName": "later"})
        line, listed = summarize(tmp_path, "jest", report)
        assert line == "2 1 0 1 skipped, todo or not run (each counted as failed)"
        assert listed == ["pending: src/a.spec.ts > later"]

    def test_a_skipped_pytest_test_counts_as_failed(self, tmp_path: Path) -> None:
        line, listed = summarize(tmp_path, "pytest", junit(passed=2, failures=1, skipped=1), status=1)
        assert line == "2 2 0 1 skipped (each counted as failed)"
        assert listed == ["failure: t.TestB::test_f0", "skipped: t.TestC::test_s0"]

    @pytest.mark.parametrize("kind", ["jest", "pytest", "playwright"])
    def test_a_report_where_no_test_ran_is_a_failure(self, tmp_path: Path, kind: str) -> None:
        report: Any = {"jest": jest_report(passed=0), "pytest": junit(passed=0), "playwright": playwright_report(0)}[kind]
        assert summarize(tmp_path, kind, report)[0] == "0 0 1 no test ran"

    @pytest.mark.parametrize("kind", ["jest", "pytest", "playwright"])
    def test_an_unreadable_report_is_a_failure_of_the_suite(self, tmp_path: Path, kind: str) -> None:
        line, _ = summarize(tmp_path, kind, '{"stats": ')
        assert line.startswith("0 0 1 its report ")
        assert "could not be read" in line


# --- run-tests.sh end to end ------------------------------------------------------------------------


def executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def gate(tmp_path: Path) -> Any:
    """A copy of run-tests.sh and summarize.py, with stand-ins for jlpm (jest), python -m pytest and npx
    (Playwright) that copy the report named by an environment variable and exit with a given status."""
    repo = tmp_path / "repo"
    (repo / "scripts").mkdir(parents=True)
    (repo / "ui-tests").mkdir()
    for name in ("run-tests.sh", "summarize.py"):
        shutil.copy(SCRIPTS / name, repo / "scripts" / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    executable(
        bin_dir / "jlpm",
        '#!/usr/bin/env bash\n[ "$1" = test ] || exit 0\n'
        'for a in "$@"; do case $a in --outputFile=*) out=${a#--outputFile=};; esac; done\n'
        '[ -n "${JEST_REPORT:-}" ] && cp "$JEST_REPORT" "$out"\nexit "${JEST_STATUS:-0}"\n',
    )
    executable(
        bin_dir / "python",
        '#!/usr/bin/env bash\n[ "$1" = -c ] && exit 0\n'
        'for a in "$@"; do case $a in --junitxml=*) out=${a#--junitxml=};; esac; done\n'
        '[ -n "${PYTEST_REPORT:-}" ] && cp "$PYTEST_REPORT" "$out"\nexit "${PYTEST_STATUS:-0}"\n',
    )
    executable(
        bin_dir / "npx",
        '#!/usr/bin/env bash\nmkdir -p test-results\n'
        '[ -n "${UI_REPORT:-}" ] && cp "$UI_REPORT" test-results/results.json\nexit "${UI_STATUS:-0}"\n',
    )
    executable(bin_dir / "make", "#!/usr/bin/env bash\nexit 0\n")
    python_dir = Path(sys.executable).parent

    def run(*suites: str, **reports: Any) -> tuple[int, list[str]]:
        env = {**os.environ, "PATH": f"{bin_dir}:{python_dir}:{os.environ['PATH']}"}
        for name, value in reports.items():
            if name.endswith("_STATUS"):
                env[name] = str(value)
                continue
            path = tmp_path / f"{name}.{'xml' if name == 'PYTEST_REPORT' else 'json'}"
            path.write_text(value if isinstance(value, str) else json.dumps(value), encoding="utf-8")
            env[name] = str(path)
        done = subprocess.run(
            ["bash", str(repo / "scripts" / "run-tests.sh"), *suites], capture_output=True, text=True, env=env, timeout=60
        )
        return done.returncode, done.stdout.splitlines()

    return run


class TestRunTests:
    def test_all_green_is_the_sum_of_the_suites(self, gate: Any) -> None:
        status, out = gate(
            "unit", "pytest", "ui", JEST_REPORT=jest_report(3), PYTEST_REPORT=junit(2), UI_REPORT=playwright_report(4)
        )
        assert out[-1] == "9 passed, 0 failed"
        assert status == 0

    def test_a_playwright_report_with_only_errors_fails_the_gate_and_says_why(self, gate: Any) -> None:
        ui = playwright_report(expected=0, errors=[{"message": "Error: the web server did not start"}])
        status, out = gate("unit", "ui", JEST_REPORT=jest_report(3), UI_REPORT=ui, UI_STATUS=1)
        assert out[-1] == "3 passed, 1 failed"
        assert "  ui: Error: the web server did not start; no test ran" in out
        assert status == 1

    def test_a_non_zero_exit_with_zero_failures_fails_the_gate(self, gate: Any) -> None:
        status, out = gate("unit", JEST_REPORT=jest_report(5), JEST_STATUS=1)
        assert out[-1] == "5 passed, 1 failed"
        assert "  unit: exited with status 1 although no test failed" in out
        assert status == 1

    def test_a_stale_report_fails_the_gate(self, gate: Any) -> None:
        stale = jest_report(5, startTime=(time.time() - HOUR) * 1000)
        status, out = gate("unit", JEST_REPORT=stale)
        assert out[-1] == "5 passed, 1 failed"
        assert any(line.startswith("  unit: its report is stale") for line in out)
        assert status == 1

    def test_a_test_that_did_not_run_is_a_failure_named_in_the_summary(self, gate: Any) -> None:
        ui = playwright_report(expected=1)
        ui["suites"][0]["specs"].append(
            {
                "title": "never started",
                "file": "tests/b.spec.ts",
                "line": 7,
                "ok": False,
                "tests": [{"projectName": "chromium", "status": "skipped", "results": []}],
            }
        )
        status, out = gate("pytest", "ui", PYTEST_REPORT=junit(2, failures=1), PYTEST_STATUS=1, UI_REPORT=ui)
        assert out[-1] == "3 passed, 2 failed"
        assert "  did not run: [chromium] tests/b.spec.ts:7 > never started" in out
        assert "  failure: t.TestB::test_f0" in out
        assert status == 1

    def test_a_runner_that_writes_no_report_is_a_failure(self, gate: Any) -> None:
        status, out = gate("unit", "pytest", PYTEST_REPORT=junit(2), JEST_STATUS=1)
        assert out[-1] == "2 passed, 1 failed"
        assert "  unit: jest wrote no report (exit status 1)" in out
        assert status == 1
