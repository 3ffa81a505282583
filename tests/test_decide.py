"""What would decide an inconclusive claim (fedlib.repro.artefacts.decision) and the command that trains it
(fedlib.repro.decide): the plan on small claims frames, the dry run on the committed figures, and a decide of
two runs of a smoke table in a temporary figures root."""

from __future__ import annotations

import dataclasses
import json
import math

import pandas as pd
import pytest

from fedlib.repro import decide as cli
from fedlib.repro.artefacts.provenance import repo_root
from fedlib.repro.artefacts import decision
from fedlib.repro.artefacts.decision import Decision, describe, order, plan, seeds_to_decide

FIGURES = repo_root() / "figures"
COLUMNS = ["claim", "scale", "rule", "verdict", "why", "paper", "ours", "ours_std", "n_seeds", "paired", "part",
           "margin"]


def _row(claim="table4-synthetic", scale="quick", verdict="inconclusive", ours=2.0, sd=1.0, n=2, paper=9.07,
         rule="sign", margin=0.0):
    return dict(zip(COLUMNS, [claim, scale, rule, verdict, "", paper, ours, sd, n, n >= 2, "", margin]))


def _table(root, profile, seeds: dict[str, dict[int, float]], table="table4", column="synthetic_1_1"):
    """A table CSV under ``root/fedlc/<profile>/`` holding ``seeds`` per row (per-seed values as the CSV keeps them)."""
    out = root / "fedlc" / profile
    out.mkdir(parents=True, exist_ok=True)
    rows = [{"table": table, "row": r, "column": column, "dataset": "synthetic", "dataset_used": "synthetic",
             "paper_mean": 70.0, "paper_std": 1.0, "ours_mean": sum(v.values()) / len(v),
             "ours_std": pd.Series(list(v.values())).std() if len(v) > 1 else math.nan, "n_seeds": len(v),
             "ours_seeds": json.dumps({str(k): x for k, x in v.items()}), "delta": 0.0, "spread": math.nan,
             "spread_source": "not measured", "within_std": None, "status": "ok", "note": ""}
            for r, v in seeds.items()]
    pd.DataFrame(rows).to_csv(out / f"{table}.csv", index=False)
    return out


def test_two_seed_gap_plans_the_closed_forms_seeds(tmp_path):
    _table(tmp_path, "quick", {"fedlc": {0: 70.0, 1: 71.0}, "fedrs": {0: 68.0, 1: 69.5}})
    [d] = plan("fedlc", pd.DataFrame([_row(ours=2.0, sd=1.0, n=2)]), tmp_path)
    n = seeds_to_decide(2.0, 1.0, 9.07, 0.0)
    assert n is not None and n > 2
    assert (d.have, d.target, d.seeds, d.runs) == (2, n, tuple(range(2, n)), 2 * (n - 2))
    assert not d.estimate and d.device == "cpu" and d.rows == ("fedlc", "fedrs")
    assert f"({2} → {n})" in describe(d)


def test_one_seed_plans_at_least_three_with_a_labelled_estimate(tmp_path):
    _table(tmp_path, "quick", {"fedlc": {0: 70.0}, "fedrs": {0: 60.0}})
    # a gap far from 0 and from the paper at any spread: the closed form asks for 2, one seed asks for 3
    [d] = plan("fedlc", pd.DataFrame([_row(ours=10.0, sd=0.1, n=1, paper=30.0)]), tmp_path)
    # seed 1 is one the quick profile runs Table 4 with (seeds 0 and 1): tried already, so not planned again
    assert (d.have, d.target, d.seeds, d.runs) == (1, 3, (2, 3), 4)
    assert d.estimate and "planning estimate" in d.why and "planning estimate" in describe(d)
    # the estimate is the paper's std of the two cells where no seed-to-seed spread is measured: √(1² + 1²)
    assert d.sd == pytest.approx(math.sqrt(2))


def test_a_decided_claim_gets_no_plan(tmp_path):
    _table(tmp_path, "quick", {"fedlc": {0: 70.0, 1: 71.0}, "fedrs": {0: 68.0, 1: 69.5}})
    frame = pd.DataFrame([_row(verdict="not reproduced"), _row(verdict="reproduced"), _row(verdict="not tested")])
    assert plan("fedlc", frame, tmp_path) == []


def _decision(**kw) -> Decision:
    base = dict(paper="p", claim="c", part="", scale="quick", profile="quick", table="t", rows=("a", "b"),
                columns=("x",), have=1, target=3, seeds=(1, 2), runs=4, cpu_hours=1.0, gpu_hours=None,
                device="cpu", sd=1.0, estimate=False, why="")
    return Decision(**{**base, **kw})


def test_cheapest_decision_first():
    gpu = _decision(claim="gpu", device="cuda", cpu_hours=9.0, gpu_hours=0.1)
    slow, fast = _decision(claim="slow", cpu_hours=2.0), _decision(claim="fast", cpu_hours=0.5)
    never = _decision(claim="never", target=None, seeds=(), runs=0, cpu_hours=0.0)
    assert [d.claim for d in order([never, gpu, slow, fast])] == ["fast", "slow", "gpu", "never"]


def test_unknown_paper_or_claim_is_named(capsys):
    assert cli.main(["nopaper/x", "--dry-run"]) == 2
    assert "unknown paper 'nopaper'" in capsys.readouterr().err
    assert cli.main(["fedlc/noclaim", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "unknown claim 'noclaim' of fedlc" in err and "table4-synthetic" in err


def test_best_row_plans_the_seeds_of_its_undecided_column(tmp_path):
    """FedLC's Table 1 "best" claim over one column: FedLC ahead of one rival beyond doubt, level with another
    (their interval holds 0) and behind none: the column is best once the level rival's gap leaves 0."""
    from fedlib.repro.artefacts.claims import claims_of

    claim = next(c for c in claims_of("fedlc") if c.id == "table1-best")
    q = claim.quantity
    col, rivals = q.columns[0], q.rivals or ("fedavg", "fedprox")
    # FedLC − the level rival at seeds 0 and 1: +1 and +3 (mean 2, sd √2: the interval ±12.7 holds 0);
    # − the others: +20 and +21 (their intervals, ±6.4, lie above 0)
    seeds = {q.method: {0: 80.0, 1: 82.0}, rivals[0]: {0: 79.0, 1: 79.0}}
    seeds.update({r: {0: 60.0, 1: 61.0} for r in rivals[1:]})
    _table(tmp_path, "quick", seeds, table=q.table, column=col)
    row = _row(claim="table1-best", rule="best", ours="0 of 1", paper="1 of 1", n=2) | {"part": claim.parts[0].name}
    [d] = plan("fedlc", pd.DataFrame([row]), tmp_path)
    want = seeds_to_decide(2.0, math.sqrt(2), 2.0)
    assert d.columns == (col,) and d.rows[0] == q.method and d.target == max(want, 2)
    assert d.seeds == tuple(range(2, want)) and d.runs == len(d.rows) * (want - 2)
    assert "undecided columns" in d.why


def test_a_best_row_whose_method_diverged_plans_seeds_until_enough_converge(tmp_path):
    """FedABC paper Table 2 (2026-11-29): SCAFFOLD as printed diverged at seeds 0 and 1 of MNIST Dir(0.1), so every
    paired gap there held one value.  The plan skipped a gap with a NaN, found no gap undecided, and said "every
    column decided: render the claims again" beside a verdict that named the column undecided.  A column whose
    pairs have fewer than 2 converged seeds is undecided; at 1 converged in 3, 9 seeds give 3 converged pairs."""
    from fedlib.repro.artefacts.claims import claims_of

    claim = next(c for c in claims_of("fedlc") if c.id == "table1-best")
    q = claim.quantity
    col, rivals = q.columns[0], q.rivals or ("fedavg", "fedprox")
    note = ("2 of 3 seeds diverged (seed 0: diverged: the parameters were not finite after round 5; seed 1: "
            "diverged: the parameters were not finite after round 7): left out of the mean")
    out = tmp_path / "fedlc" / "quick"
    out.mkdir(parents=True)
    rows = [{"table": q.table, "row": q.method, "column": col, "ours_mean": 80.0, "n_seeds": 1,
             "ours_seeds": json.dumps({"2": 80.0}), "status": "ok", "note": note}]
    rows += [{"table": q.table, "row": r, "column": col, "ours_mean": 71.0, "n_seeds": 3,
              "ours_seeds": json.dumps({"0": 70.0, "1": 71.0, "2": 72.0}), "status": "ok", "note": ""} for r in rivals]
    pd.DataFrame(rows).to_csv(out / f"{q.table}.csv", index=False)
    row = _row(claim="table1-best", rule="best", ours="0 of 1", paper="1 of 1", n=3) | {"part": claim.parts[0].name}
    [d] = plan("fedlc", pd.DataFrame([row]), tmp_path)
    assert d.columns == (col,) and d.have == 3 and d.target == 9, d
    assert d.seeds == tuple(range(3, 9)) and d.runs == len(d.rows) * 6
    assert "converged" in d.why and "render the claims again" not in d.why


def test_dry_run_prints_every_inconclusive_row(capsys):
    from fedlib.repro.artefacts.claims import evaluate

    frames = {p: evaluate(p, FIGURES) for p in ("fedabc", "fedconcat", "fedic", "fedlc")}
    wanted = [(p, r["claim"], r["scale"]) for p, f in frames.items() for r in f.to_dict("records")
              if decision.is_inconclusive(r)]
    if not wanted:
        pytest.skip("the committed outputs give no inconclusive claim row")
    assert cli.main(["--all", "--dry-run"]) == 0
    out = capsys.readouterr().out
    for paper, claim, scale in wanted:
        assert f"{paper}/{claim} at {scale}:" in out or f"{paper}/{claim}/" in out, (paper, claim, scale)
    assert "decisions," in out and "CPU-h" in out


def test_decide_trains_the_missing_seeds_and_renders_the_cells(tmp_path):
    """Smoke profile (2 rounds of Synthetic): one seed → 3; the table's cells gain seeds 1 and 2 from the runs,
    their records are kept, and a second decide trains nothing."""
    root, store = tmp_path / "figures", tmp_path / "store"
    out = _table(root, "smoke", {"fedlc": {0: 70.0}, "fedrs": {0: 60.0}})
    frame = pd.DataFrame([_row(scale="smoke", ours=10.0, sd=0.1, n=1, paper=30.0)])
    [d] = plan("fedlc", frame, root)
    assert d.seeds == (1, 2) and d.runs == 4
    before = (out / "table4.csv").read_bytes()
    result = cli.decide([d], root=root, store=store, progress=False, claims=False, log=lambda line: None)
    assert result["done"] == [d]
    table = pd.read_csv(out / "table4.csv").set_index("row")
    for row in ("fedlc", "fedrs"):
        seeds = json.loads(table.at[row, "ours_seeds"])
        assert sorted(seeds) == ["0", "1", "2"] and table.at[row, "n_seeds"] == 3
        assert table.at[row, "ours_mean"] == pytest.approx(sum(seeds.values()) / 3)
        assert "added by python -m fedlib.repro.decide" in table.at[row, "note"]
        # the cell's spread and verdict follow its seeds (the cell's own std over 3 seeds), as a render gives them
        std = pd.Series(list(seeds.values())).std(ddof=1)
        assert table.at[row, "spread_source"] == "std over 3 seeds" and table.at[row, "spread"] == pytest.approx(std)
        assert table.at[row, "delta"] == pytest.approx(table.at[row, "ours_mean"] - 70.0)
    from fedlib.repro.run.records import RECORDS_FILE, read

    assert len(read(out / RECORDS_FILE)) == 4
    [d2] = plan("fedlc", frame, root)  # the table now holds 3 seeds: nothing left to train
    assert d2.runs == 0 and d2.seeds == ()
    lines = []  # the same decision again (two claims on the same cells, planned before either trained): no runs
    assert cli.decide([d], root=root, store=store, progress=False, claims=False, log=lines.append)["done"] == [d]
    assert "hold its seeds already" in lines[-1]
    (out / "table4.csv").write_bytes(before)  # stopped after training, before rendering: started again
    again = cli.train(d, root=root, store=store, progress=False)
    assert len(again.runs) == 4 and again.runs.from_store.all()  # the store had every run: none trained again


def test_minutes_stops_before_a_decision_that_would_pass_them(tmp_path):
    cheap, dear = _decision(claim="cheap", cpu_hours=0.5), _decision(claim="dear", cpu_hours=2.0)
    lines = []
    result = cli.decide([cheap, dear], root=tmp_path, store=tmp_path / "store", minutes=20, claims=False,
                        log=lines.append)
    assert result["done"] == [] and [d.claim for d, _ in result["skipped"]] == ["cheap", "dear"]
    assert "would pass --minutes 20" in lines[0]


def test_lease_queue_takes_its_order_from_the_plan(tmp_path):
    from fedlib.repro import lease

    assert lease.load_queue()[0]["order"] == "plan"
    queue = tmp_path / "q.toml"
    queue.write_text('[lease]\norder = "random"\n')
    with pytest.raises(ValueError, match="order must be 'file' or 'plan'"):
        lease.load_queue(queue)
    assert decision.gpu_entries(["fedlc"], tmp_path) == []  # no outputs there: no decision, no entry


def test_gpu_entries_queue_the_gpu_decisions_cheapest_first(monkeypatch):
    dear = _decision(claim="dear", device="cuda", gpu_hours=2.0, table="table1", seeds=(2, 3))
    cheap = _decision(claim="cheap", device="cuda", gpu_hours=0.2, table="table2", seeds=(2,))
    monkeypatch.setattr(decision, "plan", lambda paper, root=None: [dear, _decision(claim="cpu"), cheap])
    entries = decision.gpu_entries(["fedlc"])
    assert [e["table"] for e in entries] == ["table2", "table1"]
    assert entries[0] == {"kind": "cell", "paper": "p", "table": "table2", "rows": ["a", "b"], "columns": ["x"],
                          "seeds": [2]}


def _render_table4(out, store, mode, path):
    """FedLC's smoke Table 4 rendered into ``out`` from its notebook's call (records ``mode`` on ``path``)."""
    import os

    from fedlib.repro.artefacts.tables import reproduce_table
    from fedlib.repro.run.records import MODE_ENV, RECORDS_ENV
    from fedlib.repro.spec.paper import get_paper

    saved = {k: os.environ.get(k) for k in (RECORDS_ENV, MODE_ENV)}
    os.environ.update({RECORDS_ENV: str(path), MODE_ENV: mode})
    try:
        reproduce_table("table4", get_paper("fedlc").profile("smoke"), store=store, out_dir=out, progress=False)
    finally:
        for k, v in saved.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    return _synthetic(out)


def _synthetic(out):
    frame = pd.read_csv(out / "table4.csv")
    return frame[frame.column == "synthetic_1_1"].set_index("row")


def test_decided_seeds_survive_a_render_from_records(tmp_path, monkeypatch):
    """The seeds decide added are declared beside the outputs (``_decided.jsonl``) and the table's notebook call
    (``reproduce_table``) runs them too: a render from the records alone keeps every decided seed of both cells
    of the gap, with the values decide wrote; without the declaration the render has the profile's seed only."""
    from fedlib.repro.artefacts.tables import DECIDED_FILE, decided_seeds
    from fedlib.repro.run import grid as grid_module
    from fedlib.repro.run.records import RECORDS_FILE, merge

    root, store = tmp_path / "figures", tmp_path / "store"
    out = root / "fedlc" / "smoke"
    out.mkdir(parents=True)
    _render_table4(out, store, "write", out / ".records.jsonl")  # the regeneration: the profile's seed 0
    merge(out / ".records.jsonl", out / RECORDS_FILE, replace=True)
    d = _decision(paper="fedlc", claim="table4-synthetic", scale="smoke", profile="smoke", table="table4",
                  rows=("fedlc", "fedavg"), columns=("synthetic_1_1",), seeds=(1, 2), cpu_hours=0.0)
    cli.decide([d], root=root, store=store, progress=False, claims=False, log=lambda line: None)
    assert (out / DECIDED_FILE).read_text() == "".join(
        json.dumps({"table": "table4", "row": r, "column": "synthetic_1_1", "seeds": [1, 2]}) + "\n"
        for r in ("fedavg", "fedlc"))
    assert decided_seeds(out, "table4") == {("fedavg", "synthetic_1_1"): (1, 2), ("fedlc", "synthetic_1_1"): (1, 2)}
    decided = _synthetic(out)
    monkeypatch.setattr(grid_module, "_run_one", lambda *a: pytest.fail("a run trained while reading records"))
    table = _render_table4(out, tmp_path / "empty", "read", out / RECORDS_FILE)
    for row in ("fedlc", "fedavg"):
        seeds = json.loads(table.at[row, "ours_seeds"])
        assert sorted(seeds) == ["0", "1", "2"] and table.at[row, "n_seeds"] == 3
        assert seeds == json.loads(decided.at[row, "ours_seeds"])
        assert table.at[row, "ours_mean"] == pytest.approx(decided.at[row, "ours_mean"])
        assert table.at[row, "ours_std"] == pytest.approx(decided.at[row, "ours_std"])
    sidecar = json.loads((out / "table4.json").read_text())
    assert sidecar["parameters"]["decided"] == {"fedavg/synthetic_1_1": [1, 2], "fedlc/synthetic_1_1": [1, 2]}
    (out / DECIDED_FILE).unlink()  # what carries them: without it the notebook asks for the profile's seed only
    table = _render_table4(out, tmp_path / "empty", "read", out / RECORDS_FILE)
    assert sorted(json.loads(table.at["fedlc", "ours_seeds"])) == ["0"]
    assert "decided" not in json.loads((out / "table4.json").read_text())["parameters"]


def test_decided_seeds_reach_every_table_cell_that_reads_the_same_runs(tmp_path):
    """FedABC's Tables 1 and 2 read the same runs at quick (one run, two metrics): a seed decide added to a cell of
    one is a seed of the other's cell with the same configuration (compared here from the gate's configurations),
    and of no cell whose configuration differs (Table 2's held-classes rows); a second pass changes nothing."""
    from fedlib.repro.artefacts.tables import DECIDED_FILE, decided_seeds, grid_cells, share_decided
    from fedlib.repro.spec.paper import get_paper

    profile = get_paper("fedabc").profile("quick")
    config = {t: {(c["row"], c["column"]): c["config"] for c in grid_cells(profile, t)} for t in ("table1", "table2")}
    shared = next(k for k, v in config["table2"].items() if v is not None and config["table1"].get(k) == v)
    alone = next(k for k, v in config["table2"].items() if v is not None and v not in config["table1"].values())
    (tmp_path / DECIDED_FILE).write_text("".join(
        json.dumps({"table": "table2", "row": r, "column": c, "seeds": [3, 4]}) + "\n" for r, c in (shared, alone)))
    assert share_decided(profile, tmp_path) == 1
    assert decided_seeds(tmp_path, "table1") == {shared: (3, 4)}
    assert decided_seeds(tmp_path, "table2") == {shared: (3, 4), alone: (3, 4)}
    text = (tmp_path / DECIDED_FILE).read_text()
    assert share_decided(profile, tmp_path) == 0 and (tmp_path / DECIDED_FILE).read_text() == text


@pytest.mark.slow
def test_a_table_without_decided_seeds_renders_as_before(tmp_path):
    """A table no ``_decided.jsonl`` line names renders from its committed records byte for byte (CSV and
    Markdown), the decided cells of its paper's other tables notwithstanding: the first of the candidates below that
    decide has not touched (FEDIC's Tables 1 and 3 and FedLC's Table 6 all hold decided seeds since 2026-11-30)."""
    import os
    import shutil

    from conftest import have_dataset
    from fedlib.papers.fedic import experiments as E
    from fedlib.repro.artefacts.tables import DECIDED_FILE, decided_seeds, reproduce_table
    from fedlib.repro.run.records import MODE_ENV, RECORDS_ENV, RECORDS_FILE
    from fedlib.repro.spec.paper import get_paper

    if not have_dataset("fmnist"):
        pytest.skip("FashionMNIST not found under FEDLIB_DATA")
    # (paper, table, its notebook, its value): the first that decide has not touched, beside decided tables
    candidates = [("fedic", "table1", "fedic/02_cifar_lt", {"value": E.table_value("table1")}),
                  ("fedic", "table3", "fedic/04_ablation", {"value": E.table_value("table3")}),
                  ("fedlc", "table6", "fedlc/08_ablations", {}),
                  ("fedlc", "table2", "fedlc/06_real_world_datasets", {})]
    found = next(((p, t, nb, kw) for p, t, nb, kw in candidates
                  if not decided_seeds(FIGURES / p / "quick", t) and (FIGURES / p / "quick" / DECIDED_FILE).exists()),
                 None)
    assert found is not None, "every candidate table holds decided seeds: name another one here"
    paper, table, notebook, kw = found
    committed = FIGURES / paper / "quick"
    out = tmp_path / paper / "quick"
    out.mkdir(parents=True)
    for name in (RECORDS_FILE, "_spread.json", DECIDED_FILE):
        if (committed / name).exists():
            shutil.copy(committed / name, out / name)
    os.environ.update({RECORDS_ENV: str(out / RECORDS_FILE), MODE_ENV: "read"})
    try:
        reproduce_table(table, get_paper(paper).profile("quick"), store=tmp_path / "empty", out_dir=out,
                        progress=False, notebook=notebook, **kw)
    finally:
        os.environ.pop(RECORDS_ENV), os.environ.pop(MODE_ENV)
    for name in (f"{table}.csv", f"{table}.md"):
        assert (out / name).read_bytes() == (committed / name).read_bytes(), name


def test_a_seed_another_decision_added_to_a_shared_cell_is_filled_first(tmp_path):
    """FedRS holds seed 3 (a decision on another claim sharing it added it); FedLC does not: the plan trains seed 3
    of FedLC first, so the gap is paired again, and then the next fresh seed.  A seed a cell tried and lost (it
    is declared for that cell in ``_decided.jsonl`` but not held: it diverged) is not planned again."""
    from fedlib.repro.artefacts.tables import DECIDED_FILE

    out = _table(tmp_path, "quick", {"fedlc": {0: 70.0, 1: 71.0, 2: 72.0},
                                     "fedrs": {0: 68.0, 1: 69.5, 2: 69.0, 3: 70.0}})
    [d] = plan("fedlc", pd.DataFrame([_row(ours=2.0, sd=6.0, n=3)]), tmp_path)
    n = seeds_to_decide(2.0, 6.0, 9.07, 0.0)  # 6 seeds: 3 more
    assert n == 6 and d.have == 3 and d.seeds == (3, 4, 5)
    assert d.runs == 1 + 2 * 2  # seed 3 for FedLC only, the fresh ones for both
    (out / DECIDED_FILE).write_text(json.dumps({"table": "table4", "row": "fedlc", "column": "synthetic_1_1",
                                                "seeds": [3]}) + "\n")
    [d] = plan("fedlc", pd.DataFrame([_row(ours=2.0, sd=6.0, n=3)]), tmp_path)
    assert d.seeds == (4, 5, 6) and d.runs == 6


def _stopped_decide(tmp_path, monkeypatch):
    """A decide of FedLC's two-row smoke table (4 runs) stopped at its third run: ``(root, out, frame, decision,
    the real run function)``."""
    from fedlib.repro.run import grid as grid_module

    root = tmp_path / "figures"
    out = _table(root, "smoke", {"fedlc": {0: 70.0}, "fedrs": {0: 60.0}})
    frame = pd.DataFrame([_row(scale="smoke", ours=10.0, sd=0.1, n=1, paper=30.0)])
    [d] = plan("fedlc", frame, root)
    real, calls = grid_module._run_one, []

    def stopped_at_third(cfg, store_root):
        calls.append(cfg)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(cfg, store_root)

    monkeypatch.setattr(grid_module, "_run_one", stopped_at_third)
    with pytest.raises(KeyboardInterrupt):
        cli.decide([d], root=root, store=tmp_path / "store1", progress=False, claims=False, log=lambda line: None)
    return root, out, frame, d, real


def test_a_stopped_decide_goes_on_from_its_finished_runs_on_another_machine(tmp_path, monkeypatch):
    """Each run's record is written as it finishes; a decide stopped mid-decision leaves them, and the next one,
    with an empty store (another machine), keeps them and trains only the rest."""
    from fedlib.repro.run import grid as grid_module
    from fedlib.repro.run.records import RECORDS_FILE, read

    root, out, frame, d, real = _stopped_decide(tmp_path, monkeypatch)
    assert len(read(out / ".records-decide.jsonl")) == 2
    calls = []
    monkeypatch.setattr(grid_module, "_run_one", lambda cfg, store_root: calls.append(cfg) or real(cfg, store_root))
    result = cli.decide([d], root=root, store=tmp_path / "store2", progress=False, claims=False, log=lambda line: None)
    assert result["done"] == [d] and len(calls) == 2 and len(read(out / RECORDS_FILE)) == 4


def test_the_plan_counts_the_runs_a_stopped_decide_left_in_the_committed_records_and_costs_the_rest(tmp_path,
                                                                                                    monkeypatch):
    """FedConcat's 'best against every baseline' (2026-12-06): a decide stopped after 16 of its 40 runs, whose
    records were committed; the plan said 40 runs at the full cost, not how far they got."""
    from fedlib.repro.run.records import RECORDS_FILE, merge

    root, out, frame, d, _ = _stopped_decide(tmp_path, monkeypatch)
    merge(out / ".records-decide.jsonl", out / RECORDS_FILE, replace=False)  # committed as they finished
    [again] = plan("fedlc", frame, root)
    assert (d.runs, d.held) == (4, 0) and (again.runs, again.held) == (2, 2) and again.seeds == d.seeds
    assert again.cpu_hours == pytest.approx(d.cpu_hours / 2)  # each run's recorded cost: only the rest is paid
    assert "2 runs to train, 2 more in the committed records (a decide that stopped: 2 of 4 done)" in describe(again)


def test_a_stopped_decide_keeps_its_seeds_after_another_decision_of_the_table_took_them(tmp_path, monkeypatch):
    """FedLC Table 5 (2026-12-07): E = 20's decide stopped after 22 runs at seeds 28-41, while E = 10's decision
    rendered seeds 28-39 into its own rows. The plan takes new seeds no cell of the table tried, so it moved
    E = 20 to seeds 40-53 and left 20 of its runs behind. Now the seeds whose runs the records hold for the
    decision's own cells come first."""
    from fedlib.repro.run.records import RECORDS_FILE, merge

    root, out, frame, d, _ = _stopped_decide(tmp_path, monkeypatch)
    merge(out / ".records-decide.jsonl", out / RECORDS_FILE, replace=False)
    added = [s for s in d.seeds if s != 0]
    _table(root, "smoke", {"fedlc": {0: 70.0}, "fedrs": {0: 60.0},  # another row now holds the added seeds
                           "fedavg": {0: 50.0, **{s: 50.0 + s for s in added}}})
    [again] = plan("fedlc", frame, root)
    assert again.seeds == d.seeds and (again.runs, again.held) == (2, 2), (d.seeds, again.seeds)
    # a decision that wants more seeds than those: they come first, once, and fresh seeds follow (FedABC Table 2
    # read "seeds 3, ..., 10, 3, 4, ..." before 2026-12-07: the resumed seeds were taken again as new ones)
    _table(root, "smoke", {"fedlc": {0: 64.0, 3: 61.0}, "fedrs": {0: 60.0, 3: 60.0}})  # 2 seeds, 0 and 3
    [more] = plan("fedlc", pd.DataFrame([_row(scale="smoke", ours=3.0, sd=2.0, n=2, paper=4.0)]), root)
    assert more.target == 5 and more.seeds == (1, 2, 4) and more.held == 2, (more.seeds, more.target, more.held)


def test_a_decision_whose_runs_the_records_hold_all_of_renders_them_into_its_table(tmp_path, monkeypatch):
    """FedABC's Table 2 SCAFFOLD 'as printed' (2026-12-07): its 16 runs were in the committed records (Table 1's
    SCAFFOLD row is the same configuration, trained by another decision), so the plan said "0 runs to train, all
    in the records"; decide then took the decision as rendered already and left the table at 1 seed.  It reads
    the records into the table and declares the seeds, training nothing."""
    import shutil

    from fedlib.repro.artefacts.tables import DECIDED_FILE
    from fedlib.repro.run import grid as grid_module
    from fedlib.repro.run.records import RECORDS_FILE

    first = tmp_path / "first"
    _table(first, "smoke", {"fedlc": {0: 70.0}, "fedrs": {0: 60.0}})
    frame = pd.DataFrame([_row(scale="smoke", ours=10.0, sd=0.1, n=1, paper=30.0)])
    [d] = plan("fedlc", frame, first)
    cli.decide([d], root=first, store=tmp_path / "store1", progress=False, claims=False, log=lambda line: None)
    root = tmp_path / "figures"  # the same records beside a table that still holds 1 seed a cell
    out = _table(root, "smoke", {"fedlc": {0: 70.0}, "fedrs": {0: 60.0}})
    shutil.copy(first / "fedlc" / "smoke" / RECORDS_FILE, out / RECORDS_FILE)
    [again] = plan("fedlc", frame, root)
    assert (again.runs, again.held) == (0, 4) and again.seeds == (1, 2)
    calls = []
    monkeypatch.setattr(grid_module, "_run_one", lambda cfg, store_root: calls.append(cfg))
    assert cli.decide([again], root=root, store=tmp_path / "store2", progress=False, claims=False,
                      log=lambda line: None)["done"] == [again]
    assert calls == []  # nothing trained: every run came from the records
    table = pd.read_csv(out / "table4.csv").set_index("row")
    assert all(sorted(json.loads(table.at[r, "ours_seeds"])) == ["0", "1", "2"] for r in ("fedlc", "fedrs"))
    declared = [json.loads(line) for line in (out / DECIDED_FILE).read_text().splitlines()]
    assert sorted((x["row"], tuple(x["seeds"])) for x in declared) == [("fedlc", (1, 2)), ("fedrs", (1, 2))]


def test_a_table_written_before_per_seed_values_is_planned_as_its_regeneration_from_the_records(tmp_path):
    """A table CSV with no per-seed values (a paper table trained before ``ours_seeds``) is decided by training it
    again with run records (issue 49): the plan is the profile's seeds of its cells, less the runs whose records
    under the current code are committed, and it says how far the regeneration got.  A record under other code
    does not count."""
    from fedlib.repro.run.grid import identity
    from fedlib.repro.run.records import RECORDS_FILE, make_record, write_compressed
    from fedlib.repro.spec.paper import get_paper

    out = _table(tmp_path, "quick", {"fedlc": {0: 70.0}, "fedrs": {0: 60.0, 1: 61.0}})
    frame = pd.read_csv(out / "table4.csv").drop(columns=["ours_seeds"])
    frame.to_csv(out / "table4.csv", index=False)
    prof = get_paper("fedlc").profile("quick")
    t = get_paper("fedlc").table("table4")
    assert prof.seeds_for("table4") == (0, 1)

    def record(row, seed, version=None):
        cfg, _ = prof.resolve(t.config(row, "synthetic_1_1"), "table4")
        run = {**cfg, "seed": seed}
        rec = make_record(identity(run), run, {"status": "ok", "accuracy": 50.0})
        return rec if version is None else {**rec, "code_version": version}

    write_compressed(out / RECORDS_FILE, [record("fedlc", 0), record("fedlc", 1), record("fedrs", 0),
                                          record("fedrs", 1, version="0" * 16)])
    [d] = plan("fedlc", pd.DataFrame([_row(ours=10.0, sd=0.1, n=1, paper=30.0)]), tmp_path)
    assert (d.seeds, d.recorded, d.planned, d.runs) == ((0, 1), 3, 4, 1)
    assert "3 of these 4 runs in quick/_records.jsonl.gz" in d.why and "--resume" in d.why
    assert "1 run left of its regeneration's 4 (3 in the committed records)" in describe(d)
    [cell] = cli._cells(d, tmp_path, "cpu")  # decide trains exactly the run the records lack
    assert (cell["row"], cell["column"], cell["config"]["seed"]) == ("fedrs", "synthetic_1_1", 1)


def test_a_study_of_a_tables_cells_reads_the_seeds_decide_added_to_them():
    """FEDIC's Table 3 by group read only the profile's seed while its table read the decided ones: the bars
    showed seed 0 (61.95) where the table's mean over 3 seeds was 53.47.  ``with_decided`` gives both the
    same cells: each cell decide added seeds to, at each added seed (the seed in its configuration)."""
    from fedlib.repro.artefacts.tables import with_decided

    cells = [{"row": "a", "column": "all", "config": {"method": "fedic", "rounds": 2}},
             {"row": "a", "column": "few", "config": {"method": "fedic", "rounds": 2}},
             {"row": "b", "column": "all", "config": None, "note": "not run"}]
    decided = {("a", "all"): (0, 1, 2), ("b", "all"): (1,)}
    [extra] = with_decided(cells, decided, seeds=(0,))
    assert (extra["row"], extra["column"]) == ("a", "all")
    assert [c["config"]["seed"] for c in extra["added"]] == [1, 2]
    assert all(c["config"]["rounds"] == 2 and c["row"] == "a" for c in extra["added"])
    assert cells[0]["config"] == {"method": "fedic", "rounds": 2}  # the gate's answer is never edited
    assert with_decided(cells, decided, seeds=(0, 1, 2)) == []


def test_a_ladder_row_says_the_seeds_it_wants_at_every_rung_and_their_cost(tmp_path):
    """A ladder's seeds are its declaration's (cpu_seeds), not a table's cells: decide cannot train them, so
    its dry run says what to change and what the added seeds cost, from the rungs that ran (their est_cpu_min is
    over the seeds they have)."""
    from fedlib.repro.artefacts.decision import ladder_need

    (tmp_path / "p" / "paper").mkdir(parents=True)
    pd.DataFrame({"rung": [0, 1, 2], "est_cpu_min": [6.0, 30.0, 600.0],
                  "runs_here": [True, True, False]}).to_csv(tmp_path / "p" / "paper" / "budget_ladder.csv", index=False)
    # FedConcat's headline on its ladder: −2.02 ± 1.93 paired over 3 seeds against +5.40 ± 4.74: 5 seeds decide
    row = {"scale": "ladder paper", "ours": -2.02, "ours_std": 1.93, "n_seeds": 3, "paired": True, "paper": 5.40,
           "margin": 4.74}
    assert seeds_to_decide(-2.02, 1.93, 5.40, 4.74) == 5
    text = ladder_need("p", row, tmp_path)
    hours = (6.0 + 30.0) / 3 * 2 / 60  # per seed over the rungs that ran, times the 2 added seeds
    assert f"≈ {hours:.1f} CPU-h" in text and "cpu_seeds = 5" in text and "2 rungs that ran" in text
    # one seed: no spread of its own, so at least 3 seeds, priced over the one seed the rungs' estimate covers
    one = ladder_need("p", {**row, "n_seeds": 1, "paired": False}, tmp_path)
    assert "3 seeds (1 now)" in one and f"≈ {(6.0 + 30.0) * 2 / 60:.1f} CPU-h" in one, one
    # quick's ladder is one seed by design: its row points to the paper ladder's
    assert "one seed by design" in ladder_need("p", {**row, "scale": "ladder quick", "n_seeds": 1}, tmp_path)


def test_a_regenerating_table_whose_records_hold_every_run_says_to_render_it():
    """FedABC's paper Table 1 (2026-11-29): its CSV predates per-seed values (1 seed read) while its records hold
    all 3 seeds of the cells a claim needs; the plan read "1 seeds … already, enough to decide it"."""
    from fedlib.repro.artefacts.decision_record import Decision, describe

    d = Decision("fedabc", "table1-best", "", "paper", "paper", "table1", ("fedabc",), ("mnist_dir0.1",), have=1,
                 target=3, seeds=(1, 2), runs=0, cpu_hours=0.0, gpu_hours=None, device="cpu", sd=None,
                 estimate=False, why="", recorded=108, planned=108)
    assert describe(d) == ("3 seeds of 1 cell of table1 at paper scale: every run is in the committed records (108); "
                           "render the table from them (regenerate --render records), then the claims")
    assert "already, enough to decide it" in describe(dataclasses.replace(d, planned=None, recorded=None))


def test_a_seed_that_diverged_counts_as_run_so_no_plan_trains_it_again(tmp_path):
    """FedABC paper Table 1 (2026-11-29): SCAFFOLD diverged at seeds 0 and 1 of MNIST Dir(0.1), so the cell held one
    seed; the best rule read "1 seed" for every row and planned 2 more seeds of 36 cells (72 runs, ≈ 8.6 CPU-h) that
    had all run. A diverged seed is a finished run: the cell holds it (NaN), and the plan asks for none."""
    from fedlib.repro.artefacts.claim_evidence import diverged_seeds
    from fedlib.repro.artefacts.decision_seeds import cell_seeds
    from fedlib.repro.spec.paper import get_paper

    pp = get_paper("fedabc")
    note = ("2 of 3 seeds diverged (seed 0: diverged: the parameters were not finite after round 51; seed 1: "
            "diverged: the parameters were not finite after round 59): left out of the mean")
    assert diverged_seeds(note) == {0, 1} and diverged_seeds("") == set() and diverged_seeds(float("nan")) == set()
    (tmp_path / "quick").mkdir()
    pd.DataFrame([{"row": "scaffold", "column": "mnist_dir0.1", "ours_mean": 95.9, "n_seeds": 1,
                   "ours_seeds": json.dumps({"2": 95.9}), "note": note},
                  {"row": "fedabc", "column": "mnist_dir0.1", "ours_mean": 99.1, "n_seeds": 3,
                   "ours_seeds": json.dumps({"0": 99.0, "1": 99.1, "2": 99.2}), "note": ""}]
                 ).to_csv(tmp_path / "quick" / "table1.csv", index=False)
    held = cell_seeds(tmp_path, pp, "quick", "table1")
    assert held[("fedabc", "mnist_dir0.1")] == {0: 99.0, 1: 99.1, 2: 99.2}
    scaffold = held[("scaffold", "mnist_dir0.1")]
    assert set(scaffold) == {0, 1, 2} and scaffold[2] == 95.9 and math.isnan(scaffold[0]) and math.isnan(scaffold[1])


def test_a_study_row_says_the_seeds_it_wants_of_its_study_and_their_cost(tmp_path):
    """A figure's finding (a Contrast over a study's summary) has no table cells to add seeds to: its seeds are the
    profile's for the study's experiment. The plan names the study, the seeds (the closed form at the row's paired
    std, at least 3 with one seed), every cell × the added seeds, their recorded cost and the notebook to run."""
    from fedlib.repro.artefacts.claims import claims_of
    from fedlib.repro.artefacts.decision import part_of
    from fedlib.repro.artefacts.decision_declared import study_need
    from fedlib.repro.run.grid import identity
    from fedlib.repro.run.records import RECORDS_FILE, record_id
    from fedlib.repro.spec.paper import get_paper

    pp = get_paper("fedabc")
    claim = next(c for c in claims_of("fedabc") if c.id == "fig5-ablation")
    part = part_of(claim, "Dir(0.1)")
    out = tmp_path / "fedabc" / "quick"
    out.mkdir(parents=True)
    (out / f"{part.quantity.output}.json").write_text(json.dumps({"experiment": "fig5",
                                                                   "notebook": "fedabc/05_ablation"}))
    prof = pp.profile("quick")
    held = prof.seeds_for("fig5")
    cells = [c["config"] for c in pp.study("fig5").cells(prof) if c.get("config") is not None]
    # every cell recorded at every held seed with 60 s: the added seeds cost 1 min a run
    lines = [json.dumps({"id": record_id(identity({**cfg, "seed": s})), "result": {"wall_time_s": 60.0}})
             for cfg in cells for s in held]
    import gzip

    (out / RECORDS_FILE).write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    sd = 0.23  # a spread that wants more seeds than the profile gives the study
    while seeds_to_decide(0.22, sd, 0.0, 0.0) <= len(held):
        sd *= 1.2
    row = {"scale": "quick", "ours": 0.22, "ours_std": sd, "n_seeds": len(held), "paired": True, "margin": 0.0}
    want = seeds_to_decide(0.22, sd, 0.0, 0.0)
    text = study_need(pp, part, row, tmp_path)
    added = want - len(held)
    assert f"{want} seeds ({len(held)} now" in text and f"{len(cells) * added} runs" in text, text
    assert f"≈ {len(cells) * added} CPU-min" in text and "--only 05_ablation --resume" in text, text
    assert f"['seeds'] = {tuple(range(want))}" in text, text
    one = study_need(pp, part, {**row, "n_seeds": 1, "ours_std": None, "paired": False}, tmp_path)
    assert "3 seeds (1 now; no spread of the cells themselves (1 seed)" in one, one
    # a row of a table's gap, or a scale that is no profile, is not a study's
    assert study_need(pp, part_of(next(c for c in claims_of("fedabc") if c.id == "headline"), None), row,
                      tmp_path) is None
    assert study_need(pp, part, {**row, "scale": "ladder quick"}, tmp_path) is None
    # the profile gives the study the seeds wanted already (outputs that predate them): regenerate, nothing to add
    done = study_need(pp, part, {**row, "n_seeds": 2, "ours_std": 0.01}, tmp_path)
    assert "gives study 'fig5'" in done and "--only 05_ablation --resume" in done, done
    # a seed whose run failed in a cell (no partition at that seed) fails again: one more seed replaces it
    lines[-1] = json.dumps({**json.loads(lines[-1]), "result": {"wall_time_s": 60.0, "status": "failed"}})
    (out / RECORDS_FILE).write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    again = study_need(pp, part, {**row, "n_seeds": len(held) - 1}, tmp_path)
    assert f"seeds [{held[-1]}] failed" in again and f"= {tuple(range(want + 1))}" in again, again
