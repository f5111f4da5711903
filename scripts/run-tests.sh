#!/usr/bin/env bash
# Runs every suite (lint, unit, packaging, ui), keeps going after a failure, and ends with one line:
# "N passed, N failed" over all suites. Exits non-zero if anything failed.
set -uo pipefail
cd "$(dirname "$0")/.."
RESULTS=.test-results
rm -rf "$RESULTS" && mkdir -p "$RESULTS"
passed=0
failed=0
declare -a summary

record() { # suite passed failed
  passed=$((passed + $2))
  failed=$((failed + $3))
  summary+=("$(printf '%-10s %4d passed, %4d failed' "$1" "$2" "$3")")
}

check() { # suite label command...
  local suite=$1 label=$2
  shift 2
  echo "::: $suite: $label"
  if "$@"; then record "$suite" 1 0; else echo "!!! $suite: $label failed"; record "$suite" 0 1; fi
}

# Lint: each linter is one check.
check lint stylelint jlpm stylelint:check
check lint prettier jlpm prettier:check
check lint eslint jlpm eslint:check
check lint typecheck jlpm typecheck

# Unit: jest writes its counts as JSON; a suite that fails to load counts as a failure.
echo "::: unit: jest"
jlpm test --ci --json --outputFile="$RESULTS/jest.json"
if [ -f "$RESULTS/jest.json" ]; then
  read -r jp jf < <(node -e '
    const r = require(process.argv[1]);
    const broken = r.testResults.filter(s => s.status === "failed" && s.assertionResults.length === 0).length;
    console.log(r.numPassedTests, r.numFailedTests + broken + r.numPendingTests + r.numTodoTests);
  ' "$PWD/$RESULTS/jest.json")
  if [ -n "${jp:-}" ] && [ -n "${jf:-}" ]; then record unit "$jp" "$jf"; else record unit 0 1; fi
else
  record unit 0 1
fi

# Packaging: the labextension is enabled in the venv and the wheel carries it.
check package "labextension enabled" bash -c \
  'jupyter labextension list 2>&1 | tee /dev/stderr | grep -E "jupyterlab-notebook-bcc v[0-9.]+ .*enabled.*OK"'
check package "wheel contains labextension" bash -c '
  rm -rf dist && python -m build --wheel --no-isolation --outdir dist . >'"$RESULTS"'/wheel.log 2>&1 &&
  python - <<PY
import glob, sys, zipfile
wheel = glob.glob("dist/*.whl")[0]
names = zipfile.ZipFile(wheel).namelist()
prefix = "jupyterlab_notebook_bcc-0.1.0.data/data/share/jupyter/labextensions/jupyterlab-notebook-bcc/"
need = [prefix + "package.json", prefix + "install.json", prefix + "schemas/jupyterlab-notebook-bcc/plugin.json"]
missing = [n for n in need if n not in names]
static = [n for n in names if n.startswith(prefix + "static/") and n.endswith(".js")]
print(wheel, len(names), "files,", len(static), "static js")
sys.exit(1 if missing or not static else 0)
PY'

# Benchmarks at a small scale: proves they run (the figures are not judged here; see `make bench`).
check bench "bench-short runs" make --no-print-directory bench-short

# UI: galata in Chromium against a real JupyterLab; Playwright writes its counts as JSON.
echo "::: ui: playwright"
(cd ui-tests && npx playwright test)
if [ -f ui-tests/test-results/results.json ]; then
  read -r up uf < <(node -e '
    const s = require(process.argv[1]).stats;
    console.log(s.expected + s.flaky, s.unexpected + s.skipped);
  ' "$PWD/ui-tests/test-results/results.json")
  if [ -n "${up:-}" ] && [ -n "${uf:-}" ]; then record ui "$up" "$uf"; else record ui 0 1; fi
else
  record ui 0 1
fi

echo
echo "Test summary"
printf '  %s\n' "${summary[@]}"
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
