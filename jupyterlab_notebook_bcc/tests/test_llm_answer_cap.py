"""A streamed answer is capped (#41): an endpoint that does not keep to max_tokens cannot make the planner
hold and scan an answer without end; the request ends with a message that says why."""

from __future__ import annotations

import asyncio

import pytest

from jupyterlab_notebook_bcc.llm_planner.model import ModelError, OpenAIModel, answer_limit
from jupyterlab_notebook_bcc.llm_planner.settings import ModelSettings

from .fake_openai import FakeOpenAI, Reply


def test_the_limit_follows_max_completion_tokens() -> None:
    assert answer_limit(1200) == 1200 * 16
    assert answer_limit(10) == 4096
    assert answer_limit(0) == 1_000_000


def test_an_answer_past_the_limit_is_cut_with_a_message() -> None:
    with FakeOpenAI(lambda body: Reply(text="a" * 20_000, pieces=50)) as fake:
        model = OpenAIModel(ModelSettings(fake.base_url, ("small",), "user"), "small", max_completion_tokens=10)
        with pytest.raises(ModelError) as raised:
            asyncio.run(model.complete([{"role": "user", "content": "hi"}], None))
        assert raised.value.status == 502
        assert "longer than 4,096 characters" in raised.value.message
        assert "max_completion_tokens" in raised.value.message
        # The cut request counts what it received.
        assert 4096 < len(model.received.text) <= 4096 + 400


def test_an_answer_within_the_limit_is_whole() -> None:
    with FakeOpenAI(lambda body: Reply(text="a" * 3000, pieces=10)) as fake:
        model = OpenAIModel(ModelSettings(fake.base_url, ("small",), "user"), "small", max_completion_tokens=10)
        assert asyncio.run(model.complete([{"role": "user", "content": "hi"}], None)).text == "a" * 3000
