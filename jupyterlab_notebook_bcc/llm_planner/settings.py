"""Which model the LLM planner uses, and who said so.

The administrator's settings (`c.LLMPlanner.*` in `jupyter_server_config.py`, or the `NOTEBOOK_BCC_LLM_*`
environment variables) win as a whole. Without them, a user on their own machine stores theirs through the
panel's "LLM Planner Settings" dialog: a JSON file in the Jupyter data directory, readable by the user only.
The API key is never sent back to the browser, written to a log or to the notebook.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from jupyter_core.paths import jupyter_data_dir
from traitlets import Bool, Dict, Enum, Float, Int, List, TraitError, Unicode, default, validate
from traitlets.config import Configurable

from .destinations import DEFAULT_ALLOWED_BASE_URLS, Destinations, parse_allowed
from .urls import display_url

BASE_URL_VARIABLE = "NOTEBOOK_BCC_LLM_BASE_URL"
KEY_VARIABLE = "NOTEBOOK_BCC_LLM_API_KEY"
MODELS_VARIABLE = "NOTEBOOK_BCC_LLM_MODELS"
# The user's own settings, beside jupyter-ai's and other extensions' in the data directory.
USER_FILE = Path("notebook_bcc") / "llm_planner.json"

Source = Literal["server", "user", "none"]
ResponseFormat = Literal["auto", "json_schema", "json_object", "none"]
RESPONSE_FORMATS: tuple[ResponseFormat, ...] = ("auto", "json_schema", "json_object", "none")


class LLMPlanner(Configurable):
    """The LLM planner: a DSLC planner that asks a language model through an OpenAI-compatible API."""

    base_url = Unicode(
        help=(
            "Base URL of an OpenAI-compatible Chat Completions API, e.g. https://api.openai.com/v1, "
            "http://localhost:8000/v1 (vLLM, llama.cpp), http://localhost:11434/v1 (Ollama). When set (here or "
            f"through {BASE_URL_VARIABLE}), the relay serves the LLM planner to every user, and users' own LLM "
            "settings are read-only."
        ),
    ).tag(config=True)

    api_key = Unicode(
        help=(
            f"API key sent to the model endpoint (or {KEY_VARIABLE}, which is then removed from the environment "
            "kernels inherit). Never sent to the browser, the notebook, the trace or a log. Set in a user's own "
            "Jupyter server (a JupyterHub single-user server), it is readable by that user's kernels "
            "(/proc/<server pid>/environ, the config file) and that user's own config can change the budgets: "
            "a key shared by users belongs in the shared LLM planner, a JupyterHub service (docs/hub.md)."
        ),
    ).tag(config=True)

    models = List(
        Unicode(),
        help=(
            f"The models users may pick in the Run dialog (or {MODELS_VARIABLE}, comma-separated); the first is "
            "the default."
        ),
    ).tag(config=True)

    user_settings = Bool(
        True,
        help=(
            "Whether users may keep LLM settings of their own (the LLM Planner Settings dialog) and test endpoints "
            "with it. False: the settings routes and Test answer 403, a stored settings file is not used, and only "
            "base_url (if set) is served. Users' settings are not used either where c.NotebookBCC.planner_url, "
            "planner_token or planner_auth = 'hub' pin the planner."
        ),
    ).tag(config=True)

    allowed_base_urls = List(
        Unicode(),
        default_value=list(DEFAULT_ALLOWED_BASE_URLS),
        help=(
            "Where a user's own LLM settings (and Test) may send model requests: patterns SCHEME://HOST[:PORT] as "
            "in c.NotebookBCC.allowed_planner_urls, e.g. 'https://*.corp.example', 'http://10.0.0.0/8:8000'. "
            "A pattern whose host is '*' allows public addresses only (checked on the resolved address). Default: "
            "loopback (localhost, 127.0.0.0/8, ::1) on any port, and public https hosts on port 443. base_url is "
            "the administrator's and always allowed. Link-local and cloud-metadata addresses are refused whatever "
            "this says."
        ),
    ).tag(config=True)

    response_format = Enum(
        list(RESPONSE_FORMATS),
        default_value="auto",
        help=(
            "How structured output is asked for: json_schema (OpenAI, vLLM, Ollama), json_object with a schema "
            "(llama.cpp's Python server, DeepSeek takes it without one), none (the answer is read tolerantly). "
            "auto tries json_schema, then json_object, then none, and remembers what the endpoint took."
        ),
    ).tag(config=True)

    max_run_tokens = Int(
        0, help="Tokens (prompt and completion) one run may use; 0 for no limit. A spent budget ends the run."
    ).tag(config=True)

    max_daily_tokens = Int(
        0,
        help=(
            "Tokens one user may use per day (UTC), over all their runs; 0 for no limit. On a shared planner "
            "(a JupyterHub service) each Hub user has their own; a spent budget stops that user's run only."
        ),
    ).tag(config=True)

    user_limits = Dict(
        help=(
            "Per-user limits that replace max_run_tokens and max_daily_tokens for the users named: "
            "{'bob': {'max_run_tokens': 20000, 'max_daily_tokens': 200000}}."
        ),
    ).tag(config=True)

    run_log = Unicode(
        help=(
            "A file the planner appends one JSON line to per run when it ends: user, notebook, model, tokens, "
            "start, end, outcome. Today's lines set each user's tokens of the day again after a restart."
        ),
    ).tag(config=True)

    max_run_behaviors = Int(
        60, help="Behaviors (model-written cells and their execution) one run may have; 0 for no limit."
    ).tag(config=True)

    max_tries_per_step = Int(
        3, help="Behaviors a step may take before the planner gives it up and moves on, the reason shown."
    ).tag(config=True)

    max_plan_steps = Int(
        6, help="Steps the model may plan for the analysis (the load and findings steps come on top)."
    ).tag(config=True)

    request_timeout = Float(
        300.0, help="Seconds one model request may take in all; 0 for no limit."
    ).tag(config=True)

    stall_timeout = Float(
        60.0, help=("Seconds a model stream may stay silent between two pieces of its answer before the request is "
                    "given up; 0 for no limit. The wait for its first piece is first_token_timeout's.")
    ).tag(config=True)

    first_token_timeout = Float(
        240.0, help=("Seconds to wait for the first piece of a model's answer (a model on a CPU reads a long prompt "
                     "first: about a minute per 4,000 tokens on 2 cores); 0 for no limit but request_timeout.")
    ).tag(config=True)

    max_sessions = Int(
        200, help="Runs the planner keeps in memory at once; the least recently used is forgotten first."
    ).tag(config=True)

    session_idle_timeout = Float(
        12 * 3600.0,
        help=("Seconds a run is kept in memory after its last request; 0 for no limit. A forgotten run goes on "
              "from what each request carries, its token count started again."),
    ).tag(config=True)

    max_completion_tokens = Int(
        1200,
        help=("The most tokens one model answer may have. With a prompt's estimate, what a model call reserves "
              "against the budgets before it starts."),
    ).tag(config=True)

    max_streams_per_user = Int(
        2,
        help=("Model requests one user may have in flight at once, over all their runs (a JupyterHub user on a "
              "shared planner; everyone together where the planner has one user); more are answered 429 with a "
              "message. 0 for no limit."),
    ).tag(config=True)

    temperature = Float(0.2, help="Sampling temperature of the model.").tag(config=True)

    retry_temperature = Float(
        0.8,
        help=("Sampling temperature of a request asked again because the model wrote once more the code that "
              "already failed in the step, or an answer that could not be read: at the usual temperature a small "
              "model often writes the same answer again."),
    ).tag(config=True)

    prices = Dict(
        help=(
            "Prices per million tokens, by model: {'gpt-4o-mini': {'prompt': 0.15, 'completion': 0.6}}, "
            "optionally with 'currency' (default USD). With a price, the panel shows each run's cost."
        ),
    ).tag(config=True)

    @validate("allowed_base_urls")
    def _valid_patterns(self, proposal: Any) -> list[str]:
        try:
            return parse_allowed(proposal["value"])
        except ValueError as error:
            raise TraitError(f"c.LLMPlanner.allowed_base_urls: {error}") from error

    @property
    def destinations(self) -> Destinations:
        """Where model requests may go, as configured now."""
        return Destinations(tuple(self.allowed_base_urls))

    @default("base_url")
    def _base_url_from_env(self) -> str:
        return os.environ.get(BASE_URL_VARIABLE, "")

    @default("api_key")
    def _api_key_from_env(self) -> str:
        return os.environ.get(KEY_VARIABLE, "")

    @default("models")
    def _models_from_env(self) -> list[str]:
        return [name.strip() for name in os.environ.get(MODELS_VARIABLE, "").split(",") if name.strip()]


@dataclass(frozen=True)
class ModelSettings:
    """One endpoint and the models that may be used on it."""

    base_url: str
    models: tuple[str, ...]
    source: Source
    api_key: str = field(default="", repr=False)
    response_format: ResponseFormat = "auto"

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.models)

    @property
    def model(self) -> str:
        return self.models[0] if self.models else ""

    def public(self) -> dict[str, Any]:
        """What the browser may know: never the key."""
        return {
            "source": self.source if self.configured else "none",
            "readonly": self.source == "server",
            "base_url": display_url(self.base_url),
            "model": self.model,
            "models": list(self.models),
            "api_key_set": bool(self.api_key),
        }


def base_url_problem(url: str) -> str:
    """Why `url` is not an endpoint base URL, or ""."""
    if not url:
        return "the base URL is empty"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number in range
    except ValueError as error:
        return f"the base URL is not valid: {error}"
    if parts.scheme not in ("http", "https"):
        return "the base URL must start with http:// or https://"
    if not parts.hostname:
        return "the base URL names no host"
    return ""


# Set by JupyterHub in every single-user server it spawns.
HUB_VARIABLES = ("JUPYTERHUB_API_TOKEN", "JUPYTERHUB_SERVICE_PREFIX")


def key_in_user_server_warning(config: LLMPlanner, environ: Mapping[str, str]) -> str:
    """The warning for an administrator's API key in a Jupyter server JupyterHub spawned for one user, or ""."""
    if not config.api_key or not any(environ.get(name) for name in HUB_VARIABLES):
        return ""
    return (
        "Notebook-BCC: c.LLMPlanner.api_key is set in a single-user server of JupyterHub. This user's kernels can "
        "read it (the server's environment in /proc/<server pid>/environ, its config files), and the user's own "
        "config can change c.LLMPlanner's budgets in this process. For a key shared by users, run the shared LLM "
        "planner as a JupyterHub service and set c.NotebookBCC.planner_auth = 'hub' here (docs/hub.md)."
    )


def admin_settings(config: LLMPlanner) -> ModelSettings | None:
    """The administrator's settings, or None when the administrator set no endpoint."""
    if not config.base_url.strip():
        return None
    return ModelSettings(
        base_url=config.base_url.strip().rstrip("/"),
        models=tuple(config.models),
        source="server",
        api_key=config.api_key,
        response_format=config.response_format,
    )


class UserStore:
    """The user's own LLM settings: one JSON file, created readable and writable by the user only."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or Path(jupyter_data_dir()) / USER_FILE

    def read(self) -> ModelSettings | None:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        models = data.get("models")
        if not isinstance(models, list):
            model = data.get("model")
            models = [model] if isinstance(model, str) else []
        base_url = data.get("base_url")
        key = data.get("api_key")
        response_format = data.get("response_format", "auto")
        return ModelSettings(
            base_url=base_url.strip().rstrip("/") if isinstance(base_url, str) else "",
            models=tuple(m.strip() for m in models if isinstance(m, str) and m.strip()),
            source="user",
            api_key=key if isinstance(key, str) else "",
            response_format=response_format if response_format in RESPONSE_FORMATS else "auto",
        )

    def write(self, settings: ModelSettings) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "base_url": settings.base_url,
            "models": list(settings.models),
            "api_key": settings.api_key,
            "response_format": settings.response_format,
        }
        # Created 0600 before anything is written, so the key is never readable by others, even briefly.
        temporary = self.path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, stat.S_IRUSR | stat.S_IWUSR)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump(data, file, indent=2)
        os.chmod(temporary, stat.S_IRUSR | stat.S_IWUSR)
        os.replace(temporary, self.path)

    def delete(self) -> None:
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass


def updated(current: ModelSettings | None, body: dict[str, Any]) -> ModelSettings:
    """The user's settings after a PUT: `api_key` absent or null keeps the stored key, "" removes it."""
    base_url = body.get("base_url")
    if not isinstance(base_url, str):
        raise ValueError("base_url must be a string")
    base_url = base_url.strip().rstrip("/")
    problem = base_url_problem(base_url)
    if problem:
        raise ValueError(problem)
    models_value = body.get("models")
    if isinstance(models_value, list):
        models = [m.strip() for m in models_value if isinstance(m, str) and m.strip()]
    else:
        models = []
    model = body.get("model")
    if isinstance(model, str) and model.strip():
        models = [model.strip()] + [m for m in models if m != model.strip()]
    if not models:
        raise ValueError("name a model")
    key = body.get("api_key")
    if key is None:
        api_key = current.api_key if current else ""
    elif isinstance(key, str):
        api_key = key.strip()
    else:
        raise ValueError("api_key must be a string")
    response_format = body.get("response_format", current.response_format if current else "auto")
    if response_format not in RESPONSE_FORMATS:
        raise ValueError("response_format must be auto, json_schema, json_object or none")
    return ModelSettings(base_url=base_url, models=tuple(models), source="user", api_key=api_key,
                         response_format=response_format)


def with_overrides(settings: ModelSettings, body: dict[str, Any]) -> ModelSettings:
    """The settings a Test request asks about: its fields over the stored ones."""
    changes: dict[str, Any] = {}
    if isinstance(body.get("base_url"), str) and body["base_url"].strip():
        changes["base_url"] = body["base_url"].strip().rstrip("/")
    if isinstance(body.get("model"), str) and body["model"].strip():
        changes["models"] = (body["model"].strip(),)
    if isinstance(body.get("api_key"), str):
        changes["api_key"] = body["api_key"].strip()
    return replace(settings, **changes)
