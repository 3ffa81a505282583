"""The plots the companions share: paper vs ours, training curves, count heatmaps, effect bars.

Each draws in the shared style (:mod:`fedlib.repro.artefacts.style`) and obeys the figure rules
(:mod:`fedlib.repro.artefacts.figure_rules`); :mod:`fedlib.repro.artefacts.saving` writes them with their sidecars.
"""

from __future__ import annotations

import textwrap
from typing import Iterable

from .figure_rules import spread_caption, std_caption
from .not_run import not_run_summary
from .style import PALETTE, method_colors

__all__ = ["plot_paper_vs_ours", "plot_histories", "heatmap_counts", "plot_effects", "seeds_of", "std_caption",
           "spread_caption", "not_run_summary", "suspect_rows", "stand_in_labels"]


def _figure_key(fig, handles, labels) -> None:
    """The figure's key below its panels, in the fewest columns (at least 3) that keep it no wider than the panels;
    at 3 columns still wider, the figure grows to the key (wider only spreads curves apart)."""
    for ncol in range(min(len(labels), 5), 0, -1):  # a key no wider than the panels: wider, it squeezes them
        legend = fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol)
        fig.canvas.draw()
        if ncol <= min(len(labels), 3) or legend.get_window_extent().width <= fig.bbox.width:
            break
        legend.remove()
    wide = legend.get_window_extent().width / fig.dpi
    if wide > fig.get_figwidth():
        fig.set_figwidth(wide + 0.2)


def _method_of(row: str) -> str:
    return str(row).split("/")[-1]


def _dodge(lone: dict, xs, x_log: bool):
    """``shift(method, x_values)``: the lone points of ``lone`` (method -> its one x) that share an x, spread
    about it by 4 % of a decade (log axes) or 1.5 % of the panel's x range, in the order given; others unmoved."""
    import numpy as np

    at: dict = {}
    for m, v in lone.items():
        at.setdefault(v, []).append(m)
    finite = np.asarray([float(v) for v in xs if v == v], dtype=float)
    span = float(finite.max() - finite.min()) if len(finite) > 1 else 1.0
    offsets = {m: k - (len(ms) - 1) / 2 for ms in at.values() if len(ms) > 1 for k, m in enumerate(ms)}

    def shift(m, values):
        k = offsets.get(m, 0.0)
        return values * 10 ** (0.04 * k) if x_log else values + 0.015 * span * k
    return shift


def plot_paper_vs_ours(comparison, *, x: str, panel: str = "column", x_label: str = "", x_log: bool = False,
                       series: str = "method", title: str = "", ylabel: str = "test accuracy (%)",
                       panel_labels: dict | None = None, sharey: bool = False, paper=None, absent: str = ""):
    """One panel per ``panel`` value; in each, accuracy against ``x`` (a column of
    ``comparison`` holding numbers) for every method: ours solid with filled
    markers (error bars: std over seeds, only where a cell has >= 2), the paper dashed with
    open markers.  Every panel obeys :mod:`.figure_rules`: its title names the dataset a
    stand-in ran on ("run on FMNIST") or says "paper only"; a cell of ours that diverged or was
    not run is labelled at the paper's value, a suspect paper value (†) marked.
    ``paper`` (a :class:`fedlib.repro.spec.paper.Paper`) gives the methods' colours and labels;
    ``absent``: the legend's line where nothing of ours is drawn (why, and what running it costs).
    The caption of a figure with error bars needs :func:`.figure_rules.std_caption` of
    ``seeds_of(comparison)``.  Returns the figure."""
    import matplotlib.pyplot as plt
    import pandas as pd
    from matplotlib.lines import Line2D
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator
    from matplotlib.transforms import ScaledTranslation

    from .figure_rules import declare, label_cell, merge_coinciding, seeds_label

    df = comparison.copy()
    if "method" not in df:
        df["method"] = df["row"].map(_method_of)
    readings: dict[str, str] = {}  # a row group beside the paper's rows ("held/fedavg"): its own series and label
    if series == "method" and "row" in df:
        # a row that spans several x values in a panel is a curve of its own (FedABC's "held/fedavg"); a row that is
        # one point of its method's curve (FedLC Table 5's "E5/fedavg", x = E) stays in its method's series
        spans = df.groupby([panel, "row"])[x].nunique().groupby(level="row").max()
        for row, label in zip(df.row, df.get("row_label", df.row)):
            if "/" in str(row) and spans.get(row, 1) > 1:
                readings[str(row)] = str(label)
        df["series"] = [r if r in readings else m for r, m in zip(df.row.astype(str), df.method)]
        series = "series"
    panels = list(dict.fromkeys(df[panel]))
    fig, axes = plt.subplots(1, len(panels), figsize=(3.6 * len(panels), 3.2), squeeze=False, sharey=sharey)
    colors = _colors(paper, [k for k in df[series].unique() if k not in readings])
    colors.update({k: colors.get(_method_of(k)) for k in readings})  # in its method's colour, another line style

    def label_of(key: str) -> str:
        return readings.get(key) or _label(key, paper)

    groups = list(dict.fromkeys(k.split("/")[0] for k in readings))  # one marker per group of readings

    def marker_of(key: str) -> str:
        return "sD^vP"[groups.index(key.split("/")[0]) % 5] if key in readings else "o"
    seeds = seeds_of(df)
    shown, merged, names = [], [], {}
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
        # a method of ours run at one x only is a lone marker among the paper's: drawn larger, edged, and where
        # several share that x, set side by side (their error bars would hide each other)
        lone = {m: g[x].iloc[0] for m, g in sub[sub.ours_mean.notna()].groupby(series, sort=False)
                if g[x].nunique() == 1}
        dodge = _dodge(lone, sub[x], x_log)
        for m in dict.fromkeys(sub[series]):
            s = sub[sub[series] == m]
            c = colors.get(m)
            if s.ours_mean.notna().any():
                yerr = s.ours_std.where(s.n_seeds >= 2) if seeds >= 2 and {"ours_std", "n_seeds"} <= set(s) else None
                alone = m in lone
                bars = ax.errorbar(dodge(m, s[x]) if alone else s[x], s.ours_mean,
                                   yerr=None if yerr is None or yerr.isna().all() else yerr, color=c,
                                   marker=marker_of(m), ls="-." if m in readings else "-", lw=1.6,
                                   ms=7 if alone else 4, mec="0.1" if alone else c, capsize=3 if alone else 2,
                                   zorder=4 if alone else None)
                names[bars.lines[0]] = f"{label_of(m)} (ours)"
            if s.paper_mean.notna().any() and m not in readings:  # a reading's paper values are its method's
                line, = ax.plot(s[x], s.paper_mean, color=c, ls="--", marker="o", mfc="none", lw=1, ms=4)
                names[line] = f"{label_of(m)} (paper)"
            missing = s[s.ours_mean.isna()]
            if ours_here and len(missing) == len(s) and (missing.get("run_status", "") != "diverged").all():
                unrun.append(m)  # a method of the paper's not run in this panel at all: one label below
            elif ours_here:
                own = ~missing[x].isin(empty_x) | (missing.get("run_status", "") == "diverged")
                for r in missing[own].itertuples():
                    word = "diverged" if getattr(r, "run_status", "") == "diverged" else "not run"
                    y = r.paper_mean if pd.notna(r.paper_mean) else sub.ours_mean.min()
                    # under the paper's marker, not on it: its white ground would hide the paper's value
                    below = ax.transData + ScaledTranslation(0, -5 / 72, fig.dpi_scale_trans)
                    label_cell(ax, getattr(r, x), y, word, key=f"{m} @ {getattr(r, x)}", color=c, va="top",
                               transform=below)
            for r in s[suspect_rows(s)].itertuples():
                label_cell(ax, getattr(r, x), r.paper_mean, "suspect", key=f"{m} @ {getattr(r, x)} (paper)",
                           text=" †", color=c, ha="left", va="center")
            if m not in shown:
                shown.append(m)
        if unrun:
            # wrapped to its panel's width (matplotlib's wrap takes the figure's: neighbours' notes ran together)
            chars = max(20, int(fig.get_figwidth() / len(panels) * 72 / (7 * 0.6)))
            label_cell(ax, 0.5, -0.38, "not run", key=", ".join(unrun) + " (every cell)", transform=ax.transAxes,
                       text=textwrap.fill("not run here: " + ", ".join(label_of(m) for m in unrun), chars),
                       ha="center", va="top")
        name = (panel_labels or {}).get(pv, str(pv))
        used = stand_in_labels(sub, paper)
        if not ours_here:
            declare(ax, ours=False, stand_in=[])
            why = not_run_summary(sub["note"].dropna(), paper.dataset_label if paper is not None else None) \
                if "note" in sub else ""
            short = why.removeprefix("not run: ").split(" (est.")[0] if why.startswith("not run: ") else ""
            label = paper.dataset_label if paper is not None else str
            on = ", ".join(dict.fromkeys(label(d) for d in sub["dataset"].dropna())) if "dataset" in sub else ""
            # the data the paper's values are on (as ours names what it ran on), unless the panel's name says it
            on = f", {on}" if on and on.lower() not in name.lower() else ""
            name += f"\n(paper only{on}; ours: {short})" if short else f" (paper only{on})"  # why ours is absent
        elif used:
            declare(ax, stand_in=used)
            name += f"\n(run on {', '.join(used)})"
        else:
            declare(ax, stand_in=[])
        if ours_here:
            declare(ax, seeds=seeds)
        # wrapped to its panel's width: a long "paper only; ours: …" ran into its neighbour's title
        width = max(20, int(fig.get_figwidth() / len(panels) * 72 / (ax.title.get_fontsize() * 0.6)))
        ax.set_title("\n".join(textwrap.fill(line, width) for line in name.split("\n")))
        ax.set_xlabel(x_label or x)
        if x_log:
            ax.set_xscale("log")
        ticks = sorted(float(v) for v in sub[x].dropna().unique())
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0][0].set_ylabel(ylabel)
    if title:  # before the layout: a title added later shrinks the axes, and curves apart now would coincide
        fig.suptitle(title)
    fig.tight_layout()  # the final geometry, where curves drawn as one are found
    for ax in axes[0]:
        where = ax.get_title().split("\n")[0] if len(axes[0]) > 1 else ""  # a panel's coincidence is its own
        merged += [f"{where}: {t}" if where else t
                   for t in merge_coinciding(ax, {ln: n for ln, n in names.items() if ln.axes is ax})
                   if (f"{where}: {t}" if where else t) not in merged]  # identical curves: said once, in the legend
    any_ours = df.ours_mean.notna().any()

    def key(m):  # a method's key is what is drawn of it: its curve of ours, else its paper line (dashed)
        rows = df[df[series] == m]
        if rows.ours_mean.notna().any():
            return Line2D([], [], color=colors.get(m), lw=2, ls="-." if m in readings else "-",
                          marker=marker_of(m) if m in readings else None)
        if m not in readings and rows.paper_mean.notna().any():
            return Line2D([], [], color=colors.get(m), lw=1, ls="--")
        return Line2D([], [], ls="none")  # nothing of it drawn: named, not keyed

    handles = [key(m) for m in shown]
    # a series of ours over fewer seeds than the caption's "std over N seeds" says so in its key
    fewer, mixed = {}, set()
    if seeds >= 2 and "n_seeds" in df:
        ran_n = df[df.ours_mean.notna()].groupby(series).n_seeds.agg(["min", "max"])
        fewer = {m: int(r["min"]) for m, r in ran_n.iterrows() if pd.notna(r["min"]) and int(r["min"]) < seeds}
        mixed = {m for m in fewer if int(ran_n.at[m, "max"]) > fewer[m]}  # decided points beside the profile's

    def seeds_key(m):  # a series all over fewer seeds, or one with some points so (its other points have more)
        if m not in fewer:
            return label_of(m)
        if m in mixed:
            return f"{label_of(m)} (some points: {fewer[m]} of {seeds} seeds)"
        return seeds_label(label_of(m), fewer[m], seeds)

    labels = [seeds_key(m) for m in shown]
    labels = [lab if h.get_linestyle() not in ("None", "none") else f"{lab}: nothing here"
              for lab, h in zip(labels, handles)]
    for ax in axes[0]:
        if fewer:
            declare(ax, series_seeds={label_of(m): n for m, n in fewer.items()})
    # a key only for what is drawn: no "ours" entry where nothing of ours is (it says why instead)
    if any_ours:
        handles.append(Line2D([], [], color="0.3", marker="o", lw=1.6))
        labels.append("ours")
    else:
        handles.append(Line2D([], [], ls="none"))
        notes = [str(n) for n in df.get("note", pd.Series(dtype=object)).dropna() if str(n).strip()]
        why = absent or (f"ours: {not_run_summary(notes)}" if notes else "ours: none run under this profile")
        labels.append(why if len(why) <= 130 else why[:127].rsplit(" ", 1)[0] + " …")
    if df.paper_mean.notna().any():
        handles.append(Line2D([], [], color="0.3", ls="--", marker="o", mfc="none", lw=1))
        labels.append("paper")
    for text in merged:
        handles.append(Line2D([], [], ls="none"))
        labels.append(text)
    if suspect_rows(df).any():
        handles.append(Line2D([], [], ls="none"))
        labels.append("†: a paper value flagged as a probable typo")
    _figure_key(fig, handles, labels)
    fig.tight_layout()
    return fig


def suspect_rows(frame):
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


def stand_in_labels(frame, paper) -> list[str]:
    """The labels of the datasets ``frame``'s cells ran on in place of the paper's."""
    if not {"dataset", "dataset_used"} <= set(frame):
        return []
    pairs = frame[["dataset", "dataset_used"]].dropna()
    used = [u for d, u in zip(pairs.dataset, pairs.dataset_used) if d != u]
    from ...data import DATASETS

    return [paper.dataset_label(u) if paper is not None else DATASETS[u].label if u in DATASETS else str(u)
            for u in dict.fromkeys(used)]


def _colors(paper, methods) -> dict:
    """The methods' colours: the paper's (its method order), else the registration order."""
    return method_colors(paper.method_order if paper is not None else (), methods)


def _label(method: str, paper=None) -> str:
    """A method's label in ``paper`` (without " (ours)"); the token itself without a paper."""
    return paper.plain_label(method) if paper is not None else method


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
    _figure_key(fig, handles, labels)
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
                 ylabel: str = "difference (pp)", missing: str = "n/a", why_none: dict | None = None):
    """Grouped bars: one panel per ``panel`` value (an effect such as FedLC −
    FedAvg), bars per ``x`` value, one bar per source column of ``effects``
    (e.g. paper / stand-in / CIFAR-10); a missing value is labelled ``missing``, a zero "0".  ``why_none``:
    ``{source: why}`` for a source with no value anywhere, said in its key ("ours: no value here (not run: needs
    a GPU …)")."""
    import matplotlib.pyplot as plt
    import numpy as np
    import pandas as pd
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
    from matplotlib.lines import Line2D

    # a key for what is drawn; a source with no value anywhere is named as such, not keyed as if drawn
    vals = {s: pd.to_numeric(effects[s], errors="coerce") if s in effects else pd.Series(dtype=float) for s in sources}
    some = {s for s in sources if (vals[s].fillna(0) != 0).any()}  # a bar of 0 draws nothing: its label says 0
    handles = [plt.Rectangle((0, 0), 1, 1, color=colors[s]) if s in some else Line2D([], [], ls="none")
               for s in sources]
    import textwrap

    labels = [s if s in some else f"{s}: " + ("0 wherever measured" if vals[s].notna().any() else "no value here"
                                              + ("\n" + textwrap.fill(f"({(why_none or {})[s]})", 60)
                                                 if s in (why_none or {}) else ""))
              for s in sources]
    _figure_key(fig, handles, labels)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
