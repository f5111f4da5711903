"""The `hub` project's JupyterHub (ui-tests/tests/hub.spec.ts): two users, alice and bob, each with a single-user
JupyterLab from `.venv-hub` (`make hub-venv`: JupyterHub, the culler, JupyterLab and this package), the LLM
planner shared by both as a managed Hub service on Gemma 3 270M (llama.cpp, `.venv-llm`), and
jupyterhub-idle-culler with a short timeout. Ports and the state folder come from hub-servers.js."""

import os
import stat
import sys
from pathlib import Path

import jupyterlab

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
VENV_BIN = Path(sys.executable).parent
PORT = int(os.environ["BCC_HUB_PORT"])
STATE = Path(os.environ["BCC_HUB_STATE"])
PLANNER_URL = f"http://127.0.0.1:{PORT + 3}"
MODEL_URL = f"http://127.0.0.1:{PORT + 4}/v1"
CULL_TIMEOUT = int(os.environ.get("BCC_HUB_CULL_TIMEOUT", "20"))

c = get_config()  # noqa: F821

c.JupyterHub.bind_url = f"http://127.0.0.1:{PORT}"
c.JupyterHub.hub_bind_url = f"http://127.0.0.1:{PORT + 1}"
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{PORT + 2}"
c.ConfigurableHTTPProxy.command = [str(REPO / "node_modules" / ".bin" / "configurable-http-proxy")]
# Outside the state folder, which each start wipes: the Hub ends a proxy left by a run that crashed.
c.ConfigurableHTTPProxy.pid_file = f"{STATE}.proxy.pid"
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "cookie_secret")
c.JupyterHub.cleanup_servers = True
# The Hub reads the proxy's record of each server's traffic every 5 s (default 300 s), so the culler sees it.
c.JupyterHub.last_activity_interval = 5

c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = os.environ.get("BCC_HUB_PASSWORD", "bcc-hub-test")
c.Authenticator.allowed_users = {"alice", "bob"}



def open_to_others(path: Path) -> bool:
    """Whether another system user can reach `path`: every folder above it lets others through."""
    return all(os.stat(folder).st_mode & stat.S_IXOTH for folder in [path, *path.parents])


# Real system users when the Hub runs as root (CI does) and they can reach this clone's `.venv-hub`: each
# server runs as its user, in its home. Otherwise (or with BCC_HUB_SPAWNER=simple) SimpleLocalProcessSpawner
# runs both servers as the Hub's own user, each in a folder of its own.
local = os.geteuid() == 0 and open_to_others(VENV_BIN) and open_to_others(REPO / "jupyterlab_notebook_bcc")
if os.environ.get("BCC_HUB_SPAWNER", "local" if local else "simple") == "local":
    c.JupyterHub.spawner_class = "localprocess"
else:
    c.JupyterHub.spawner_class = "simple"
    c.SimpleLocalProcessSpawner.home_dir_template = str(STATE / "home" / "{username}")
    if os.geteuid() == 0:
        c.Spawner.args = ["--ServerApp.allow_root=True"]
c.Spawner.cmd = [str(VENV_BIN / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.Spawner.environment = {
    # The administrator's jupyter_server_config.py of every single-user server (the relay's settings).
    "JUPYTER_CONFIG_PATH": str(HERE / "singleuser"),
    "BCC_HUB_PLANNER_URL": PLANNER_URL,
    # Galata's in-page helpers, for the test only.
    "BCC_GALATA_EXTENSIONS": str(Path(jupyterlab.__file__).parent / "galata"),
    # Activity reported to the Hub every 5 s (default 300 s), within the culler's short timeout.
    "JUPYTERHUB_ACTIVITY_INTERVAL": "5",
}

llm_planner = [
    sys.executable, "-m", "jupyterlab_notebook_bcc.llm_planner",
    # Small budgets: two runs of a 270M model on two cores within minutes.
    "--LLMPlanner.max_plan_steps=1",
    "--LLMPlanner.max_tries_per_step=1",
    "--LLMPlanner.max_completion_tokens=300",
    "--LLMPlanner.response_format=json_object",
    f"--LLMPlanner.run_log={STATE / 'planner-runs.jsonl'}",
    # bob's day is spent by the model's first answer (the plan); alice's is not.
    "--LLMPlanner.user_limits={\"bob\": {\"max_daily_tokens\": 1}}",
]
c.JupyterHub.services = [
    {
        "name": "notebook-bcc-planner",
        "url": PLANNER_URL,
        "command": llm_planner,
        "environment": {
            "NOTEBOOK_BCC_LLM_BASE_URL": MODEL_URL,
            "NOTEBOOK_BCC_LLM_MODELS": os.environ.get("BCC_HUB_MODEL", "gemma-3-270m"),
            "NOTEBOOK_BCC_LLM_API_KEY": os.environ.get("BCC_HUB_MODEL_KEY", ""),
            "PYTHONUNBUFFERED": "1",
        },
    },
    {
        "name": "idle-culler",
        "command": [
            sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={CULL_TIMEOUT}", "--cull-every=5",
        ],
    },
]
c.JupyterHub.load_roles = [
    {
        "name": "idle-culler",
        "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
        "services": ["idle-culler"],
    },
    # The test reads users' servers through the API with this token (admin-free: only what it needs).
    {"name": "hub-test", "scopes": ["list:users", "read:servers", "read:users:activity"], "services": ["hub-test"]},
]
c.JupyterHub.services.append(
    {"name": "hub-test", "api_token": os.environ.get("BCC_HUB_TEST_TOKEN", "hub-test-token-0123456789")}
)
