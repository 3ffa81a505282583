"""Markdown pages read in a plain editor as well as rendered: no line longer than :data:`MAX_LINE`.

:func:`fold` breaks a long paragraph, list item or footnote into several source lines (Markdown
renders them as one); :func:`narrow_tables` leaves out of a wide table the columns that ran nowhere,
naming them, so that each row fits; a table that still does not fit is replaced by a link to its file.
Table rows and headings are never folded: they would break.
"""

from __future__ import annotations

import re
import textwrap

__all__ = ["MAX_LINE", "fold", "narrow_tables", "anchor", "number_ranges"]

#: The longest line a generated page may hold.
MAX_LINE = 400
_WRAP = 300  # where a folded line is broken: well inside MAX_LINE
_MARKER = re.compile(r"^(\s*)(\* |- |\d+\. |\[\^[^\]]+\]: )?")
_CELL = re.compile(r"(?<!\\)\|")


def fold(lines: list[str]) -> list[str]:
    """Every line longer than :data:`MAX_LINE` that is prose (not a table row, heading or HTML) broken at
    spaces into lines of at most about 300 characters, continuation lines indented under a list marker."""
    out = []
    for line in lines:
        if len(line) <= MAX_LINE or line.lstrip().startswith(("|", "#", "<")):
            out.append(line)
            continue
        lead, marker = _MARKER.match(line).groups()
        indent = " " * (len(lead) + (4 if marker and marker.startswith("[^") else len(marker or "")))
        out += textwrap.wrap(line, width=_WRAP, subsequent_indent=indent, break_long_words=False,
                             break_on_hyphens=False)
    return out


def _cells(row: str) -> list[str]:
    return [c.strip() for c in _CELL.split(row.strip())[1:-1]]


def _not_run(cell: str) -> bool:
    """"82.36±0.67 → not run[^1]" (paper → ours) or "not run": a cell of ours that did not run."""
    return cell.split("→")[-1].strip().startswith("not run")


def narrow_tables(lines: list[str], source: str) -> list[str]:
    """Each table in ``lines`` with a row longer than :data:`MAX_LINE` without its columns where none of ours
    ran ("paper → not run"; named below it, with a link to ``source``, the full table); a table that still does not fit
    becomes that link alone."""
    out, i = [], 0
    while i < len(lines):
        if not lines[i].startswith("|"):
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].startswith("|"):
            j += 1
        block = lines[i:j]
        out += block if max(map(len, block)) <= MAX_LINE else _narrow(block, source)
        i = j
    return out


def _narrow(block: list[str], source: str) -> list[str]:
    rows = [_cells(r) for r in block]
    head, body = rows[0], rows[2:]
    idle = [k for k in range(1, len(head)) if body and all(_not_run(r[k]) for r in body if k < len(r))]
    keep = [k for k in range(len(head)) if k not in idle]
    narrowed = ["| " + " | ".join(r[k] for k in keep if k < len(r)) + " |" for r in [head, ["---"] * len(head), *body]]
    note = (f"*{len(idle)} columns not run here are left out of this copy* ({', '.join(head[k] for k in idle)}): "
            f"the full table, with why each was not run, is [{source.rsplit('/', 1)[-1]}]({source}).")
    if idle and max(map(len, narrowed)) <= MAX_LINE:
        return narrowed + ["", note]
    return [f"*A table too wide to print here* ({len(body)} rows, {len(head)} columns): "
            f"[{source.rsplit('/', 1)[-1]}]({source})."]


def anchor(*parts: str) -> str:
    """An HTML id from parts ("fedlc", "quick", "table1" → "fedlc-quick-table1"), written beside the heading it
    names (``<a id="…"></a>``) so that a link to it resolves wherever the page is rendered."""
    return "-".join(p.lower().replace(" ", "-").replace("/", "-") for p in parts)


def number_ranges(numbers) -> str:
    """"3–20, 25, 27, 28": three or more consecutive whole numbers as a range (seeds, deviation numbers)."""
    runs: list[list[int]] = []
    for n in sorted(set(int(v) for v in numbers)):
        if runs and n == runs[-1][-1] + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 2 else ", ".join(map(str, r)) for r in runs)
