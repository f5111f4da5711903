"""The administrator's jupyter_server_config.py on the `hub` project's single-user servers (docs/hub.md): the
relay serves the shared LLM planner (a Hub service) as this server's user, with the server's own Hub token."""

import os

c = get_config()  # noqa: F821

c.NotebookBCC.planner_url = os.environ["BCC_HUB_PLANNER_URL"]
c.NotebookBCC.planner_auth = "hub"

# For the test only: galata's in-page helpers and `window.jupyterapp`.
c.LabServerApp.extra_labextensions_path = [p for p in [os.environ.get("BCC_GALATA_EXTENSIONS", "")] if p]
c.LabApp.expose_app_in_browser = True
# A fresh layout at each start: the users' homes outlive a test run.
c.LabApp.workspaces_dir = __import__("tempfile").mkdtemp(prefix="bcc-hub-workspaces-")
