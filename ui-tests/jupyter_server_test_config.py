"""Server configuration for the galata tests: a throwaway root dir, no token, galata's helpers."""

from tempfile import mkdtemp

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821

# Keep the test server quiet and independent from the developer's own settings.
c.ServerApp.open_browser = False
# CI machines run as root.
c.ServerApp.allow_root = True
c.LabApp.expose_app_in_browser = True
# The planner relay reads the user's settings on the server: keep them in a throwaway folder that the tests
# write (helpers.ts) instead of the developer's own.
c.LabApp.user_settings_dir = mkdtemp(prefix="galata-settings-")  # noqa: F821
# Jupyter Notebook 7 (the `notebook7` project) reads its own application's settings, not JupyterLab's.
c.JupyterNotebookApp.expose_app_in_browser = True  # noqa: F821
c.JupyterNotebookApp.user_settings_dir = c.LabApp.user_settings_dir  # noqa: F821
