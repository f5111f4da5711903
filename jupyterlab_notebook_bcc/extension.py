"""Wires the relay into a running Jupyter server."""

from __future__ import annotations

import logging
import os
from typing import Any

from .config import TOKEN_VARIABLE, NotebookBCC, PlannerTarget, default_user_settings_dir, display_url, resolve_target
from .handlers import NAMESPACE, setup_handlers
from .llm_planner import LLMPlanner, LLMPlannerService, UserStore
from .llm_planner.routes import setup_llm_handlers
from .llm_planner.settings import KEY_VARIABLE as LLM_KEY_VARIABLE
from .llm_planner.settings import key_in_user_server_warning
from .locks import RunLocks, follow_renames


def user_settings_dir(serverapp: Any) -> str:
    """JupyterLab's user settings directory: the running LabApp's, else its configured or default one."""
    apps = serverapp.extension_manager.extension_apps
    for app in apps.get("jupyterlab", ()):
        configured = getattr(app, "user_settings_dir", "")
        if configured:
            return str(configured)
    lab_config = serverapp.config.get("LabApp", {})
    if lab_config.get("user_settings_dir"):
        return str(lab_config["user_settings_dir"])
    return default_user_settings_dir()


def app_settings_dir(serverapp: Any) -> str | None:
    """JupyterLab's application settings directory (where `overrides.json` lives), when JupyterLab or
    Notebook 7 runs in this server."""
    for apps in serverapp.extension_manager.extension_apps.values():
        for app in apps:
            configured = getattr(app, "app_settings_dir", "")
            if configured:
                return str(configured)
    return None


def use_gateway_websockets(serverapp: Any) -> None:
    """Kernel websockets through a gateway leave no stale websocket on it (``gateway.py``), unless the
    administrator chose another class than jupyter_server's default."""
    from jupyter_server.gateway.connections import GatewayWebSocketConnection as ServerDefault

    from .gateway import GatewayWebSocketConnection

    settings = serverapp.web_app.settings
    if settings.get("kernel_websocket_connection_class") is not ServerDefault:
        return
    settings["kernel_websocket_connection_class"] = GatewayWebSocketConnection
    serverapp.kernel_websocket_connection_class = GatewayWebSocketConnection
    serverapp.log.info("Notebook-BCC: kernel websockets to the gateway go through %s", GatewayWebSocketConnection.__module__)


# The relay's target when the LLM planner answers: it is in this process, so the "URL" only names it.
LLM_PLANNER_URL = "llm-planner://in-process"


def llm_service(serverapp: Any) -> LLMPlannerService:
    """The LLM planner of this server: the administrator's `c.LLMPlanner`, else the user's stored settings."""
    llm_config = LLMPlanner(parent=serverapp)
    # Read the administrator's key, then take it out of the environment kernels inherit.
    _ = llm_config.api_key
    os.environ.pop(LLM_KEY_VARIABLE, None)
    warning = key_in_user_server_warning(llm_config, os.environ)
    if warning:
        logging.getLogger("notebook_bcc.llm_planner").warning(warning)
    service = LLMPlannerService(llm_config, UserStore(), run_log=logging.getLogger("notebook_bcc.llm_planner.runs"))
    serverapp.web_app.settings["notebook_bcc_llm"] = service
    return service


def with_llm_planner(target: PlannerTarget, llm: LLMPlannerService) -> PlannerTarget:
    """The administrator's planner URL wins; then the administrator's LLM planner; then a user's planner URL;
    then the user's own LLM planner; else the built-in demo planner (`default`)."""
    if target.source == "server":
        return target
    settings = llm.settings()
    if settings is None or not settings.configured:
        return target
    if settings.source == "server" or target.source == "default":
        public = settings.public()
        info = {key: public[key] for key in ("model", "models", "base_url", "readonly")}
        return PlannerTarget(LLM_PLANNER_URL, "server" if settings.source == "server" else "user", local=llm, llm=info)
    return target


def load(serverapp: Any) -> None:
    config = NotebookBCC(parent=serverapp)
    # Read the administrator's token, then take it out of the environment every kernel and terminal
    # inherits: the relay keeps it, a cell's `os.environ` no longer shows it.
    _ = config.planner_token
    os.environ.pop(TOKEN_VARIABLE, None)

    llm = llm_service(serverapp)

    def pinned_by() -> str:
        # The relay never serves a user's LLM planner then: their LLM settings are neither used nor tested.
        if config.planner_auth == "hub":
            return "c.NotebookBCC.planner_auth = 'hub'"
        if config.planner_url or config.planner_token:
            return "c.NotebookBCC.planner_url" if config.planner_url else "c.NotebookBCC.planner_token"
        return ""

    llm.pinned_by = pinned_by

    def resolve() -> PlannerTarget:
        return with_llm_planner(
            resolve_target(config, user_settings_dir(serverapp), app_settings_dir(serverapp)), llm
        )

    # Other server code (and tests) find the live configuration here.
    serverapp.web_app.settings["notebook_bcc"] = config
    locks = RunLocks()
    serverapp.web_app.settings["notebook_bcc_locks"] = locks
    setup_handlers(serverapp.web_app, config, resolve, locks)
    setup_llm_handlers(serverapp.web_app, NAMESPACE, llm)
    follow_renames(serverapp, locks)
    if config.gateway_websockets:
        use_gateway_websockets(serverapp)
    if config.planner_url or config.planner_token or config.planner_auth == "hub":
        serverapp.log.info(
            "Notebook-BCC relay at %s%s/relay/ serves the planner at %s (server config, %s)",
            serverapp.base_url,
            NAMESPACE,
            display_url(config.planner_url) or "default URL",
            "as this JupyterHub user, by the server's Hub API token"
            if config.planner_auth == "hub"
            else f"token {'set' if config.planner_token else 'not set'}",
        )
    else:
        serverapp.log.info(
            "Notebook-BCC relay at %s%s/relay/ serves each user's planner URL setting",
            serverapp.base_url,
            NAMESPACE,
        )
