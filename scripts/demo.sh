#!/usr/bin/env bash
# The demo: the reference planner and JupyterLab (with the extension pointing at it) on the demo
# notebook. Ctrl-C stops both.
set -euo pipefail
cd "$(dirname "$0")/.."
PLANNER_PORT=${1:-28600}
LAB_PORT=${2:-8888}

pids=()
cleanup() {
  trap - INT TERM EXIT
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "demo stopped"
}
trap cleanup INT TERM EXIT

node --enable-source-maps planner/lib/planner/src/main.js --host 127.0.0.1 --port "$PLANNER_PORT" &
pids+=($!)

# Demo-only JupyterLab settings, so the user's own settings stay untouched: the extension points at
# this planner, and JupyterLab does not ask about fetching news (there is nothing to fetch offline).
export JUPYTERLAB_SETTINGS_DIR="$PWD/.venv/demo-settings"
mkdir -p "$JUPYTERLAB_SETTINGS_DIR/jupyterlab-notebook-bcc" \
  "$JUPYTERLAB_SETTINGS_DIR/@jupyterlab/apputils-extension"
printf '{ "baseUrl": "http://localhost:%s" }\n' "$PLANNER_PORT" \
  >"$JUPYTERLAB_SETTINGS_DIR/jupyterlab-notebook-bcc/plugin.jupyterlab-settings"
printf '{ "fetchNews": "false" }\n' \
  >"$JUPYTERLAB_SETTINGS_DIR/@jupyterlab/apputils-extension/notification.jupyterlab-settings"

# The run writes into its notebook: work on a copy so the repository's demo stays as shipped.
# An existing copy is kept, so a run saved there can be resumed after a restart.
workspace="$PWD/.demo"
mkdir -p "$workspace"
cp -rn demo/demo.ipynb demo/data "$workspace"/

echo "Planner: http://127.0.0.1:${PLANNER_PORT}   JupyterLab: http://localhost:${LAB_PORT}/lab/tree/demo.ipynb"
jupyter lab --no-browser --ServerApp.allow_root=True --port "$LAB_PORT" \
  --ServerApp.root_dir="$workspace" --LabApp.default_url="/lab/tree/demo.ipynb" &
pids+=($!)
wait -n "${pids[@]}"
