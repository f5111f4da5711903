"""The README's first screen shows the product and how to try it; every relative link of README.md and
docs/*.md reaches a file, and a section of it when the link names one."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# The README's first screen: what a visitor sees before scrolling.
FIRST_SCREEN = 30

FENCE = re.compile(r"^(```|~~~).*?^\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"`[^`\n]*`")
# [text](target) and ![alt](target); a target has no spaces (an optional "title" is not used here).
LINK = re.compile(r"!?\[(?:[^\]\n]|\n(?!\n))*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def first_screen() -> str:
    return "\n".join(README.read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN])


def without_code(text: str) -> str:
    """The text outside fenced blocks and code spans, where links and headings are."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file's headings, with GitHub's -1, -2 … for repeated ones."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for match in HEADING.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def relative_links(path: Path) -> list[str]:
    targets = LINK.findall(without_code(path.read_text(encoding="utf-8")))
    return [t for t in targets if not re.match(r"^[a-z][a-z0-9+.-]*:", t, re.I)]


MARKDOWN = [README, *sorted(DOCS.glob("*.md"))]


def test_the_first_screen_shows_a_picture_of_a_run_that_exists() -> None:
    images = re.findall(r"!\[([^\]]+)\]\(([^)\s]+)\)", first_screen())
    assert images, f"no image in the README's first {FIRST_SCREEN} lines"
    alt, target = images[0]
    assert len(alt.split()) >= 5, "the picture needs words that say what it shows"
    picture = ROOT / target
    assert picture.is_file(), f"{target} is not in the repository (ui-tests/tests/readmeShot.spec.ts makes it)"
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_first_screen_has_the_three_steps_that_work_before_a_release() -> None:
    screen = first_screen()
    # From a clone: build the wheel, install it in a fresh virtualenv, start JupyterLab.
    steps = ["git clone", "make wheel", "python3 -m venv", "pip install dist/*.whl", "jupyter lab"]
    positions = [screen.find(step) for step in steps]
    assert -1 not in positions, dict(zip(steps, positions))
    assert positions == sorted(positions), "the steps are out of order"
    # Until a release is on PyPI, `pip install jupyterlab-notebook-bcc` is what comes later, not step 1.
    assert "pip install jupyterlab-notebook-bcc" in screen
    assert not re.search(r"^pip install jupyterlab-notebook-bcc", screen, re.M)


def test_the_first_screen_names_the_two_commands_of_a_clone() -> None:
    screen = first_screen()
    assert "`make demo`" in screen
    assert "`make test`" in screen


def test_the_readme_says_what_bcc_and_planner_mean_and_links_the_manual() -> None:
    text = README.read_text(encoding="utf-8")
    assert re.search(r"^- \*\*Planner\*\*: ", text, re.M)
    assert re.search(r"^- \*\*BCC\*\*: ", text, re.M)
    assert "](docs/README.md)" in text
    assert "## Development" in text


@pytest.mark.parametrize("path", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_reaches_a_file_and_its_section(path: Path) -> None:
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        destination = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not destination.exists():
            broken.append(f"{target}: no such file")
        elif anchor and destination.suffix == ".md" and anchor not in anchors(destination):
            broken.append(f"{target}: no heading with the anchor #{anchor}")
    assert broken == []


def test_the_link_checker_sees_links_and_anchors_as_github_does(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "# The `v1` loop: one step\n\n## Errors\n\n```\n# not a heading [x](gone.md)\n```\n\n## Errors\n\n"
        "See [a](#the-v1-loop-one-step), [b](#errors-1), `[c](gone.md)` and [d](https://example.com).\n",
        encoding="utf-8",
    )
    assert anchors(page) == {"the-v1-loop-one-step", "errors", "errors-1"}
    assert relative_links(page) == ["#the-v1-loop-one-step", "#errors-1"]
