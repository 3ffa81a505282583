"""Tables and figures written with their sidecars.

* :func:`save_figure` -- ``<name>.pdf`` + ``<name>.png`` + ``<name>.json``, once the figure obeys
  the figure rules (:mod:`fedlib.repro.artefacts.figure_rules` and, read from the data without a
  declaration, :mod:`fedlib.repro.artefacts.figure_checks_data`);
* :func:`save_table` -- ``<name>.csv`` + ``<name>.md`` + ``<name>.json``.

The JSON sidecar (:func:`fedlib.repro.artefacts.provenance.provenance`) records what the index
(:mod:`fedlib.repro.artefacts.index`) needs and what makes the artefact reproducible: title, caption,
kind, notebook, profile and its deviations from the paper, parameters, seeds, datasets, the
fedlib version and the git commit.  A placeholder (an artefact made without its data) never
replaces a real one.
"""

from __future__ import annotations

import io
import json
import math
import os
from pathlib import Path
from typing import Any

from .provenance import provenance, scrub_paths
from .style import RC

__all__ = ["save_figure", "save_table", "frame_to_markdown", "read_sidecar", "is_placeholder", "unchanged", "VOLATILE"]


def _sidecar_text(body: dict) -> str:
    return scrub_paths(json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False)) + "\n"


#: Sidecar keys that say when, at which commit, on which CPU and how fast an artefact was made, not what it is.
VOLATILE = ("created", "git_commit", "cpu", "wall_time_s")


def unchanged(sidecar: Path, text: str, files: dict[str, bytes], kept: tuple[str, ...] = ()) -> bool:
    """The artefact on disk is this one: its ``files`` (name -> bytes) hold these bytes, the files ``kept``
    exist, and its sidecar holds ``text`` (:func:`_sidecar_text` of its body) but for :data:`VOLATILE`.  Then a
    render rewrites nothing, and the sidecar keeps the commit that first made it: rendering one paper (or one
    notebook) leaves every output it did not change as it is.  A sidecar from uncommitted code (``-dirty``) is never kept."""
    try:
        old = json.loads(sidecar.read_text())
    except (OSError, ValueError):
        return False
    if str(old.get("git_commit", "")).endswith("-dirty"):
        return False
    new = json.loads(text)
    if {k: v for k, v in old.items() if k not in VOLATILE} != {k: v for k, v in new.items() if k not in VOLATILE}:
        return False
    folder = sidecar.parent
    return all((folder / n).is_file() and (folder / n).read_bytes() == data for n, data in files.items()) and \
        all((folder / n).is_file() for n in kept)


def read_sidecar(path: str | os.PathLike) -> dict:
    return json.loads(Path(path).read_text())


# ------------------------------------------------------------------------ saving
#: sidecar path -> kind ("figure" / "table") of every artefact saved by this process
_SAVED: dict[Path, str] = {}


def _claim(out: Path, name: str, kind: str) -> Path:
    """The sidecar path of ``name``; refuses (before any file is written) a name that
    this process already used for an artefact of the other kind in the same folder,
    whose sidecar would otherwise be silently replaced."""
    sidecar = (out / f"{name}.json").resolve()
    earlier = _SAVED.get(sidecar)
    if earlier is not None and earlier != kind:
        raise ValueError(f"name {name!r} is already used by a {earlier} saved in {out}; "
                         f"give this {kind} another name")
    _SAVED[sidecar] = kind
    return out / f"{name}.json"


def _existing_is_real(sidecar: Path) -> bool:
    try:
        return sidecar.exists() and not json.loads(sidecar.read_text()).get("placeholder", False)
    except (OSError, json.JSONDecodeError):
        return False


def is_placeholder(sidecar: str | os.PathLike) -> bool:
    """Whether a saved artefact is a placeholder (made without its data)."""
    try:
        return bool(json.loads(Path(sidecar).read_text()).get("placeholder", False))
    except (OSError, json.JSONDecodeError):
        return False


def _out(out_dir) -> Path:
    if out_dir is None:
        raise ValueError("out_dir is required: figures/<paper>/<profile> (fedlib.repro.artefacts.provenance.default_output_dir)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return out


def save_figure(fig, name: str, out_dir: str | os.PathLike | None = None, *, title: str = "", caption: str = "",
                close: bool = False, placeholder: bool = False, waive: dict[str, str] | None = None,
                **meta: Any) -> dict[str, Path] | None:
    """Write ``fig`` as ``<out_dir>/<name>.pdf`` and ``.png`` (vector and raster) plus the
    ``.json`` sidecar, once it obeys the figure rules (:mod:`fedlib.repro.artefacts.figure_rules`),
    stamped "Trained on: …" with ``meta``'s ``datasets`` (and ``stand_in``):
    a figure that breaks one raises the rule's :class:`~fedlib.repro.artefacts.figure_rules.FigureRuleError`
    before any file is written; ``waive`` (``{rule: reason}``) lets a known break through,
    recorded in the sidecar.

    ``meta`` goes to :func:`provenance` (profile, experiment, parameters, seeds,
    datasets, deviations, ...).  ``placeholder=True`` marks a figure made without
    its data (e.g. the dataset is absent): it never replaces a real artefact of
    the same name, and returns None when it was not written.  A figure that draws nothing (no axes
    with data: a placeholder, panels of "not run") writes no PDF or PNG, only the sidecar, whose
    ``not_rendered`` says what the figure would show and why it is empty.  Returns the paths by suffix.
    """
    from .figure_checks_data import DATA_RULES, check_data
    from .figure_marks import mend, stamp_setting
    from .figure_rules import check_figure, stamp_datasets

    out = _out(out_dir)
    sidecar = _claim(out, name, "figure")
    if placeholder and _existing_is_real(sidecar):
        return None
    mend(fig, meta.get("datasets"), dpi=RC["savefig.dpi"])
    stamp_setting(fig, stamp_datasets(fig, meta.get("datasets"), meta.get("stand_in")), meta)
    waive = dict(waive or {})
    checks = check_figure(fig, name=name, caption=caption, seeds=meta.get("seeds"), datasets=meta.get("datasets"),
                          dpi=RC["savefig.dpi"], waive={k: v for k, v in waive.items() if k not in DATA_RULES})
    checks.update(check_data(fig, name=name, title=title, caption=caption, meta=meta, dpi=RC["savefig.dpi"],
                             waive={k: v for k, v in waive.items() if k in DATA_RULES}))
    import matplotlib

    from .figure_checks_drawn import draws
    from .figure_rules import facts

    blank = not any(draws(ax) for ax in fig.axes)
    paths = {} if blank else {"pdf": out / f"{name}.pdf", "png": out / f"{name}.png"}
    if blank:  # a figure of nothing is not drawn: its sidecar (and the paper's page) says what would be there, and why
        for suffix in ("pdf", "png"):
            (out / f"{name}.{suffix}").unlink(missing_ok=True)
    png = b""
    if not blank:  # the raster first: an unchanged figure (same pixels, same sidecar) is not written again
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", bbox_inches="tight", dpi=RC["savefig.dpi"])
        png = buffer.getvalue()
    body = provenance(**meta)
    body.update({"name": name, "kind": "figure", "title": title, "caption": caption, "placeholder": placeholder,
                 "files": {k: p.name for k, p in paths.items()}, "figure_checks": checks})
    if blank:
        said = [facts(ax).empty or " ".join(t.get_text() for t in ax.texts) for ax in fig.axes]
        body["not_rendered"] = " ".join(" ".join(t.split()) for t in said if t.strip()) or "nothing of ours ran"
    if waive:
        body["figure_waivers"] = dict(waive)
    text = _sidecar_text(body)
    if not unchanged(sidecar, text, {f"{name}.png": png} if png else {}, (f"{name}.pdf",) if png else ()):
        if png:
            paths["png"].write_bytes(png)
            with matplotlib.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42}):
                fig.savefig(paths["pdf"], bbox_inches="tight")
        sidecar.write_text(text)
    paths["json"] = sidecar
    if close:
        import matplotlib.pyplot as plt

        plt.close(fig)
    return paths


def _fmt(value: Any, floatfmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float):
        return format(value, floatfmt)
    return str(value).replace("|", "\\|").replace("\n", " ")


def frame_to_markdown(frame, floatfmt: str = ".2f", index: bool = False) -> str:
    """A pipe table (GitHub Markdown) without needing the ``tabulate`` package."""
    df = frame.reset_index() if index else frame
    header = [_fmt(str(c), floatfmt) for c in df.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v, floatfmt) for v in row) + " |")
    return "\n".join(lines) + "\n"


def save_table(frame, name: str, out_dir: str | os.PathLike | None = None, *, title: str = "", caption: str = "",
               markdown: str | None = None, floatfmt: str = ".2f", placeholder: bool = False,
               **meta: Any) -> dict[str, Path] | None:
    """Write a DataFrame as ``<name>.csv`` (full precision), ``<name>.md`` (``markdown``
    if given, else the frame as a pipe table, with title and caption) and the sidecar.
    ``placeholder`` as in :func:`save_figure`."""
    out = _out(out_dir)
    sidecar = _claim(out, name, "table")
    if placeholder and _existing_is_real(sidecar):
        return None
    paths = {"csv": out / f"{name}.csv", "md": out / f"{name}.md"}
    csv = frame.to_csv(index=False).encode()
    body_md = markdown if markdown is not None else frame_to_markdown(frame, floatfmt)
    head = (f"**{title}**\n\n" if title else "") + (f"{caption}\n\n" if caption else "")
    md = (head + body_md).encode()
    body = provenance(**meta)
    body.update({"name": name, "kind": "table", "title": title, "caption": caption, "placeholder": placeholder,
                 "files": {k: p.name for k, p in paths.items()}})
    text = _sidecar_text(body)
    if not unchanged(sidecar, text, {paths["csv"].name: csv, paths["md"].name: md}):  # else: as it is on disk
        paths["csv"].write_bytes(csv)
        paths["md"].write_bytes(md)
        sidecar.write_text(text)
    paths["json"] = sidecar
    return paths
