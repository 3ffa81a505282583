"""FEDIC's transcribed tables: shape, cells checked against the paper's text, the inferred Table 3
mapping, and every cell's configuration valid for fedlib."""

import warnings


from fedlib.config import Config
from fedlib.papers.fedic import reported as R


def test_tables_have_the_papers_shape_and_cells():
    t1, t2, t3 = R.TABLES["table1"], R.TABLES["table2"], R.TABLES["table3"]
    assert (len(t1.rows), len(t1.columns)) == (12, 6)
    assert (len(t2.rows), len(t2.columns)) == (7, 4)
    assert (len(t3.rows), len(t3.columns)) == (8, 4)
    assert t1.value("fedavg", "cifar10_if100").mean == 52.12
    assert t1.value("fedbe", "cifar100_if50").mean == 23.77
    assert t1.value("fedic", "cifar100_if10").mean == 41.93
    assert t2.value("fedic", "few").mean == 15.91 and t2.value("lws", "all").mean == 21.58
    assert t3.value("d", "all").mean == 64.77 and t3.value("e", "many").mean == 77.20
    assert t3.value("h", "all").mean == t1.value("fedic", "cifar10_if100").mean  # (h) is Table 1's FEDIC
    assert not t1.has_std and all(v is not None for v in t1.values.values())


def test_table3_rows_map_to_fedic_switches_and_teacher_rows_read_the_teacher():
    t3 = R.TABLES["table3"]
    assert R.TABLE3_INFERRED["d"] == (True, True, False) and R.TABLE3_INFERRED["e"] == (False, False, True)
    for teacher, student in zip("abcd", "efgh"):
        # a teacher row runs the KD run with the same teacher and reads its teacher accuracy
        assert t3.row(teacher).params == t3.row(student).params
        assert (R.TABLE3_VALUES[teacher], R.TABLE3_VALUES[student]) == ("teacher_accuracy", "accuracy")
    assert any("inferred" in n for n in t3.notes)


def test_every_cell_is_a_valid_fedlib_configuration():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the D_ulb stand-in warning
        for t in R.TABLES.values():
            for r in t.rows:
                for c in t.columns:
                    cfg = Config(**t.config(r.key, c.key))
                    assert cfg.model == t.config(r.key, c.key)["model"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the D_ulb stand-in warning
        cfg = Config(**R.TABLES["table1"].config("fedic", "cifar10_if100"))
    assert (cfg.rounds, cfg.local_epochs, cfg.lr, cfg.server_aux_per_class, cfg.fedic_lambda) == (200, 10, 0.1, 100,
                                                                                                    0.5)


def test_every_deviation_names_its_parameters_and_they_exist():
    from fedlib.config import all_params
    from fedlib.papers.fedic.deviations import DEVIATIONS

    known = set(all_params())
    for d in DEVIATIONS:
        assert set(d) == {"what", "paper", "code", "fedlib", "param"}
        for name in filter(None, (p.strip() for p in d["param"].split(","))):
            prefix = name.rstrip("*")
            assert any(k == name or (name.endswith("*") and k.startswith(prefix)) for k in known), name
