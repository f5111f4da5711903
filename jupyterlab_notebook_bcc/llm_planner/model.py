"""One model request through the official `openai` SDK (Chat Completions, streamed), and what can go wrong
with it, in words a user can act on: the first sentence says what is wrong with the model settings, the
HTTP status comes after it; an error whose fix is in the LLM Planner Settings carries the action that opens
them. The planner never calls this directly: every request goes through `calls.ModelCalls`."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .destinations import Destinations, EndpointRefused, http_client, refusal_in
from .failures import OPEN_SETTINGS
from .settings import ModelSettings, ResponseFormat
from .urls import display_url, without_secrets

# What a request is sent with when the endpoint needs no key (llama.cpp, vLLM, Ollama): the SDK wants one.
NO_KEY = "no-key"
# The most of an endpoint's own error message a user is shown (after its HTTP status).
DETAIL_CHARS = 160
# A response_format the endpoint refused is not asked again for that endpoint and model.
FORMAT_ORDER: tuple[ResponseFormat, ...] = ("json_schema", "json_object", "none")


# The most characters a streamed answer may have, per token of max_completion_tokens (a token is about four
# characters; an endpoint that ignores max_tokens is cut well past it).
CHARS_PER_TOKEN = 16


def answer_limit(max_completion_tokens: int) -> int:
    """The most characters of one streamed answer: 16 a token of `max_completion_tokens`, at least 4,096;
    1,000,000 when that setting is 0 (no limit)."""
    if max_completion_tokens <= 0:
        return 1_000_000
    return max(4096, max_completion_tokens * CHARS_PER_TOKEN)


class ModelError(Exception):
    """A model request that failed: `status` is the planner's HTTP answer for it, `message` the user's text."""

    def __init__(
        self, kind: str, message: str, status: int, retry_after: float | None = None, action: str = ""
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.action = action


@dataclass
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    response_format: ResponseFormat
    # True when the endpoint sent no token counts and they were estimated from the text.
    estimated: bool = False
    # The model the endpoint says answered (llama.cpp repeats the name it was asked for).
    model: str = ""
    # The endpoint ended the answer at max_tokens (finish_reason "length"): its JSON may be cut short.
    cut: bool = False


@dataclass
class Received:
    """What one request got before it ended, well or not: whether its stream opened (the endpoint took it), the
    text streamed so far and the token counts the endpoint reported (None before its usage chunk). The calls
    (calls.py) charge a request cut by its client, Stop or a failure from it."""

    opened: bool = False
    text: str = ""
    usage: tuple[int, int] | None = None


def prompt_estimate(messages: list[dict[str, str]]) -> int:
    """A prompt's tokens from its characters, about four a token, for an endpoint that sends no counts."""
    return sum(len(message.get("content", "")) for message in messages) // 4


def text_estimate(text: str) -> int:
    return (len(text) + 3) // 4


# Called with the text received so far, each time the stream brings more.
OnText = Callable[[str], Awaitable[None] | None]


class ModelClient(Protocol):
    async def complete(
        self, messages: list[dict[str, str]], schema: dict[str, Any] | None, on_text: OnText | None = None,
        temperature: float | None = None,
    ) -> Completion: ...


def response_format_of(kind: ResponseFormat, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The `response_format` parameter for one way of asking for JSON."""
    if schema is None or kind == "none":
        return None
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "answer", "schema": schema, "strict": False}}
    # llama.cpp's Python server constrains its grammar to `schema`; others ignore the extra field.
    return {"type": "json_object", "schema": schema}


def _formats_refused(error: Exception) -> bool:
    text = str(getattr(error, "message", "") or error).lower()
    return "response_format" in text or "json_schema" in text or "schema" in text or "grammar" in text


class OpenAIModel:
    """A model on an OpenAI-compatible endpoint."""

    # Per endpoint and model: the response_format the endpoint took (auto mode).
    _learned: dict[tuple[str, str], ResponseFormat] = {}

    def __init__(
        self,
        settings: ModelSettings,
        model: str,
        *,
        request_timeout: float = 300.0,
        stall_timeout: float = 60.0,
        first_token_timeout: float = 240.0,
        max_completion_tokens: int = 1200,
        temperature: float = 0.2,
        on_start: Callable[[], None] | None = None,
        on_end: Callable[[], None] | None = None,
        destinations: Destinations | None = None,
    ) -> None:
        self.settings = settings
        # Where requests may go (c.LLMPlanner.allowed_base_urls); the default list when not given.
        self.destinations = destinations or Destinations()
        self.model = model
        self.request_timeout = request_timeout
        self.stall_timeout = stall_timeout
        self.first_token_timeout = first_token_timeout
        self.max_completion_tokens = max_completion_tokens
        self.temperature = temperature
        self.on_start = on_start
        self.on_end = on_end
        self.received = Received()

    def _too_long_error(self) -> ModelError:
        limit = answer_limit(self.max_completion_tokens)
        return ModelError(
            "long",
            f"The model at {self._where()} sent an answer longer than {limit:,} characters "
            f"(c.LLMPlanner.max_completion_tokens is {self.max_completion_tokens:,}): the endpoint does not keep to "
            "it, and the answer was cut; Retry.",
            502,
        )

    def _silence_error(self, started: bool) -> ModelError:
        if started:
            return ModelError(
                "stalled",
                f"The model {self.model} stopped sending for {self.stall_timeout:g} s "
                "(c.LLMPlanner.stall_timeout); Retry.",
                504,
            )
        return ModelError(
            "stalled",
            f"The model {self.model} sent nothing for {self.first_token_timeout:g} s after the request "
            "(c.LLMPlanner.first_token_timeout; a model on a CPU reads a long prompt first); Retry, or raise "
            "the limit.",
            504,
        )

    def _client(self) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(
            base_url=self.settings.base_url,
            api_key=self.settings.api_key or NO_KEY,
            # Retries are the planner's decision (a user's Retry), never hidden in the SDK.
            max_retries=0,
            timeout=None,
            # Every request through the destination policy: to a checked address, no redirect, no proxy variable.
            http_client=http_client(self.destinations, self.settings.source),
        )

    def _formats(self) -> tuple[ResponseFormat, ...]:
        configured = self.settings.response_format
        if configured != "auto":
            return (configured,)
        learned = self._learned.get((self.settings.base_url, self.model))
        if learned:
            return FORMAT_ORDER[FORMAT_ORDER.index(learned) :]
        return FORMAT_ORDER

    async def served_models(self) -> list[str] | None:
        """The models the endpoint lists (`GET /models`), or None when it lists none or cannot say."""
        client = self._client()
        try:
            listing = client.models.list()
            page = await (asyncio.wait_for(listing, self.request_timeout) if self.request_timeout > 0 else listing)
            names = [str(getattr(item, "id", "")) for item in getattr(page, "data", None) or []]
            return [name for name in names if name] or None
        except Exception:  # noqa: BLE001 - an endpoint without a model list, or any failure: the list is unknown
            return None
        finally:
            await client.close()

    async def complete(
        self, messages: list[dict[str, str]], schema: dict[str, Any] | None, on_text: OnText | None = None,
        temperature: float | None = None,
    ) -> Completion:
        """The model's answer to `messages`, sampled at `temperature` (the client's own when None)."""
        formats = self._formats() if schema is not None else ("none",)
        last: ModelError | None = None
        for index, kind in enumerate(formats):
            try:
                completion = await self._complete_once(messages, schema, kind, on_text, temperature)
            except ModelError as error:
                retry_format = (
                    error.kind == "refused_format" and index + 1 < len(formats) and self.settings.response_format == "auto"
                )
                if retry_format:
                    last = error
                    continue
                raise
            if self.settings.response_format == "auto" and schema is not None:
                # Only an answer asked with a schema says which format the endpoint takes.
                self._learned[(self.settings.base_url, self.model)] = kind
            return completion
        assert last is not None
        raise last

    async def _complete_once(
        self,
        messages: list[dict[str, str]],
        schema: dict[str, Any] | None,
        kind: ResponseFormat,
        on_text: OnText | None,
        temperature: float | None = None,
    ) -> Completion:
        start = time.monotonic()
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "temperature": self.temperature if temperature is None else temperature,
            "max_tokens": self.max_completion_tokens,
        }
        response_format = response_format_of(kind, schema)
        if response_format is not None:
            arguments["response_format"] = response_format
        client = self._client()
        if self.on_start:
            self.on_start()
        try:
            coroutine = self._stream(client, arguments, on_text, kind, start)
            if self.request_timeout > 0:
                try:
                    return await asyncio.wait_for(coroutine, self.request_timeout)
                except asyncio.TimeoutError as error:
                    raise ModelError(
                        "timeout",
                        f"The model {self.model} did not finish within {self.request_timeout:g} s "
                        "(c.LLMPlanner.request_timeout); Retry, or ask for a faster model.",
                        504,
                    ) from error
            return await coroutine
        finally:
            if self.on_end:
                self.on_end()
            await client.close()

    async def _stream(
        self,
        client: Any,
        arguments: dict[str, Any],
        on_text: OnText | None,
        kind: ResponseFormat,
        start: float,
    ) -> Completion:
        import openai

        text = ""
        finished = cut = False
        answered_by = ""
        prompt_tokens = completion_tokens = 0
        received = self.received = Received()
        try:
            stream = await client.chat.completions.create(**arguments)
            received.opened = True
            iterator = stream.__aiter__()
            try:
                started = False
                while True:
                    # Before its first piece a model may still be reading the prompt: that wait has its own limit.
                    limit = self.stall_timeout if started else self.first_token_timeout
                    try:
                        if limit > 0:
                            chunk = await asyncio.wait_for(iterator.__anext__(), limit)
                        else:
                            chunk = await iterator.__anext__()
                    except StopAsyncIteration:
                        break
                    except asyncio.TimeoutError as error:
                        raise self._silence_error(started) from error
                    started = True
                    answered_by = answered_by or str(getattr(chunk, "model", "") or "")
                    usage = getattr(chunk, "usage", None)
                    if usage is not None:
                        prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
                        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
                        received.usage = (prompt_tokens, completion_tokens)
                    for choice in getattr(chunk, "choices", None) or []:
                        reason = getattr(choice, "finish_reason", None)
                        finished = finished or bool(reason)
                        cut = cut or reason == "length"
                        piece = getattr(getattr(choice, "delta", None), "content", None)
                        if piece:
                            text += piece
                            received.text = text
                            if len(text) > answer_limit(self.max_completion_tokens):
                                raise self._too_long_error()
                            if on_text is not None:
                                result = on_text(text)
                                if result is not None:
                                    await result
            finally:
                # Cancelled (Stop) or done: the HTTP request to the model ends here.
                await stream.close()
        except ModelError:
            raise
        except openai.APIStatusError as error:
            raise self._status_error(error, kind) from error
        except openai.APITimeoutError as error:
            raise ModelError("timeout", f"The model endpoint {self._where()} timed out; Retry.", 504) from error
        except (openai.APIConnectionError, EndpointRefused) as error:
            raise self._connection_error(error) from error
        if not finished and not text.strip():
            # llama.cpp's Python server ends a stream without a word when another request interrupts it.
            raise ModelError(
                "cut",
                f"The model endpoint {self._where()} ended its answer before writing anything (another request may "
                "have interrupted it); Retry.",
                502,
            )
        estimated = False
        if not prompt_tokens and not completion_tokens:
            # An endpoint that sends no usage while streaming (llama.cpp's Python server): about four
            # characters a token, and the usage says it is an estimate.
            estimated = True
            prompt_tokens = prompt_estimate(arguments["messages"])
            completion_tokens = text_estimate(text)
        return Completion(text, prompt_tokens, completion_tokens, time.monotonic() - start, kind, estimated,
                          answered_by, cut)

    def _where(self) -> str:
        return display_url(self.settings.base_url)

    def _connection_error(self, error: Exception) -> ModelError:
        refused = refusal_in(error)
        if refused is not None:
            # The destination policy refused it before any connection: a setting's fix, never retried.
            return ModelError("refused", refused.message, 403, action=OPEN_SETTINGS)
        cause = error.__cause__ or error.__context__
        reason = _connection_reason(cause) if cause else "connection failed"
        return ModelError(
            "unreachable",
            f"The model endpoint {self._where()} cannot be reached ({without_secrets(reason, self._secrets())}): "
            "check that it is running, and its base URL in LLM Planner Settings (or c.LLMPlanner.base_url).",
            502,
            action=OPEN_SETTINGS,
        )

    def _secrets(self) -> tuple[str, ...]:
        return (self.settings.api_key,) if self.settings.api_key else ()

    def _status_error(self, error: Any, kind: ResponseFormat) -> ModelError:
        status = int(getattr(error, "status_code", 0) or 0)
        detail = _detail(error, self._secrets())
        where = self._where()
        answered = f"The endpoint answered HTTP {status}{detail}."
        if 300 <= status < 400:
            return ModelError(
                "redirect",
                f"The model endpoint {where} answered with a redirect, which the planner does not follow: set the "
                f"base URL it moved to in LLM Planner Settings (or c.LLMPlanner.base_url). {answered}",
                424,
                action=OPEN_SETTINGS,
            )
        if status in (401, 403):
            return ModelError(
                "auth",
                f"The model endpoint {where} refused the API key: set the right key in LLM Planner Settings (or "
                f"c.LLMPlanner.api_key / NOTEBOOK_BCC_LLM_API_KEY). {answered}",
                424,
                action=OPEN_SETTINGS,
            )
        if status == 404:
            return ModelError(
                "model",
                f"The model endpoint {where} has no model {self.model!r}: pick a model it serves in LLM Planner "
                f"Settings, or check the base URL (it usually ends in /v1). {answered}",
                424,
                action=OPEN_SETTINGS,
            )
        if status == 429:
            retry_after = _retry_after(error)
            when = f"; retry after {retry_after:g} s" if retry_after is not None else "; retry later"
            return ModelError(
                "rate_limited",
                f"The model endpoint {where} is limiting requests{when}. {answered}",
                429,
                retry_after,
            )
        # llama.cpp's Python server refuses a json_schema format with HTTP 500 (its validation error), others 400.
        if status in (400, 422, 500) and kind != "none" and _formats_refused(error):
            return ModelError(
                "refused_format",
                f"The model endpoint {where} refused the response format {kind}: set response_format to another "
                f"one (c.LLMPlanner.response_format). {answered}",
                424,
            )
        text = detail.lower()
        if status in (400, 413, 422) and ("context" in text or "too long" in text or "maximum" in text or "tokens" in text):
            return ModelError(
                "context",
                f"The request is too long for the model {self.model!r}: pick a model with a longer context in LLM "
                "Planner Settings, or lower the planner's context (Settings > Notebook-BCC > max context length). "
                f"{answered}",
                424,
                action=OPEN_SETTINGS,
            )
        if status >= 500:
            return ModelError("http", f"The model endpoint {where} failed on its side; Retry. {answered}", 502)
        return ModelError(
            "http",
            f"The model endpoint {where} did not take the request: check the model settings in LLM Planner "
            f"Settings. {answered}",
            424,
            action=OPEN_SETTINGS,
        )


def _detail(error: Any, secrets: tuple[str, ...] = ()) -> str:
    """The endpoint's own error message, when its answer is an error object (`{"error": {"message"}}`,
    `{"detail"}`): one line, at most DETAIL_CHARS, never the key, a URL's userinfo or its query string. Any
    other body (an HTML page, a proxy's text) is not shown: the HTTP status says enough."""
    message = ""
    body = getattr(error, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            message = inner["message"]
        elif isinstance(body.get("detail"), str):
            message = body["detail"]
    elif isinstance(body, str) and "json" in str(getattr(getattr(error, "response", None), "headers", {}).get(
        "content-type", "")):
        # `{"error": "…"}`: the SDK hands over the string.
        message = body
    message = without_secrets(" ".join(message.split()), secrets)
    if len(message) > DETAIL_CHARS:
        message = message[: DETAIL_CHARS - 1].rstrip() + "…"
    return f": {message}" if message else ""


def _retry_after(error: Any) -> float | None:
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    value = headers.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _connection_reason(error: BaseException) -> str:
    """The deepest cause that says something: httpx wraps the socket's error in its own words."""
    causes: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and len(causes) < 8:
        causes.append(current)
        current = current.__cause__ or current.__context__
    for cause in causes:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if isinstance(cause, socket.gaierror):
            return "host not found"
    text = " ".join(str(cause) for cause in causes).lower()
    if "refused" in text:
        return "connection refused"
    if "name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text:
        return "host not found"
    if "timed out" in text or "timeout" in text:
        return "connection timed out"
    last = causes[-1]
    return str(last).split("\n")[0][:200] or type(last).__name__
