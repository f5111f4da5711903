"""Which planner the relay talks to: the admin's server config, else the user's JupyterLab setting.

The relay never takes a URL from a request; the target is resolved here on every request so a change
in the user's settings applies without a server restart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import json5
from jupyter_core.paths import jupyter_config_dir
from traitlets import Bool, Enum, Float, Int, List, TraitError, Unicode, default, validate
from traitlets.config import Configurable

from .policy import DEFAULT_ALLOWED, parse_patterns

DEFAULT_PLANNER_URL = "http://localhost:28600"
# The administrator's token in the server's environment; removed from it once read (extension.py).
TOKEN_VARIABLE = "NOTEBOOK_BCC_PLANNER_TOKEN"
# Under JupyterHub: this single-user server's own Hub API token, which `planner_auth = "hub"` sends instead.
HUB_TOKEN_VARIABLE = "JUPYTERHUB_API_TOKEN"
AUTH_VARIABLE = "NOTEBOOK_BCC_PLANNER_AUTH"
PLANNER_AUTH_MODES = ("token", "hub")
# The labextension's plugin id `jupyterlab-notebook-bcc:plugin` names its user settings file.
SETTINGS_FILE = Path("jupyterlab-notebook-bcc") / "plugin.jupyterlab-settings"

# The plugin's id: its key in JupyterLab's `overrides.json`.
PLUGIN_ID = "jupyterlab-notebook-bcc:plugin"
# `server`: the relay's config; `user`: the user's settings file; `overrides`: the administrator's JupyterLab
# defaults (`overrides.json`, `overrides.d`); `default`: none of them (the built-in demo planner).
Source = Literal["server", "user", "overrides", "default"]


class NotebookBCC(Configurable):
    """Server-side settings of Notebook-BCC; they take precedence over each user's settings."""

    planner_url = Unicode(
        help=(
            "Base URL of the planner service the relay forwards to. When set (here or through "
            "NOTEBOOK_BCC_PLANNER_URL), users' own baseUrl settings are ignored."
        ),
    ).tag(config=True)

    planner_token = Unicode(
        help=(
            "Bearer token the relay adds to every planner request (or NOTEBOOK_BCC_PLANNER_TOKEN, which the "
            "relay then removes from the environment kernels inherit). "
            "It never reaches the browser. Setting it also pins the planner URL to planner_url "
            "(or the default), so a user's setting cannot send the token elsewhere."
        ),
    ).tag(config=True)

    planner_auth = Enum(
        list(PLANNER_AUTH_MODES),
        default_value="token",
        help=(
            "How the relay authenticates to the planner: 'token' sends planner_token (if any); 'hub' sends this "
            "single-user server's own JupyterHub API token (JUPYTERHUB_API_TOKEN), so a shared planner run as a "
            "Hub service knows which user asks and no secret is shared between users. 'hub' pins the planner "
            f"URL to planner_url like a token does. Or {AUTH_VARIABLE}."
        ),
    ).tag(config=True)

    connect_timeout = Float(
        30.0,
        help="Seconds to wait for a TCP (and TLS) connection to the planner (name resolution included).",
    ).tag(config=True)

    allowed_planner_urls = List(
        Unicode(),
        default_value=list(DEFAULT_ALLOWED),
        help=(
            "Where a planner URL set by the user (their baseUrl setting) may point: patterns "
            "SCHEME://HOST[:PORT], e.g. 'http://localhost:*', 'https://*.corp.example', 'http://10.0.0.0/8:8000'; "
            "['*'] allows every host. Default: loopback only (localhost, 127.0.0.0/8, ::1), any port. "
            "planner_url and JupyterLab's overrides.json are the administrator's and always allowed. "
            "Link-local and cloud-metadata addresses (169.254.0.0/16, fe80::/10, fd00:ec2::254, "
            "100.100.100.200) are refused whatever this says, checked on the resolved address."
        ),
    ).tag(config=True)

    max_concurrent_requests = Int(
        16,
        help="Planner requests the relay has in flight at once; more are answered 503 with Retry-After. 0: no cap.",
    ).tag(config=True)

    idle_timeout = Float(
        900.0,
        help=(
            "Seconds the relay waits for the next byte from the planner, before its answer starts and between "
            "chunks once it has; then it gives up (a 502 before the answer started, a broken stream after). "
            "Keep it longer than the users' firstByteTimeout and stallTimeout settings. 0: no limit."
        ),
    ).tag(config=True)

    gateway_websockets = Bool(
        True,
        help=(
            "With a Kernel or Enterprise Gateway (--gateway-url), proxy kernel websockets with "
            "jupyterlab_notebook_bcc.gateway.GatewayWebSocketConnection, which leaves no stale websocket "
            "on the gateway (with jupyter_server's own, a kernel often stops answering the notebook "
            "after a restart). Only when kernel_websocket_connection_class is jupyter_server's default."
        ),
    ).tag(config=True)

    require_approval = Bool(
        False,
        help=(
            "Every run of every planner waits for the user's approval before each behavior's code runs "
            "(interactive mode), whatever the user's own setting says; the Settings Editor shows it as "
            "required. The browser enforces it: it protects users from a planner's code, not this server "
            "from its users."
        ),
    ).tag(config=True)

    @validate("allowed_planner_urls")
    def _valid_patterns(self, proposal: Any) -> list[str]:
        try:
            parse_patterns(proposal["value"])
        except ValueError as error:
            raise TraitError(f"c.NotebookBCC.allowed_planner_urls: {error}") from error
        return list(proposal["value"])

    @default("planner_url")
    def _planner_url_from_env(self) -> str:
        return os.environ.get("NOTEBOOK_BCC_PLANNER_URL", "")

    @default("planner_auth")
    def _planner_auth_from_env(self) -> str:
        value = os.environ.get(AUTH_VARIABLE, "").strip().lower()
        return value if value in PLANNER_AUTH_MODES else "token"

    @default("planner_token")
    def _planner_token_from_env(self) -> str:
        return os.environ.get(TOKEN_VARIABLE, "")


@dataclass(frozen=True)
class PlannerTarget:
    """Where the relay sends requests and with which token (never shown)."""

    url: str
    source: Source
    token: str = field(default="", repr=False)
    # The LLM planner in this process (llm_planner.LLMPlannerService) when it is what the relay serves.
    local: Any = field(default=None, repr=False, compare=False)
    # What the browser may know of it: the models a run may pick, the default, read-only or not.
    llm: dict[str, Any] | None = None

    def public(self) -> dict[str, Any]:
        """What the browser may know: no token, no credentials in the URL."""
        public: dict[str, Any] = {
            "planner_url": display_url(self.url),
            "source": self.source,
            "token_configured": bool(self.token),
        }
        if self.llm is not None:
            public["llm"] = self.llm
        return public


def display_url(url: str) -> str:
    """The URL without any `user:password@` part, for messages and logs."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def read_user_settings(settings_dir: str) -> dict[str, Any]:
    """The user's saved Notebook-BCC settings (JSON5 with comments); empty when absent or unreadable."""
    path = Path(settings_dir) / SETTINGS_FILE
    try:
        data = json5.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as error:
        raise UserSettingsError(f"cannot read {path}: {error}") from error
    return data if isinstance(data, dict) else {}


class UserSettingsError(Exception):
    """The user's settings file exists but is not readable JSON5."""


def planner_root(url: str) -> str:
    """The planner's root: without a trailing `/`, then without a trailing `/v1`, the v1 server's form
    (`http://host:28600/v1`, whose routes are `/v1/actions` and `/v2/health` under the root)."""
    root = url.strip().rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def read_overrides(app_settings_dir: str | None) -> dict[str, Any]:
    """The administrator's defaults for this plugin, read the way JupyterLab reads them (`overrides.d/*`,
    `overrides.json`, labconfig `default_setting_overrides`); empty without them."""
    if not app_settings_dir:
        return {}
    try:
        from jupyterlab_server.settings_utils import _get_overrides
    except ImportError:
        return {}
    # A broken overrides file is JupyterLab's to report (it logs it); what could be read still counts.
    overrides, _error = _get_overrides(app_settings_dir)
    plugin = overrides.get(PLUGIN_ID, {})
    return plugin if isinstance(plugin, dict) else {}


def resolve_target(config: NotebookBCC, settings_dir: str, app_settings_dir: str | None = None) -> PlannerTarget:
    """Server config wins as a whole; otherwise the settings as JupyterLab composes them (the user's
    `baseUrl` and `token` over the administrator's overrides); else the default URL."""
    hub = config.planner_auth == "hub"
    if hub or config.planner_url or config.planner_token:
        url = config.planner_url.strip() or DEFAULT_PLANNER_URL
        # Under a Hub, the user's own credential, read on each request (never a secret shared by all users).
        token = os.environ.get(HUB_TOKEN_VARIABLE, "") if hub else config.planner_token
        return PlannerTarget(planner_root(url), "server", token)
    overrides = read_overrides(app_settings_dir)
    user = read_user_settings(settings_dir)
    settings = {**overrides, **user}
    base_url = settings.get("baseUrl")
    token = settings.get("token")
    token = token.strip() if isinstance(token, str) else ""
    if isinstance(base_url, str) and base_url.strip():
        return PlannerTarget(planner_root(base_url), "user" if "baseUrl" in user else "overrides", token)
    return PlannerTarget(DEFAULT_PLANNER_URL, "default", token)


def default_user_settings_dir() -> str:
    """JupyterLab's own default: `JUPYTERLAB_SETTINGS_DIR`, else `<jupyter config dir>/lab/user-settings`."""
    configured = os.environ.get("JUPYTERLAB_SETTINGS_DIR")
    return os.path.abspath(configured or os.path.join(jupyter_config_dir(), "lab", "user-settings"))
