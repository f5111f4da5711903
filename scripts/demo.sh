#!/usr/bin/env bash
# The demo: JupyterLab with the extension on the demo notebook. No planner is configured, so the demo
# planner built into the extension answers. Prints the one URL to open; Ctrl-C stops it.
set -euo pipefail
cd "$(dirname "$0")/.."
LAB_PORT=${1:-8888}

# Demo-only JupyterLab settings, so the user's own settings (a planner URL among them) stay untouched,
# and JupyterLab does not ask about fetching news (there is nothing to fetch offline).
export JUPYTERLAB_SETTINGS_DIR="$PWD/.venv/demo-settings"
mkdir -p "$JUPYTERLAB_SETTINGS_DIR/jupyterlab-notebook-bcc" \
  "$JUPYTERLAB_SETTINGS_DIR/@jupyterlab/apputils-extension"
# An earlier demo pointed the extension at a planner process: drop that, so the built-in planner answers.
rm -f "$JUPYTERLAB_SETTINGS_DIR/jupyterlab-notebook-bcc/plugin.jupyterlab-settings"
printf '{ "fetchNews": "false" }\n' \
  >"$JUPYTERLAB_SETTINGS_DIR/@jupyterlab/apputils-extension/notification.jupyterlab-settings"

# The run writes into its notebook: work on a copy so the repository's demo stays as shipped.
# An existing copy is kept, so a run saved there can be resumed after a restart.
workspace="$PWD/.demo"
mkdir -p "$workspace"
cp -rn demo/demo.ipynb demo/data "$workspace"/

# A token of our own: JupyterLab then prints no URL banner of its own, and ours is the only one.
token=$(python3 -c 'import secrets; print(secrets.token_hex(24))')
url="http://localhost:${LAB_PORT}/lab/tree/demo.ipynb?token=${token}"

jupyter lab --no-browser --ServerApp.allow_root=True --port "$LAB_PORT" --port-retries=0 \
  --ServerApp.root_dir="$workspace" --LabApp.default_url="/lab/tree/demo.ipynb" \
  --IdentityProvider.token="$token" --ServerApp.log_level=WARN &
lab=$!
cleanup() {
  trap - INT TERM EXIT
  kill "$lab" 2>/dev/null || true
  wait "$lab" 2>/dev/null || true
  echo "demo stopped"
}
trap cleanup INT TERM EXIT

for _ in $(seq 120); do
  if ! kill -0 "$lab" 2>/dev/null; then
    echo "JupyterLab did not start (is port ${LAB_PORT} in use?)" >&2
    exit 1
  fi
  if python3 -c "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)" \
    "http://localhost:${LAB_PORT}/api/status?token=${token}" 2>/dev/null; then
    break
  fi
  sleep 0.5
done
echo
echo "Open ${url}"
echo "then click Run Workflow, describe the task and pick data/housing.csv. Ctrl-C stops the demo."
wait "$lab"
