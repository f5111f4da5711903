"""`c.NotebookBCC.require_approval`: the administrator requires approval of every behavior's code; the
browser learns it from `GET notebook-bcc/config` (docs/settings.md#approval), a real server answering."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

Fetch = Callable[..., Awaitable[Any]]


async def test_approval_is_not_required_by_default(jp_fetch: Fetch) -> None:
    config = json.loads((await jp_fetch("notebook-bcc", "config")).body)
    assert "require_approval" not in config


@pytest.mark.parametrize("bcc_server_config", [{"require_approval": True}])
async def test_the_administrators_requirement_reaches_the_browser(jp_fetch: Fetch) -> None:
    config = json.loads((await jp_fetch("notebook-bcc", "config")).body)
    assert config["require_approval"] is True
    # Beside what the config said before, which is unchanged.
    assert config["source"] == "default"
    assert "token" not in json.dumps(config).replace("token_configured", "")
