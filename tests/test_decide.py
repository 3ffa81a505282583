"""What would decide an inconclusive claim (fedlib.repro.budget.decision) and the command that trains it
(fedlib.repro.decide): the plan on small claims frames, the dry run on the committed figures, and a decide of
two runs of a smoke table in a temporary figures root."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from fedlib.repro import decide as cli
from fedlib.repro.artefacts.provenance import repo_root
from fedlib.repro.budget import decision
from fedlib.repro.budget.decision import Decision, describe, order, plan, seeds_to_decide

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
             "ours_seeds": json.dumps({str(k): x for k, x in v.items()}), "delta": 0.0, "status": "ok", "note": ""}
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
    from fedlib.repro.run.records import RECORDS_FILE, read

    assert len(read(out / RECORDS_FILE)) == 4
    [d2] = plan("fedlc", frame, root)  # the table now holds 3 seeds: nothing left to train
    assert d2.runs == 0 and d2.seeds == ()
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
