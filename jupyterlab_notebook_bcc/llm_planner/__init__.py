"""The LLM planner: a DSLC planner service whose plan, code and findings a language model writes, through any
OpenAI-compatible Chat Completions endpoint. Served in process by the Jupyter server's relay, or on its own:
`python -m jupyterlab_notebook_bcc.llm_planner --port 28600` (docs/llm-planner.md)."""

from .service import LLMPlannerService, LocalPlannerRequest
from .settings import LLMPlanner, ModelSettings, UserStore

__all__ = ["LLMPlanner", "LLMPlannerService", "LocalPlannerRequest", "ModelSettings", "UserStore"]
