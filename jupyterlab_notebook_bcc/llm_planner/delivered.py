"""Values the task asked for stay as they were checked. Once a step has delivered one of the task's values
and its check in the kernel passed, a later step's code that assigns it again has that assignment left out:
the line becomes a comment saying so, and the code goes on with the checked value. Seen on
Qwen2.5-Coder-1.5B: a step meant to deliver a p-value recomputed the correlation an earlier step had
delivered, unrounded, over its rounded, checked value (DABench 66). A value that is the later step's own
to deliver is not kept: when the plan gives `p_value` to a later step, that step's `p_value = r_value**2`
is sent as written (DABench 11).

Only whole statements at the top of the cell are touched (`x = …`, `x += …`, `x: float = …`, and names
in a tuple target, which become `_`); code that does not parse is sent as written."""

from __future__ import annotations

import ast
from collections.abc import Iterable


def kept_note(names: Iterable[str]) -> str:
    listed = ", ".join(f"`{name}`" for name in names)
    return f"# {listed}: kept as an earlier step delivered and checked it"


def keep_delivered(code: str, protected: Iterable[str]) -> tuple[str, list[str]]:
    """`code` with its top-level assignments to `protected` names left out, and the names it left out."""
    names = set(protected)
    if not names:
        return code, []
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code, []
    lines = code.split("\n")
    # Edits from the bottom up, so that the line numbers above stay true.
    kept: list[str] = []
    for statement in reversed(tree.body):
        targets = _targets(statement)
        hit = [target for target in targets if isinstance(target, ast.Name) and target.id in names]
        if not hit:
            continue
        if len(hit) == len(targets):
            if not _comment_out(lines, statement, kept_note(dict.fromkeys(target.id for target in hit))):
                continue
        else:
            _blank_names(lines, hit)
        kept[:0] = [target.id for target in hit]
    if not kept:
        return code, []
    edited = "\n".join(lines)
    try:
        compile(edited, "<cell>", "exec")
    except SyntaxError:
        return code, []
    return edited, list(dict.fromkeys(kept))


def _targets(statement: ast.stmt) -> list[ast.expr]:
    """The names a top-level assignment writes, flattened from tuples; [] when it writes anything else."""
    if isinstance(statement, ast.Assign):
        found: list[ast.expr] = []
        for target in statement.targets:
            found.extend(target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])
        return found
    if isinstance(statement, (ast.AugAssign, ast.AnnAssign)):
        return [statement.target]
    return []


def _comment_out(lines: list[str], statement: ast.stmt, note: str) -> bool:
    """The statement's lines as comments under `note`; False when it shares a line with another one."""
    first, last = statement.lineno - 1, (statement.end_lineno or statement.lineno) - 1
    before = _chars(lines[first], statement.col_offset)
    after = lines[last][len(_chars(lines[last], statement.end_col_offset or 0)) :].strip()
    if before.strip() or (after and not after.startswith("#")):
        # `a = 1; b = 2`: a line shared with other statements is left as it is.
        return False
    replaced = [note] + [f"# {line[len(before):]}" for line in lines[first : last + 1]]
    lines[first : last + 1] = [before + line for line in replaced]
    return True


def _chars(line: str, offset: int) -> str:
    """The text before a column that `ast` counts in UTF-8 bytes."""
    return line.encode("utf-8")[:offset].decode("utf-8", errors="ignore")


def _blank_names(lines: list[str], names: list[ast.Name]) -> None:
    """`a, b = f()` with `a` kept: `_, b = f()`."""
    for name in sorted(names, key=lambda n: (n.lineno, n.col_offset), reverse=True):
        row = name.lineno - 1
        line = lines[row]
        start = len(_chars(line, name.col_offset))
        end = len(_chars(line, name.end_col_offset or name.col_offset))
        lines[row] = line[:start] + "_" + line[end:]
