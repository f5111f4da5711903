#!/usr/bin/env bash
# The `hub` project's JupyterHub (ui-tests/hub-servers.js): a fresh state folder, the system users alice and
# bob (created once, when run as root; else SimpleLocalProcessSpawner runs both as this user), then the Hub,
# which starts the shared LLM planner and jupyterhub-idle-culler as its managed services.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
: "${BCC_HUB_STATE:?}" "${BCC_HUB_PORT:?}"
rm -rf "$BCC_HUB_STATE"
mkdir -p "$BCC_HUB_STATE"
chmod 700 "$BCC_HUB_STATE"
if [ "$(id -u)" = 0 ]; then
  for user in alice bob; do
    id -u "$user" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash --comment "Notebook-BCC hub test" "$user"
    # The folders earlier runs of hub.spec.ts left in the user's home (each run makes its own).
    rm -rf "$(getent passwd "$user" | cut -d: -f6)"/hub-[0-9]*
  done
fi
cd "$BCC_HUB_STATE"
exec "$REPO/.venv-hub/bin/jupyterhub" -f "$HERE/jupyterhub_config.py"
