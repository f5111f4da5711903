"""Reading what a model wrote: JSON where it kept to the schema, tolerantly where it did not (a fenced
block, text around the object, a raw line break or a Python escape inside a string), and string fields as
soon as they are complete in a stream."""

from __future__ import annotations

import json
import re
from typing import Any

# Not strict: a line break written as itself inside a string (JSON wants \\n) is read as the line break it
# means. Qwen2.5-Coder-1.5B under llama.cpp's JSON grammar writes a cell's lines so.
_DECODER = json.JSONDecoder(strict=False)
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.DOTALL)


def _python_escapes(text: str) -> str:
    """`text` with the escapes JSON does not have written as JSON means them: `\\'` a quote, `\\d` a
    backslash and a d (a pattern's). JSON's own escapes are kept."""

    def spelled(escape: re.Match[str]) -> str:
        char = escape.group(1)
        if char in '"\\/bfnrt' or len(char) == 5:
            return escape.group(0)
        return "'" if char == "'" else "\\\\" + char

    return _ESCAPE.sub(spelled, text)


def _decode(text: str, start: int = 0, whole: bool = False) -> Any:
    """The JSON value at `start` (`whole`: and nothing after it); with Python's escapes read as JSON's
    when only they stood in the way."""
    try:
        value, end = _DECODER.raw_decode(text, start)
    except ValueError:
        if "\\" not in text:
            raise
        text, start = _python_escapes(text[start:]), 0
        value, end = _DECODER.raw_decode(text, start)
    if whole and text[end:].strip():
        raise ValueError("text after the JSON value")
    return value


class AnswerUnreadable(ValueError):
    """The model's answer holds no JSON object of the expected shape."""


def first_object(text: str) -> dict[str, Any]:
    """The first JSON object in `text`: the whole text, a ```json fence, or an object amid other words."""
    stripped = text.strip()
    candidates = [stripped]
    fence = stripped.find("```")
    if fence >= 0:
        body = stripped[fence + 3 :]
        newline = body.find("\n")
        if newline >= 0 and body[:newline].strip().isalnum():
            body = body[newline + 1 :]
        end = body.find("```")
        candidates.append(body[:end] if end >= 0 else body)
    for candidate in candidates:
        try:
            value = _decode(candidate.strip(), whole=True)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    # Scan for an opening brace that starts a whole object (linear in practice: each attempt stops at its
    # first error, and the number of braces bounds the attempts).
    start = stripped.find("{")
    attempts = 0
    while start >= 0 and attempts < 200:
        attempts += 1
        try:
            value = _decode(stripped, start)
        except (ValueError, RecursionError):
            start = stripped.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = stripped.find("{", start + 1)
    preview = " ".join(stripped.split())[:160]
    raise AnswerUnreadable(f"no JSON object in the answer ({preview!r})" if preview else "the answer is empty")


def complete_string_field(text: str, name: str) -> str | None:
    """The value of `"name": "…"` in a JSON text still being written, once its closing quote has arrived."""
    key = f'"{name}"'
    position = text.find(key)
    while position >= 0:
        index = position + len(key)
        while index < len(text) and text[index] in " \t\r\n":
            index += 1
        if index < len(text) and text[index] == ":":
            index += 1
            while index < len(text) and text[index] in " \t\r\n":
                index += 1
            if index >= len(text):
                return None
            if text[index] != '"':
                return None
            try:
                value = _decode(text, index)
            except ValueError:
                return None
            return value if isinstance(value, str) else None
        position = text.find(key, position + 1)
    return None


_QUOTE_OR_ESCAPE = re.compile(r'["\\]')


class StreamedField:
    """`complete_string_field` for a text that grows by pieces, in time linear in its length: each call scans
    only what arrived since the call before (rescanning an unclosed 200 KB string at every piece cost seconds
    of the event loop)."""

    def __init__(self, name: str) -> None:
        self.key = f'"{name}"'
        self.find_from = 0
        # The index of the value's opening quote once found, and how far its body was scanned.
        self.start = -1
        self.scanned = 0
        self.done = False
        self.value: str | None = None

    def read(self, text: str) -> str | None:
        """The field's value once its closing quote has arrived, else None."""
        if self.done:
            return self.value
        if self.start < 0 and not self._find_start(text):
            return None
        index = self.scanned
        while True:
            found = _QUOTE_OR_ESCAPE.search(text, index)
            if found is None:
                self.scanned = len(text)
                return None
            if found.group() == "\\":
                if found.end() >= len(text):
                    # The escaped character has not arrived yet.
                    self.scanned = found.start()
                    return None
                index = found.end() + 1
                continue
            try:
                value = _decode(text[self.start : found.end()])
            except ValueError:
                value = None
            self.done = True
            self.value = value if isinstance(value, str) else None
            return self.value

    def _find_start(self, text: str) -> bool:
        """Finds `"name": "`; False while it has not (wholly) arrived."""
        position = text.find(self.key, self.find_from)
        while position >= 0:
            index = position + len(self.key)
            while index < len(text) and text[index] in " \t\r\n":
                index += 1
            if index >= len(text):
                self.find_from = position
                return False
            if text[index] == ":":
                index += 1
                while index < len(text) and text[index] in " \t\r\n":
                    index += 1
                if index >= len(text):
                    self.find_from = position
                    return False
                if text[index] != '"':
                    # Not a string: the field is read as absent, as complete_string_field does.
                    self.done = True
                    return False
                self.start = index
                self.scanned = index + 1
                return True
            position = text.find(self.key, position + 1)
        self.find_from = max(0, len(text) - len(self.key) + 1)
        return False


def string_field(answer: dict[str, Any], *names: str) -> str:
    """The first non-empty string among `names` (models rename fields: `code`, `python`, …)."""
    for name in names:
        value = answer.get(name)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and all(isinstance(line, str) for line in value) and value:
            return "\n".join(value)
    return ""


def unfence(code: str) -> str:
    """Code without a surrounding ``` fence (a model often adds one inside the JSON string)."""
    text = code.strip()
    if text.startswith("```"):
        newline = text.find("\n")
        text = text[newline + 1 :] if newline >= 0 else ""
        if text.rstrip().endswith("```"):
            text = text.rstrip()[:-3]
    return text.strip("\n")


def cell_code(code: str) -> str:
    """The code of a cell answer as it is sent: without its fence; where it compiles only so, with the line
    after each block header indented under it (`indent_bodies`), or without closing brackets after it that
    no bracket opened (a small model leaves the JSON's `}` inside the string). Anything else (IPython's own
    syntax, code broken otherwise) is sent as written."""
    text = unfence(code)
    if _compiles(text):
        return text
    indented = indent_bodies(text)
    if indented != text and _compiles(indented):
        return indented
    for candidate in dict.fromkeys((text, escape_line_breaks_in_strings(text))):
        if candidate != text and _compiles(candidate):
            return candidate
        stripped = candidate.rstrip()
        while stripped and stripped[-1] in ")]}":
            stripped = stripped[:-1].rstrip()
            if _compiles(stripped):
                return stripped
    return text


def escape_line_breaks_in_strings(code: str) -> str:
    """`code` with each line break inside a one-line string literal written as `\\n`: JSON's `\\n` in
    `'\\n'` or `r'\\n'` arrives as a line break, which ends the code's string too soon (DABench 57).
    Triple-quoted strings and comments are kept as they are."""
    out: list[str] = []
    index, size = 0, len(code)
    while index < size:
        char = code[index]
        if char == "#":
            end = code.find("\n", index)
            end = size if end < 0 else end
            out.append(code[index:end])
            index = end
            continue
        if char not in "'\"":
            out.append(char)
            index += 1
            continue
        quote = code[index : index + 3] if code[index : index + 3] in ("'''", '"""') else char
        out.append(quote)
        index += len(quote)
        while index < size and not code.startswith(quote, index):
            inner = code[index]
            if inner == "\\" and index + 1 < size:
                out.append(code[index : index + 2])
                index += 2
                continue
            out.append("\\n" if inner == "\n" and len(quote) == 1 else inner)
            index += 1
        out.append(code[index : index + len(quote)])
        index += len(quote)
    return "".join(out)


# A line that opens a block: `if …:`, `else:`, `for …:`, `try:`, `def …:`, … (a comment may follow the colon).
_HEADER = re.compile(r"(?:if|elif|else|for|while|try|except|finally|with|def|class|async)\b.*:\s*(?:#.*)?")


def indent_bodies(code: str) -> str:
    """`code` with the first line after each block header indented under it where it is not: seen on
    Qwen2.5-Coder-1.5B, which wrote an if/else without the indentation of its bodies in the JSON string, and
    wrote it so again when told of the IndentationError (DABench 25, 338). One line a body: where a body had
    more, the lines after its first stay where the model put them."""
    lines = code.split("\n")
    header: str | None = None
    for index, line in enumerate(lines):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if header is not None:
            depth = len(header) - len(header.lstrip())
            if len(line) - len(line.lstrip()) <= depth:
                line = " " * (depth + 4) + line.lstrip()
                lines[index] = line
        header = line if _HEADER.fullmatch(line.strip()) else None
    return "\n".join(lines)


def _compiles(code: str) -> bool:
    try:
        compile(code, "<cell>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return False
    return True
