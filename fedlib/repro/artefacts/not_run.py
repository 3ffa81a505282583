"""Why nothing of ours ran, in one line for every cell: what a figure of the paper's values alone says in its key
and its panels' titles (:mod:`fedlib.repro.artefacts.figures`)."""

from __future__ import annotations

import re

__all__ = ["not_run_summary", "short_reason"]


def not_run_summary(notes, label=None) -> str:
    """Why none of the cells of ``notes`` ran, in one line for every cell rather than the first cell's: the
    datasets absent here, and the GPU the rest need with the range of its estimated time a run ("not run: needs a
    GPU (est. 7-65 GPU-min a run); SVHN absent here").  ``label``: a dataset's name in words, for the notes that
    give its key ("dataset 'svhn' is absent")."""
    notes = [str(n) for n in notes if str(n).strip()]
    found = [m for n in notes for m in re.findall(r"([\w.-]+) is absent here|dataset '([\w.-]+)' is absent", n)]
    named = {}  # one name a dataset, whichever way a note gives it ("SVHN is absent here", "dataset 'svhn' …")
    for a, b in found:
        named.setdefault((a or b).lower(), a or (label(b) if label is not None else b))
    absent = list(named.values())
    minutes, cpu_h = [], []  # a GPU's estimated minutes a run; else (GPU time not measured) the CPU-hours
    for n in notes:
        if "absent here" in n or "GPU" not in n:
            continue
        m, c = re.search(r"est\. ([\d.]+) GPU-(min|h)", n), re.search(r"([\d.]+) CPU-h", n)
        if m:
            minutes.append(float(m.group(1)) * (60 if m.group(2) == "h" else 1))
        elif c:
            cpu_h.append(float(c.group(1)))

    def span(values, fmt):
        lo, hi = min(values), max(values)
        return fmt.format(lo) if fmt.format(lo) == fmt.format(hi) else f"{fmt.format(lo)}–{fmt.format(hi)}"

    parts = []
    if minutes:
        parts.append(f"needs a GPU (est. {span(minutes, '{:.0f}')} GPU-min a run)")
    elif cpu_h:
        parts.append(f"needs a GPU (est. {span(cpu_h, '{:.1f}')} CPU-h a run on one core; GPU time not measured)")
    if absent:
        parts.append(f"{', '.join(absent)} absent here")
    return ("not run: " + "; ".join(parts)) if parts else (notes[0] if notes else "not run")


def short_reason(note: str, scale: str) -> str:
    """A cell's "not run" note in a few words, for a label in the figure."""
    note = str(note or "")
    if "absent" in note:
        return "not run: data absent"
    if "GPU" in note or "cuda" in note:
        return "not run: needs a GPU"
    return f"not run in {scale}" if scale != "GPU" else "not run on the GPU"
