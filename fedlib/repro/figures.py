"""One look for every figure and table, and files that say where they came from.

* :func:`use_style` -- the shared matplotlib/seaborn style: seaborn's
  colour-blind-safe ``"colorblind"`` palette, TrueType fonts embedded in PDF/PS
  (``pdf.fonttype = ps.fonttype = 42``), one size for text.
* :func:`save_figure` -- ``<name>.pdf`` + ``<name>.png`` + ``<name>.json``.
* :func:`save_table` -- ``<name>.csv`` + ``<name>.md`` + ``<name>.json``.

The JSON sidecar records what the index (:mod:`fedlib.repro.report`) needs and what
makes the artefact reproducible: title, caption, kind, notebook, profile and
its deviations from the paper, parameters, seeds, datasets, the fedlib version
and the git commit (``git rev-parse HEAD``, with ``-dirty`` when the tree has
uncommitted changes, ``unknown`` outside git).
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any, Iterable

from ..data import repo_root
from .figure_rules import std_caption

__all__ = [
    "PALETTE", "use_style", "method_colors", "repo_root", "default_output_dir", "git_commit",
    "relative_to_repo", "is_placeholder", "scrub_paths",
    "provenance", "save_figure", "save_table", "frame_to_markdown", "read_sidecar", "plot_paper_vs_ours",
    "plot_histories", "heatmap_counts", "plot_effects", "seeds_of", "std_caption",
]

PALETTE = "colorblind"

_RC = {
    "pdf.fonttype": 42,  # TrueType, embedded (not Type 3)
    "ps.fonttype": 42,
    "svg.fonttype": "none",
    "figure.dpi": 100,
    "savefig.dpi": 200,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "image.cmap": "viridis",
}


def use_style() -> None:
    """Apply the shared style (idempotent); call before plotting."""
    import matplotlib
    import seaborn as sns

    sns.set_theme(context="paper", style="ticks", palette=PALETTE, rc=_RC)
    matplotlib.rcParams.update(_RC)


def method_colors(order: Iterable[str] = (), extra: Iterable[str] | None = None) -> dict[str, tuple]:
    """A fixed colour per method, given an order: the methods of ``order`` first (a paper's
    :attr:`fedlib.repro.paper.Paper.method_order`), then every other registered method token in
    registration order, then the ``extra`` names not among them; colours from :data:`PALETTE`
    in that order (cycling after its 10 colours)."""
    import seaborn as sns

    from ..algorithms import METHODS

    order = list(dict.fromkeys(order))
    order += [m for m in METHODS if m not in order and not m.startswith("toy_")]
    colors = sns.color_palette(PALETTE, len(order))
    table = dict(zip(order, colors))
    more = [m for m in (extra or ()) if m not in table]
    for m, c in zip(more, sns.color_palette(PALETTE, len(order) + len(more))[len(order):]):
        table[m] = c
    return table


# ------------------------------------------------------------------------ provenance


def default_output_dir(paper: str, profile: str) -> Path:
    """``<repo>/figures/<paper>/<profile>``: where a profile's tables and figures go.

    Each profile has its own folder, so a run of one profile never overwrites
    another's outputs (``smoke`` outputs are not committed: ``.gitignore``)."""
    return repo_root() / "figures" / paper / profile


def relative_to_repo(path: str | os.PathLike) -> str:
    """``path`` relative to the repository when it lies inside it (no machine paths in outputs),
    else its last two parts prefixed with ``…/``."""
    p = Path(path).resolve()
    try:
        return p.relative_to(repo_root()).as_posix() or "."
    except ValueError:
        return "…/" + "/".join(p.parts[-2:])


@functools.lru_cache(maxsize=8)
def _git_commit(root: str) -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return "unknown"
        # generated artefacts (figures/) do not make the tree dirty; untracked sources do
        dirty = subprocess.run(["git", "status", "--porcelain", "--", ".", ":(exclude)figures"], cwd=root,
                               capture_output=True, text=True, timeout=30)
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def git_commit(root: str | os.PathLike | None = None) -> str:
    """``git rev-parse HEAD`` of the repository, ``-dirty`` appended when the tree has
    uncommitted changes (modified or untracked, not ignored, files outside
    ``figures/``); ``"unknown"`` outside git (or without git)."""
    return _git_commit(str(Path(root) if root is not None else repo_root()))


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple, set, frozenset)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item") and callable(obj.item) and getattr(obj, "ndim", 1) == 0:
        obj = obj.item()  # numpy / torch scalars
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    if hasattr(obj, "to_dict"):
        return _jsonable(obj.to_dict())
    return str(obj)


def provenance(*, profile: Any = None, experiment: str | None = None, parameters: dict | None = None,
               seeds: Iterable[int] | None = None, datasets: Iterable[str] | None = None,
               notebook: str | None = None, deviations: Iterable[str] | None = None, **extra: Any) -> dict:
    """The sidecar body: everything known about how an artefact was made."""
    from .. import __version__

    prof_name = getattr(profile, "name", profile)
    if deviations is None and experiment is not None and hasattr(profile, "deviations"):
        deviations = profile.deviations(experiment)
    body = {
        "paper": getattr(profile, "paper", None),
        "profile": prof_name,
        "experiment": experiment,
        "notebook": notebook or os.environ.get("FEDLIB_NOTEBOOK"),
        "deviations": list(deviations or []),
        "parameters": parameters or {},
        "seeds": sorted(set(int(s) for s in seeds)) if seeds is not None else [],
        "datasets": sorted(set(datasets)) if datasets is not None else [],
        "fedlib_version": __version__,
        "git_commit": git_commit(),
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    body.update(extra)
    return _jsonable(body)


def scrub_paths(text: str) -> str:
    """``text`` without this machine's paths: the repository becomes ``.``, the data root
    ``<data root>``, the home folder ``~`` (committed outputs name no machine)."""
    from ..data import data_root

    for path, name in ((data_root().resolve(), "<data root>"), (repo_root(), "."), (Path.home(), "~")):
        p = str(path)
        if len(p) > 1:
            text = text.replace(p, name)
    return text


def _write_sidecar(path: Path, body: dict) -> Path:
    path.write_text(scrub_paths(json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False)) + "\n")
    return path


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
        raise ValueError("out_dir is required: figures/<paper>/<profile> (fedlib.repro.figures.default_output_dir)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    return out


def save_figure(fig, name: str, out_dir: str | os.PathLike | None = None, *, title: str = "", caption: str = "",
                close: bool = False, placeholder: bool = False, waive: dict[str, str] | None = None,
                **meta: Any) -> dict[str, Path] | None:
    """Write ``fig`` as ``<out_dir>/<name>.pdf`` and ``.png`` (vector and raster) plus the
    ``.json`` sidecar, once it obeys the figure rules (:mod:`fedlib.repro.figure_rules`):
    a figure that breaks one raises the rule's :class:`~fedlib.repro.figure_rules.FigureRuleError`
    before any file is written; ``waive`` (``{rule: reason}``) lets a known break through,
    recorded in the sidecar.

    ``meta`` goes to :func:`provenance` (profile, experiment, parameters, seeds,
    datasets, deviations, ...).  ``placeholder=True`` marks a figure made without
    its data (e.g. the dataset is absent): it never replaces a real artefact of
    the same name, and returns None when it was not written.  Returns the three
    paths by suffix.
    """
    from .figure_rules import check_figure

    out = _out(out_dir)
    sidecar = _claim(out, name, "figure")
    if placeholder and _existing_is_real(sidecar):
        return None
    checks = check_figure(fig, name=name, caption=caption, seeds=meta.get("seeds"), waive=waive)
    import matplotlib

    with matplotlib.rc_context({"pdf.fonttype": 42, "ps.fonttype": 42}):
        paths = {"pdf": out / f"{name}.pdf", "png": out / f"{name}.png"}
        fig.savefig(paths["pdf"], bbox_inches="tight")
        fig.savefig(paths["png"], bbox_inches="tight", dpi=_RC["savefig.dpi"])
    body = provenance(**meta)
    body.update({"name": name, "kind": "figure", "title": title, "caption": caption, "placeholder": placeholder,
                 "files": {k: p.name for k, p in paths.items()}, "figure_checks": checks})
    if waive:
        body["figure_waivers"] = dict(waive)
    paths["json"] = _write_sidecar(sidecar, body)
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
    frame.to_csv(paths["csv"], index=False)
    body_md = markdown if markdown is not None else frame_to_markdown(frame, floatfmt)
    head = (f"**{title}**\n\n" if title else "") + (f"{caption}\n\n" if caption else "")
    paths["md"].write_text(head + body_md)
    body = provenance(**meta)
    body.update({"name": name, "kind": "table", "title": title, "caption": caption, "placeholder": placeholder,
                 "files": {k: p.name for k, p in paths.items()}})
    paths["json"] = _write_sidecar(sidecar, body)
    return paths


# ------------------------------------------------------------------------ plots shared by notebooks
def _method_of(row: str) -> str:
    return str(row).split("/")[-1]


def plot_paper_vs_ours(comparison, *, x: str, panel: str = "column", x_label: str = "", x_log: bool = False,
                       series: str = "method", title: str = "", ylabel: str = "test accuracy (%)",
                       panel_labels: dict | None = None, sharey: bool = False, paper=None):
    """One panel per ``panel`` value; in each, accuracy against ``x`` (a column of
    ``comparison`` holding numbers) for every method: ours solid with filled
    markers (error bars: std over seeds, only where a cell has >= 2), the paper dashed with
    open markers.  Every panel obeys :mod:`.figure_rules`: its title names the dataset a
    stand-in ran on ("run on FMNIST") or says "paper only"; a cell of ours that diverged or was
    not run is labelled at the paper's value, a suspect paper value (†) marked.
    ``paper`` (a :class:`fedlib.repro.paper.Paper`) gives the methods' colours and labels.
    The caption of a figure with error bars needs :func:`.figure_rules.std_caption` of
    ``seeds_of(comparison)``.  Returns the figure."""
    import matplotlib.pyplot as plt
    import pandas as pd
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

    from .figure_rules import declare, label_cell

    df = comparison.copy()
    if "method" not in df:
        df["method"] = df["row"].map(_method_of)
    panels = list(dict.fromkeys(df[panel]))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.2), squeeze=False, sharey=sharey)
    colors = _colors(paper, df[series].unique())
    seeds = seeds_of(df)
    shown = []
    for ax, pv in zip(axes[0], panels):
        sub = df[df[panel] == pv].sort_values(x)
        ours_here = sub.ours_mean.notna().any()
        unrun: list[str] = []
        # values of x where no method of ours ran: one "not run" label each, at the bottom
        empty_x = [v for v, g in sub.groupby(x, sort=True) if g.ours_mean.isna().all()
                   and (g.get("run_status", pd.Series("", index=g.index)) != "diverged").all()] if ours_here else []
        for v in empty_x:
            label_cell(ax, v, 0.03, "not run", key=f"every method @ {v}", transform=ax.get_xaxis_transform(),
                       va="bottom", rotation=90)
        for m in dict.fromkeys(sub[series]):
            s = sub[sub[series] == m]
            c = colors.get(m)
            if s.ours_mean.notna().any():
                yerr = s.ours_std.where(s.n_seeds >= 2) if seeds >= 2 and {"ours_std", "n_seeds"} <= set(s) else None
                ax.errorbar(s[x], s.ours_mean, yerr=None if yerr is None or yerr.isna().all() else yerr.fillna(0),
                            color=c, marker="o", lw=1.6, ms=4, capsize=2)
            if s.paper_mean.notna().any():
                ax.plot(s[x], s.paper_mean, color=c, ls="--", marker="o", mfc="none", lw=1, ms=4)
            missing = s[s.ours_mean.isna()]
            if ours_here and len(missing) == len(s) and (missing.get("run_status", "") != "diverged").all():
                unrun.append(m)  # a method of the paper's not run in this panel at all: one label below
            elif ours_here:
                own = ~missing[x].isin(empty_x) | (missing.get("run_status", "") == "diverged")
                for r in missing[own].itertuples():
                    word = "diverged" if getattr(r, "run_status", "") == "diverged" else "not run"
                    y = r.paper_mean if pd.notna(r.paper_mean) else sub.ours_mean.min()
                    label_cell(ax, getattr(r, x), y, word, key=f"{m} @ {getattr(r, x)}", color=c, va="top")
            for r in s[_suspect(s)].itertuples():
                label_cell(ax, getattr(r, x), r.paper_mean, "suspect", key=f"{m} @ {getattr(r, x)} (paper)",
                           text=" †", color=c, ha="left", va="center")
            if m not in shown:
                shown.append(m)
        if unrun:
            label_cell(ax, 0.5, -0.38, "not run", key=", ".join(unrun) + " (every cell)", transform=ax.transAxes,
                       text="not run here: " + ", ".join(_label(m, paper) for m in unrun), ha="center", va="top",
                       wrap=True)
        name = (panel_labels or {}).get(pv, str(pv))
        used = _stand_in_labels(sub, paper)
        if not ours_here:
            declare(ax, ours=False, stand_in=[])
            name += " (paper only)"
        elif used:
            declare(ax, stand_in=used)
            name += f"\n(run on {', '.join(used)})"
        else:
            declare(ax, stand_in=[])
        if ours_here:
            declare(ax, seeds=seeds)
        ax.set_title(name)
        ax.set_xlabel(x_label or x)
        if x_log:
            ax.set_xscale("log")
        ticks = sorted(float(v) for v in sub[x].dropna().unique())
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0][0].set_ylabel(ylabel)
    handles = [Line2D([], [], color=colors.get(m), lw=2) for m in shown]
    labels = [_label(m, paper) for m in shown]
    handles += [Line2D([], [], color="0.3", marker="o", lw=1.6), Line2D([], [], color="0.3", ls="--", marker="o",
                                                                         mfc="none", lw=1)]
    labels += ["ours", "paper"]
    if _suspect(df).any():
        handles.append(Line2D([], [], ls="none"))
        labels.append("†: a paper value flagged as a probable typo")
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(labels), 5))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def _suspect(frame):
    """Rows whose paper value is flagged as a probable typo (``suspect`` text, or the status)."""
    import pandas as pd

    flag = pd.Series(False, index=frame.index)
    if "suspect" in frame:
        flag |= frame["suspect"].fillna("").astype(str).str.len() > 0
    if "status" in frame:
        flag |= frame["status"] == "suspect"
    return flag & frame["paper_mean"].notna()


def seeds_of(comparison) -> int:
    """The most seeds any cell of ``comparison`` (its ``n_seeds``) was run with (1 when unknown)."""
    if "n_seeds" not in comparison or comparison["n_seeds"].isna().all():
        return 1
    return int(comparison["n_seeds"].max())


def _stand_in_labels(frame, paper) -> list[str]:
    """The labels of the datasets ``frame``'s cells ran on in place of the paper's."""
    if not {"dataset", "dataset_used"} <= set(frame):
        return []
    pairs = frame[["dataset", "dataset_used"]].dropna()
    used = [u for d, u in zip(pairs.dataset, pairs.dataset_used) if d != u]
    from ..data import DATASETS

    return [paper.dataset_label(u) if paper is not None else DATASETS[u].label if u in DATASETS else str(u)
            for u in dict.fromkeys(used)]


def _colors(paper, methods) -> dict:
    """The methods' colours: the paper's (its method order), else the registration order."""
    return method_colors(paper.method_order if paper is not None else (), methods)


def _label(method: str, paper=None) -> str:
    """A method's label in ``paper`` (without " (ours)"); the token itself without a paper."""
    return paper.method_label(method).replace(" (ours)", "") if paper is not None else method


def plot_histories(histories, *, panel: str = "setting", hue: str = "method", title: str = "",
                   ylabel: str = "test accuracy (%)", paper=None):
    """Test accuracy per round, one panel per ``panel`` value, one line per ``hue``
    (mean over seeds, band = min..max); ``paper`` gives the colours and labels."""
    import matplotlib.pyplot as plt

    panels = list(dict.fromkeys(histories[panel]))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.0), squeeze=False, sharey=False)
    colors = _colors(paper, histories[hue].unique())
    for ax, pv in zip(axes[0], panels):
        sub = histories[histories[panel] == pv]
        for m in dict.fromkeys(sub[hue]):
            s = sub[sub[hue] == m].groupby("round").test_accuracy.agg(["mean", "min", "max"])
            ax.plot(s.index, s["mean"], color=colors.get(m), label=_label(m, paper), lw=1.6)
            if len(sub[sub[hue] == m].seed.unique()) > 1:
                ax.fill_between(s.index, s["min"], s["max"], color=colors.get(m), alpha=0.2, lw=0)
        ax.set_title(str(pv))
        ax.set_xlabel("communication round")
    axes[0][0].set_ylabel(ylabel)
    handles, labels = axes[0][-1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=min(len(labels), 5))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def heatmap_counts(counts, ax=None, *, title: str = "", class_names=None, cmap: str = "Blues"):
    """FedLC Fig. 4: clients × classes sample counts, annotated."""
    import matplotlib.pyplot as plt
    import numpy as np
    import seaborn as sns

    counts = np.asarray(counts)
    if ax is None:
        _, ax = plt.subplots(figsize=(0.6 * counts.shape[1] + 1.5, 0.45 * counts.shape[0] + 1.2))
    sns.heatmap(counts, annot=True, fmt="d", cmap=cmap, cbar=False, ax=ax, linewidths=0.5, linecolor="white",
                annot_kws={"fontsize": 7}, xticklabels=class_names if class_names is not None else "auto",
                yticklabels=[str(i) for i in range(counts.shape[0])])
    ax.set_xlabel("class")
    ax.set_ylabel("client")
    ax.grid(False)
    if title:
        ax.set_title(title)
    return ax


def plot_effects(effects, *, sources: Iterable[str], panel: str = "effect", x: str = "setting", title: str = "",
                 ylabel: str = "difference (pp)", missing: str = "n/a"):
    """Grouped bars: one panel per ``panel`` value (an effect such as FedLC −
    FedAvg), bars per ``x`` value, one bar per source column of ``effects``
    (e.g. paper / stand-in / CIFAR-10); a missing value is labelled ``missing``, a zero "0"."""
    import matplotlib.pyplot as plt
    import numpy as np
    import seaborn as sns

    from .figure_rules import label_empty_bars

    sources = list(sources)
    panels = list(dict.fromkeys(effects[panel]))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.8 * len(panels), 3.2), squeeze=False, sharey=False)
    colors = dict(zip(sources, sns.color_palette(PALETTE, len(sources))))
    width = 0.8 / max(len(sources), 1)
    for ax, pv in zip(axes[0], panels):
        sub = effects[effects[panel] == pv]
        xs = list(dict.fromkeys(sub[x]))
        for i, src in enumerate(sources):
            vals = [float(sub.loc[sub[x] == v, src].mean()) if sub.loc[sub[x] == v, src].notna().any() else np.nan
                    for v in xs]
            ax.bar(np.arange(len(xs)) + (i - (len(sources) - 1) / 2) * width, vals, width, color=colors[src],
                   label=src)
        ax.set_xticks(range(len(xs)), [str(v) for v in xs])
        ax.axhline(0, color="0.3", lw=0.8)
        label_empty_bars(ax, missing=missing)
        ax.set_title(str(pv))
        ax.set_xlabel("")
        ax.set_ylabel("")
    axes[0][0].set_ylabel(ylabel)
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[s]) for s in sources]
    fig.legend(handles, sources, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=len(sources))
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
