"""JupyterLab extension that lets a planner service drive a live notebook, with a server-side relay."""

from __future__ import annotations

from typing import Any

try:
    from ._version import __version__
except ImportError:
    # Fallback when using the package in dev mode without installing in editable mode with pip.
    import warnings

    warnings.warn("Importing 'jupyterlab_notebook_bcc' outside a proper installation.")
    __version__ = "dev"


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    return [{"src": "labextension", "dest": "jupyterlab-notebook-bcc"}]


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": "jupyterlab_notebook_bcc"}]


def _load_jupyter_server_extension(serverapp: Any) -> None:
    from .extension import load

    load(serverapp)
