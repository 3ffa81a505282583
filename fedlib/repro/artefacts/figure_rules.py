"""The rules every saved figure obeys, checked on the live matplotlib ``Figure``.

:func:`fedlib.repro.artefacts.saving.save_figure` calls :func:`check_figure` before it writes
anything: a figure that breaks a rule is not saved, and the error (a subclass of
:class:`FigureRuleError`) names the rule and the axes.  The sidecar records the rules that
passed, ``"figure_checks": {rule: true, …}``.

The rules (:data:`RULES`, in the order they are checked):

``values_within_axes``
    Every finite plotted value (line vertices, scatter points, bar tops and bottoms,
    error-bar ends) lies within its axes' limits, and the value axis of a bar chart
    includes 0, so that bars start at zero -- unless the axis is marked as broken
    (:func:`mark_broken_axis`, which also draws the break marks): then the bars' bottoms
    may lie below the axis, their tops may not (so on a log axis, which has no 0).
``stand_in_named``
    An axes declared to show a stand-in dataset (``declare(ax, stand_in=…)``) names
    it in its title or legend (or the figure's title or legend).
``cells_labelled``
    Every declared cell that is not run, diverged, zero or a suspect paper value
    (``declare(ax, cells={key: status})``) has its label in the axes ("not run",
    "diverged", a value label reading 0, "†"), one per cell; an axes declared to show
    no result of ours (``declare(ax, ours=False)``) says "paper only".  Bars are checked
    without a declaration: a bar of height 0 needs a value label reading 0 over it, a bar
    whose height is not a number a label over it (a cell drawn as nothing is not allowed;
    :func:`label_empty_bars` writes both).
``series_distinct``
    No two series in one axes share colour, line style and marker (bars: colour and
    hatch).  Artists with the same (public) label are one series.
``legend_clear``
    No legend (of an axes or of the figure) covers data: after a draw, no line vertex,
    point on a line segment, scatter point, error-bar segment or bar lies inside a
    legend's window extent.
``error_bars_seeds``
    Error bars are drawn only where the values are means over >= 2 seeds (``seeds``
    from ``declare(ax, seeds=N)``, else the figure's), and the caption then says
    "std over N seeds".
``series_visible``
    No line series is drawn under another: where every drawn point of a line lies within
    the line width of a line drawn over it, the two are told apart by the lower one's
    markers (shape or fill differ), by a dashed upper line of another colour, or by one
    legend entry naming both (:func:`merge_coinciding`: "FedNova = FedAvg").
``axes_not_blank``
    An axes with its axis shown and nothing plotted (no finite point, bar, area, image)
    says what it would show and why it is empty (:func:`mark_empty`), or labels its
    declared cells.
``text_legible``
    At the saved size: no text below 7 pt, no two tick labels of an axis overlapping,
    the saved image at most 3,000 px wide.
``groups_shown``
    Every group (column, panel, setting) the plot declares it shows
    (``declare(ax, groups=…)``, :func:`label_groups`) is named in the axes (a tick
    label, text, title or legend) -- a group with no value of ours is labelled, not dropped.
``dataset_named``
    Every dataset the figure's runs trained on (``datasets`` of the sidecar) is named in
    the figure; :func:`save_figure <fedlib.repro.artefacts.saving.save_figure>` stamps
    "Trained on: …" under every figure (:func:`stamp_datasets`), so no plot can forget it.
``seeds_marked``
    A series declared with fewer seeds than the caption's "std over N seeds"
    (``declare(ax, series_seeds={name: n})``) is marked as such in the figure
    (:func:`seeds_label`: "FedLC (2 of 3 seeds)").
``chance_flagged``
    In an axes declared with a chance accuracy (``declare(ax, chance=10)``), a value at
    or below chance (+ ``chance_margin``) is flagged by a text saying "chance"
    (:func:`mark_chance` draws the level and says so).

Rules in :data:`REPORT_ONLY` warn (:class:`FigureRuleWarning`) instead of raising and are
recorded false in the sidecar; ``FEDLIB_FIGURE_REPORT`` (a path) also appends each such
violation to that file as a JSON line.

The errors and limits live in :mod:`.figure_rule_errors`, the declarations in :mod:`.figure_declarations`, the checks
in :mod:`.figure_rules_drawing` and :mod:`.figure_rules_labels`; this module runs them (:func:`check_figure`) and
re-exports their public names.

Declaring what an axes shows (the checker cannot see it in the artists)::

    from fedlib.repro.artefacts.figure_rules import declare, label_cell, mark_broken_axis

    declare(ax, stand_in="fmnist", seeds=1)           # this panel's runs are on FMNIST
    declare(ax, cells={"FEDIC, D_aux = 400": "diverged"})
    label_cell(ax, 400, 10, "diverged")              # draws the label (and declares the cell)
    declare(ax, ours=False); ax.set_title("SVHN (paper only)")
    mark_broken_axis(ax, "y")                        # bars may start below the visible range
    merge_coinciding(ax); ax.legend()                # "FedNova = FedAvg": one legend entry
    mark_empty(ax, "FEDIC on SVHN", "not run under this profile")
    label_groups(ax, ["CIFAR-10", "SVHN"], without=["SVHN"])
    mark_chance(ax, 10.0)                            # a baseline at chance is flagged
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from .figure_artists import axes_name
from .figure_declarations import AxesFacts  # noqa: F401  (public, outside __all__)
from .figure_declarations import (declare, declare_stand_ins, facts, label_cell, label_empty_bars, label_groups,
                                  mark_broken_axis, mark_chance, mark_empty, merge_coinciding, seeds_label,
                                  spread_caption, stamp_datasets, std_caption, why_empty)
from .figure_rule_errors import (CELL_STATUSES, ERRORS, MAX_WIDTH_PX, MIN_FONT_PT, RULES, AxesBlank, CellUnlabelled,
                                 ChanceUnflagged, DatasetUnnamed, ErrorBarsWithoutSeeds, FigureRuleError,
                                 FigureRuleWarning, GroupDropped, LegendCoversData, SeedsUnmarked, SeriesAlike,
                                 SeriesHidden, StandInUnnamed, TextIllegible, ValueOutsideAxes, report)
from .figure_rules_drawing import legend_clear, series_distinct, series_visible, text_legible, values_within_axes
from .figure_rules_labels import (axes_not_blank, cells_labelled, chance_flagged, dataset_named, error_bars,
                                  groups_shown, seeds_marked, stand_in_named)

__all__ = ["RULES", "REPORT_ONLY", "CELL_STATUSES", "MIN_FONT_PT", "MAX_WIDTH_PX", "FigureRuleError",
           "FigureRuleWarning", "ValueOutsideAxes", "StandInUnnamed", "CellUnlabelled", "SeriesAlike",
           "LegendCoversData", "ErrorBarsWithoutSeeds", "SeriesHidden", "AxesBlank", "TextIllegible", "GroupDropped",
           "DatasetUnnamed", "SeedsUnmarked", "ChanceUnflagged", "declare", "declare_stand_ins", "facts",
           "label_cell", "label_empty_bars", "std_caption", "spread_caption", "mark_broken_axis", "merge_coinciding",
           "mark_empty", "why_empty", "label_groups", "seeds_label", "mark_chance", "stamp_datasets", "check_figure"]


#: Rules that warn instead of raising (figures the companions made before the rule existed).
REPORT_ONLY: set[str] = set()


# ------------------------------------------------------------------------ the check
def check_figure(fig, *, name: str = "figure", caption: str = "", seeds: int | Iterable[int] | None = None,
                 datasets: Iterable[str] | None = None, dpi: float | None = None,
                 waive: dict[str, str] | None = None) -> dict[str, bool]:
    """Check ``fig`` against :data:`RULES` (drawing it once); raise the
    :class:`FigureRuleError` subclass of the first rule broken, listing every violation.

    ``caption``: the caption the figure is saved with; ``seeds``: the figure's seeds (a
    number or the seeds themselves) for axes that declare none; ``datasets``: the datasets
    its runs trained on; ``dpi``: the resolution it is saved at (default the style's);
    ``waive``: ``{rule: reason}`` for a rule this figure is known to break (its violations
    are not raised and the rule is recorded as false).  A rule of :data:`REPORT_ONLY` warns
    instead.  Returns ``{rule: passed}``."""
    waive = dict(waive or {})
    unknown = [r for r in waive if r not in RULES]
    if unknown:
        raise ValueError(f"waive: unknown rule(s) {unknown}; rules: {', '.join(RULES)}")
    if seeds is not None and not isinstance(seeds, (int, np.integer)):
        seeds = len(set(seeds)) or None
    if dpi is None:
        from .style import RC

        dpi = RC["savefig.dpi"]
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    found: dict[str, list[tuple[str, str]]] = {r: [] for r in RULES}
    for ax in fig.axes:
        name_ax = axes_name(ax, fig)
        for rule, fn in (("values_within_axes", lambda: values_within_axes(ax, name_ax)),
                         ("stand_in_named", lambda: stand_in_named(ax, name_ax, fig)),
                         ("cells_labelled", lambda: cells_labelled(ax, name_ax)),
                         ("series_distinct", lambda: series_distinct(ax, name_ax)),
                         ("error_bars_seeds", lambda: error_bars(ax, name_ax, caption, seeds)),
                         ("series_visible", lambda: series_visible(ax, name_ax, fig)),
                         ("axes_not_blank", lambda: axes_not_blank(ax, name_ax)),
                         ("groups_shown", lambda: groups_shown(ax, name_ax, fig)),
                         ("seeds_marked", lambda: seeds_marked(ax, name_ax, fig, caption)),
                         ("chance_flagged", lambda: chance_flagged(ax, name_ax, fig))):
            found[rule] += [(name_ax, w) for w in fn()]
    found["legend_clear"] = legend_clear(fig, renderer)
    found["text_legible"] = text_legible(fig, renderer, float(dpi))
    found["dataset_named"] = dataset_named(fig, datasets)
    raised = [r for r in RULES if r not in waive and r not in REPORT_ONLY]
    for rule, error in zip(RULES, ERRORS):
        if found[rule] and rule in raised:
            violations = [(r, a, w) for r in raised for a, w in found[r]]
            raise error(name, violations)
    for rule in RULES:
        if found[rule] and rule in REPORT_ONLY and rule not in waive:
            report(name, rule, found[rule])
    return {rule: not found[rule] for rule in RULES}
