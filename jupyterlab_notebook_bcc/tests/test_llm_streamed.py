"""A streamed answer is read in time linear in its length (#41): an unclosed 200 KB string field arriving in
small pieces costs the event loop milliseconds, not seconds, and reads the same as a whole answer. The code
read from it is sent without the fence or the stray closing brace a model puts around it."""

from __future__ import annotations

import json
import time

import pytest

from jupyterlab_notebook_bcc.llm_planner.answers import StreamedField, cell_code, complete_string_field

SAMPLES = [
    '{"explanation": "Sum it.", "code": "x = 1\\nprint(x)"}',
    '{"explanation" :  "a \\"quoted\\" word \\\\ and \\u00e9", "code":"y = \\"\\\\\\""}',
    '{"code": 5, "explanation": "no code string"}',
    '{"note": "the \\"code\\" key in a value", "code": "z = 2"}',
    '{"explanation": "raw\nnewline", "code": "ok"}',
    '{"explanation": "cut',
]


@pytest.mark.parametrize("text", SAMPLES)
@pytest.mark.parametrize("size", [1, 3, 7])
def test_pieces_read_as_the_whole_text_does(text: str, size: int) -> None:
    for name in ("explanation", "code"):
        field = StreamedField(name)
        seen: list[str | None] = []
        for end in range(size, len(text) + size, size):
            seen.append(field.read(text[:end]))
        assert seen[-1] == complete_string_field(text, name)
        # Never a value before the whole-text reader would give one for that prefix.
        for index, value in enumerate(seen):
            prefix = text[: (index + 1) * size]
            assert value == complete_string_field(prefix, name) or complete_string_field(prefix, name) is not None


def test_an_unclosed_200_kb_field_in_small_pieces_costs_milliseconds() -> None:
    text = '{"explanation": "x", "code": "' + "a\\\"" * 70_000
    field = StreamedField("code")
    start = time.monotonic()
    for end in range(30, len(text), 8):
        assert field.read(text[:end]) is None
    elapsed = time.monotonic() - start
    # 26,000 pieces; the whole-text reader (complete_string_field at every piece) took 15 s here.
    assert elapsed < 1.0, elapsed
    closed = text + '"}'
    assert field.read(closed) == json.loads(closed)["code"]


@pytest.mark.parametrize(
    ("written", "sent"),
    [
        # Seen on Qwen2.5-Coder-1.5B (DABench 70): the JSON's closing brace inside the code, twice.
        ("rmse = 3.6\nprint('RMSE:', rmse)}", "rmse = 3.6\nprint('RMSE:', rmse)"),
        ("x = {'a': 1}\nprint(x)\n}}", "x = {'a': 1}\nprint(x)"),
        ("```python\ny = [1, 2]\n```", "y = [1, 2]"),
        # Code that compiles, or that no stripping makes compile, is sent as written.
        ("d = {'a': {'b': 1}}", "d = {'a': {'b': 1}}"),
        ("%matplotlib inline\nx = 1", "%matplotlib inline\nx = 1"),
        ("print('unclosed'", "print('unclosed'"),
        ("if x:\nprint(x)}", "if x:\nprint(x)}"),
        # Seen on Qwen2.5-Coder-1.5B (DABench 57): JSON's \n inside a one-line string, which the JSON made a line
        # break; written back as the \n the code meant, with the stray brace after it.
        ("s = df['c'].str.replace(r'\n', '', regex=True)\nprint(s)}", "s = df['c'].str.replace(r'\\n', '', regex=True)\nprint(s)"),
        ('print("a\nb")', 'print("a\\nb")'),
        # A triple-quoted string keeps its line breaks; a comment's quote opens no string.
        ('t = """a\nb"""\n# don\'t\nprint(t)', 't = """a\nb"""\n# don\'t\nprint(t)'),
    ],
)
def test_a_stray_closing_bracket_after_the_code_is_not_sent(written: str, sent: str) -> None:
    assert cell_code(written) == sent
