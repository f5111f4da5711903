"""Server configuration for the galata tests: a throwaway root dir, no token, galata's helpers."""

from jupyterlab.galata import configure_jupyter_server

configure_jupyter_server(c)  # noqa: F821

# Keep the test server quiet and independent from the developer's own settings.
c.ServerApp.open_browser = False
# CI machines run as root.
c.ServerApp.allow_root = True
c.LabApp.expose_app_in_browser = True
