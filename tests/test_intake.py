"""Data intake and the command line, and the public catalogue and entity
list): each case of the issues through the CLI as a user runs it (in-process), plus the loaders."""
from __future__ import annotations

import json
import math
import os
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpfed_core.cli import main
from tests.toy import toy_csv
from dpfed_core.data.eicu import load_eicu
from dpfed_core.data.long_table import load_long_table
from dpfed_core.errors import ConfigError, DataError
from dpfed_core.evaluation import experiments as ex


_toy = toy_csv


TOY = ["--user-col", "patient", "--item-col", "drug", "--value-col", "count", "--entity-col", "hospital",
       "--value-max", "5", "--entities-from-data"]  # a toy table: its entity list read from it


@pytest.fixture
def toy(tmp_path):
    return _toy(tmp_path / "toy.csv")


def one_error(capsys, code, *needles):
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err, err
    for n in needles:
        assert n in err, (n, err)
    return err


# ------------------------------------------------------------------ silent wrong results → correct
def test_ids_are_exact_strings(tmp_path):
    text = ("user,item,rating,site\n"
            "1,5,3,A\n1,05,5,A\n2,5,4,A\n"          # items 5 and 05 of user 1: two items, never summed
            "01,5,2,B\n1.0,5,1,B\n1e0,7,2,B\n")     # users 01, 1.0, 1e0 of B are not user 1 of A
    p = tmp_path / "ids.csv"
    p.write_text(text)
    ds = load_long_table(p, user_col="user", item_col="item", value_col="rating", entity_col="site")
    assert sorted(ds.user_ids) == sorted(["1", "2", "01", "1.0", "1e0"])
    assert sorted(ds.item_ids) == ["05", "5", "7"]
    r = list(ds.user_ids).index("1")
    row = dict(zip(ds.item_ids[ds.X[r].indices], ds.X[r].data))
    assert row == {"5": 3.0, "05": 5.0} and ds.X.max() <= 5
    assert ds.entity_names == ["A", "B"]
    assert p.read_text() == text


def test_zero_values_dropped_with_a_note(tmp_path, capsys, toy):
    df = pd.read_csv(toy)
    df.loc[::4, "count"] = 0
    df.to_csv(toy, index=False)
    assert main(["run", "--data", str(toy), *TOY, "--method", "kmeans", "--k", "3", "--rank", "2"]) == 0
    out = capsys.readouterr().out
    assert f"dropped {int((df['count'] == 0).sum())} of {len(df)} rows with value 0" in out
    assert "same as no event" in out
    rt = tmp_path / "r.csv"
    df.rename(columns={"count": "rating"}).to_csv(rt, index=False)
    ds = load_long_table(rt, user_col="patient", item_col="drug", value_col="rating", entity_col="hospital")
    assert ds.value_kind == "ratings" and any("read as 'not rated'" in n for n in ds.notes)


@pytest.mark.parametrize("flag,value,needle", [("--epsilons", "1,1,1", "--epsilons repeats 1"),
                                               ("--seeds", "0,0,0", "--seeds repeats 0")])
def test_duplicate_grid_values_refused(capsys, toy, flag, value, needle, tmp_path):
    out = tmp_path / "s.json"
    code = main(["sweep", "--data", str(toy), *TOY, "--k", "3", "--rank", "2", flag, value, "--out", str(out)])
    one_error(capsys, code, needle)
    assert not out.exists()


def test_value_kind_from_declaration_or_column_name(tmp_path, capsys, toy):
    assert main(["run", "--data", str(toy), *[a for a in TOY if a != "counts"], "--method", "kmeans", "--k", "3",
                 "--rank", "2"]) == 0
    out = capsys.readouterr().out
    assert "values: counts" in out and "mode zero" in out
    assert "values read as counts (inferred from the value column's name 'count')" in out
    v = _toy(tmp_path / "v.csv", value_col="value")
    code = main(["run", "--data", str(v), *TOY[:4], "--value-col", "value", "--entity-col", "hospital",
                 "--value-max", "20"])
    one_error(capsys, code, "--value-kind")
    assert main(["run", "--data", str(v), *TOY[:4], "--value-col", "value", "--entity-col", "hospital",
                 "--value-kind", "counts", "--value-max", "20", "--method", "kmeans", "--k", "3", "--rank", "2"]) == 0
    assert "values: counts (bound 20), mode zero" in capsys.readouterr().out


def test_values_above_the_bound_one_rule_for_both_loaders(tmp_path, capsys, eicu_dir):
    ratings = tmp_path / "r.csv"
    ratings.write_text("user,item,rating,site\nu1,1,3,A\nu2,1,7,A\nu3,1,2,B\n")
    code = main(["run", "--data", str(ratings), "--user-col", "user", "--item-col", "item", "--value-col",
                 "rating", "--entity-col", "site"])
    one_error(capsys, code, "above 5, the maximum assumed for ratings without a declared --value-max",
              "--value-kind counts")
    code = main(["run", "--data", str(ratings), "--user-col", "user", "--item-col", "item", "--value-col",
                 "rating", "--entity-col", "site", "--value-max", "5"])
    one_error(capsys, code, "above the declared maximum --value-max 5", "--value-kind counts")
    counts = tmp_path / "c.csv"
    counts.write_text("user,item,count,site\nu1,1,3,A\nu2,1,7,A\nu3,1,2,B\n")
    ds = load_long_table(counts, user_col="user", item_col="item", value_col="count", entity_col="site", value_max=5)
    assert any("1 value (33.33%) exceeds the declared public bound 5; it is kept" in n for n in ds.notes)
    e = load_eicu(eicu_dir, value_max=5)
    assert any("exceed the declared public bound 5; they are kept" in n for n in e.notes)


def test_dp_gaussian_k_is_a_maximum_note(capsys, toy):
    assert main(["run", "--data", str(toy), *TOY, "--method", "dp-gaussian", "--k", "7", "--rank", "2",
                 "--epsilon", "5", "--simulation", "--items", str(_items_file(toy))]) == 0
    assert "dp-gaussian treats --k 7 as a maximum" in capsys.readouterr().out


def _sweep_doc(points: dict, ref: float, metric="mar", mode="zero", mar=None):
    runs = []
    for eps, vals in points.items():
        for s, v in enumerate(vals):
            o = {"mar": (mar or {}).get(eps, 0.2), metric: v}
            runs.append({"method": "dp-x", "epsilon": eps, "seed": s, "overall": o})
    for s in range(2):
        runs.append({"method": "individual", "epsilon": 0.0, "seed": s, "overall": {metric: ref, "mar": 0.3}})
    return {"config": {"method": "dp-x", "mode": mode}, "runs": runs, "references": ["individual"]}


def test_crossing_wording_and_meaning():
    only_inf = _sweep_doc({1.0: [0.4, 0.4], 10.0: [0.35, 0.35], math.inf: [0.1, 0.1]}, ref=0.3)
    rep = ex.crossing_report(only_inf, "mar")
    assert rep["epsilon"] == math.inf and rep["text"].startswith("none at finite ε")
    lucky = _sweep_doc({1.0: [0.2, 0.2], 3.0: [0.4, 0.4], 10.0: [0.2, 0.2], math.inf: [0.1, 0.1]}, ref=0.3)
    assert ex.crossing_epsilon(lucky, "mar") == 10.0  # must stay below for every larger ε
    rmse = _sweep_doc({1.0: [0.3, 0.3], math.inf: [0.2, 0.2]}, ref=0.9, metric="test_rmse")
    rep = ex.crossing_report(rmse, "test_rmse")
    assert rep["epsilon"] is None and not rep["meaningful"] and "zero mode" in rep["text"]
    random_mar = _sweep_doc({0.3: [0.5, 0.5], 1.0: [0.4, 0.4]}, ref=0.9, metric="test_rmse", mode="observed",
                            mar={0.3: 0.5, 1.0: 0.2})
    assert ex.crossing_epsilon(random_mar, "test_rmse") == 1.0  # 0.3 is random by MAR: not a crossing
    never = _sweep_doc({1.0: [0.4, 0.4]}, ref=0.3)
    assert ex.crossing_report(never)["text"].startswith("none in the grid")


def test_individual_and_random_v_epsilon_same_in_run_and_sweep(tmp_path, toy):
    r, s = tmp_path / "r.json", tmp_path / "s.json"
    assert main(["run", "--data", str(toy), *TOY, "--method", "individual", "--rank", "2", "--compare",
                 "random-v", "--out", str(r)]) == 0
    assert main(["sweep", "--data", str(toy), *TOY, "--method", "kmeans", "--k", "3", "--rank", "2", "--seeds",
                 "0", "--references", "individual,random-v", "--out", str(s)]) == 0
    run, sw = json.loads(r.read_text()), json.loads(s.read_text())
    eps_run = {"individual": run["privacy"]["epsilon"], "random-v": run["comparison"]["random-v"]["privacy"]["epsilon"]}
    eps_sweep = {x["method"]: x["epsilon"] for x in sw["runs"] if x["method"] != "kmeans"}
    assert eps_run == eps_sweep == {"individual": 0.0, "random-v": 0.0}
    assert sw["complete"] is True and "crossing" in sw


# ------------------------------------------------------------------ tracebacks and hangs → one line
@pytest.mark.parametrize("extra,needle", [
    (["--method", "dp-gaussian", "--epsilon", "1e50"], "--epsilon"),
    (["--epsilon", "1e400"], "--epsilon"),
    (["--value-max", "1e308"], "--value-max"),
    (["--seed", "-1"], "--seed"),
    (["--method", "dp-gaussian", "--param", "support=-1"], "--param"),
    (["--method", "dp-gaussian", "--param", "support=abc"], "--param"),
    (["--method", "dp-gaussian", "--param", "value_max=1e308"], "--value-max"),
    (["--rank", "1000000"], "--rank 1000000 is more than the data allows"),
    (["--k", "1000000"], "--k"),
    (["--param", "n_jobs=0"], "n_jobs"),
    (["--min-entity-users", "5"], "--exclude-entities"),
    (["--items", "/nonexistent/items.txt"], "--items"),
])
def test_bad_flags_fail_before_computing(capsys, toy, tmp_path, extra, needle):
    out = tmp_path / "r.json"
    code = main(["run", "--data", str(toy), *TOY, "--k", "3", "--rank", "2", *extra, "--out", str(out)])
    one_error(capsys, code, needle)
    assert not out.exists()


def test_bad_metric_fails_before_the_sweep(capsys, toy, tmp_path, monkeypatch):
    def boom(*a, **k):
        raise AssertionError("computed before validating --metric")
    monkeypatch.setattr(ex, "run_method", boom)
    code = main(["sweep", "--data", str(toy), *TOY, "--metric", "bogus", "--out", str(tmp_path / "s.json")])
    one_error(capsys, code, "--metric 'bogus'", "mar")


@pytest.mark.parametrize("kind", ["directory", "unwritable"])
def test_bad_out_fails_before_computing(capsys, toy, tmp_path, monkeypatch, kind):
    def boom(*a, **k):
        raise AssertionError("computed before validating --out")
    monkeypatch.setattr(ex, "run_method", boom)
    target = tmp_path if kind == "directory" else tmp_path / "ro" / "r.json"
    if kind == "unwritable":
        import dpfed_core.data.atomic as atomic

        (tmp_path / "ro").mkdir()

        def no_space(*a, **k):
            raise PermissionError(13, "Permission denied")
        monkeypatch.setattr(atomic.tempfile, "mkstemp", no_space)
    code = main(["run", "--data", str(toy), *TOY, "--out", str(target)])
    one_error(capsys, code, "--out")


def test_full_disk_keeps_the_previous_file(capsys, toy, tmp_path, monkeypatch):
    import dpfed_core.data.atomic as atomic

    out = tmp_path / "r.json"
    out.write_text('{"old": true}')

    def full(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(atomic.os, "fsync", full)
    code = main(["run", "--data", str(toy), *TOY, "--method", "kmeans", "--k", "3", "--rank", "2",
                 "--out", str(out)])
    one_error(capsys, code, "No space left on device", "--out")
    assert out.read_text() == '{"old": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.json", "toy.csv"]  # no temp file left


def test_report_is_written_atomically(capsys, toy, tmp_path, monkeypatch):
    run = tmp_path / "r.json"
    assert main(["run", "--data", str(toy), *TOY, "--method", "kmeans", "--k", "3", "--rank", "2",
                 "--out", str(run)]) == 0
    import dpfed_core.reporting.report as report

    html = tmp_path / "report.html"

    def broken(*a, **k):
        raise RuntimeError("chart failed")
    monkeypatch.setattr(report, "build_report", broken)
    code = main(["report", "--run", str(run), "--no-charts", "--out", str(html)])
    one_error(capsys, code, "chart failed")
    assert not html.exists()  # never a 0-byte HTML
    monkeypatch.undo()
    assert main(["report", "--run", str(run), "--no-charts", "--out", str(html)]) == 0
    assert html.stat().st_size > 1000


def test_sweep_resume_after_a_kill(capsys, toy, tmp_path, monkeypatch):
    out = tmp_path / "s.json"
    args = ["sweep", "--data", str(toy), *TOY, "--method", "kmeans", "--k", "3", "--rank", "2",
            "--seeds", "0,1,2", "--references", "individual"]
    real = ex.run_method
    calls = []

    def killed_after_three(*a, **k):
        if len(calls) == 3:
            raise KeyboardInterrupt
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(ex, "run_method", killed_after_three)
    assert main([*args, "--out", str(out)]) == 130
    assert capsys.readouterr().err.startswith("interrupted: ")
    partial = json.loads(out.read_text())
    assert partial["complete"] is False and len(partial["runs"]) == 3
    # another seed list or reference list would drop finished points (or keep none): refused, naming both
    other = [a if a != "0,1,2" else "0,1" for a in args]
    code = main([*other, "--resume", str(out)])
    one_error(capsys, code, "--resume", "seeds [0, 1, 2] there, [0, 1] here")
    assert json.loads(out.read_text()) == partial  # the partial document untouched
    monkeypatch.setattr(ex, "run_method", real)
    done = []
    monkeypatch.setattr(ex, "run_method", lambda *a, **k: (done.append(1), real(*a, **k))[1])
    assert main([*args, "--resume", str(out)]) == 0
    # the time is predicted for the points still to compute, not for the whole sweep again
    assert "predicted for 3 runs on these data" in capsys.readouterr().out
    full = json.loads(out.read_text())
    assert full["complete"] is True and len(full["runs"]) == 6 and len(done) == 3
    assert full["runs"][:2] == partial["runs"][:2]  # finished points kept, not recomputed
    code = main([*args[:-4], "--seeds", "0,1,2", "--references", "individual", "--rank", "3",
                 "--resume", str(out)])
    one_error(capsys, code, "--resume", "rank")


# ------------------------------------------------------------------ loaders: eICU tables, flags, help
def _mini_eicu(root: Path, tables: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "patient.csv").write_text("patientunitstayid,hospitalid\n" +
                                      "".join(f"{i},{1 + i % 3}\n" for i in range(1, 31)))
    for name, text in tables.items():
        (root / name).write_text(text)
    return root


INFUSION = "infusiondrugid,patientunitstayid,infusionoffset,drugname,drugrate\n" + "".join(
    f"{k},{1 + k % 30},{k},{['Norepinephrine (mcg/min)', 'Propofol (mcg/kg/min)', 'Heparin (units/hr)'][k % 3]},5\n"
    for k in range(120))


def test_eicu_any_event_table(tmp_path, capsys):
    d = _mini_eicu(tmp_path / "eicu", {"infusionDrug.csv": INFUSION})
    ds = load_eicu(d, "infusionDrug")
    assert ds.n_items == 3 and ds.n_entities == 3 and ds.value_kind == "counts"
    assert {"norepinephrine", "propofol", "heparin"} == set(ds.item_names)
    code = main(["run", "--data", str(d), "--method", "kmeans", "--k", "2", "--rank", "2"])
    one_error(capsys, code, "no medication.csv", "--events", "infusionDrug")
    assert main(["run", "--data", str(d), "--events", "infusionDrug", "--method", "kmeans", "--k", "2",
                 "--rank", "2"]) == 0


def test_federation_help_and_exclude_entities(capsys, toy):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    for word in ("occupation", "gender", "age", "region", "--exclude-entities", "--items"):
        assert word in help_text
    assert main(["run", "--data", str(toy), *TOY, "--method", "kmeans", "--k", "3", "--rank", "2",
                 "--exclude-entities", "hospital 2"]) == 0
    assert "in 2 entities" in capsys.readouterr().out
    code = main(["run", "--data", str(toy), *TOY, "--exclude-entities", "hospital 9"])
    one_error(capsys, code, "--exclude-entities names 'hospital 9'")
    code = main(["run", "--data", str(toy), *TOY, "--exclude-entities", "hospital 0,hospital 1,hospital 2"])
    err = one_error(capsys, code, "--exclude-entities leaves no entity (all 3 are left out)", "leave fewer out")
    assert "'?'" not in err and "--entity-col" not in err, err
    code = main(["run", "--data", str(toy), *TOY, "--exclude-entities", "hospital 0,hospital 1"])
    one_error(capsys, code, "--exclude-entities leaves one entity ('hospital 2')")


def test_errors_name_the_front_ends_controls():
    from dpfed_core.cli.args import CLI_NAMES

    exc = ConfigError("pass value_max (e.g. 20) or events=lab", param="value_max")
    assert exc.render(CLI_NAMES) == "pass --value-max (e.g. 20) or --events lab"
    controls = {"value_max": "“Declared maximum of one value”", "events": "“Event tables”"}
    assert exc.render(controls) == "pass “Declared maximum of one value” (e.g. 20) or “Event tables”: lab"
    assert exc.param == "value_max" and str(exc) == "pass value_max (e.g. 20) or events=lab"


# ------------------------------------------------------------------ public catalogue and entity list
def _items_file(csv: Path) -> Path:
    p = csv.with_suffix(".items.txt")
    p.write_text("".join(f"item {i}\n" for i in range(30)))  # the declared catalogue: 30 items, 25 used
    return p


def _shapes(doc):
    return ([(m["round"], m["sender"], m["receiver"], m["content"], m["shape"]) for m in doc["messages"]],
            [e["name"] for e in doc["entities"]])


def _drop_user_ml(src: Path, dst: Path, user: str = "7") -> Path:
    dst.mkdir()
    for f in ("u.user", "u.item"):
        shutil.copy(src / f, dst / f)
    lines = (src / "u.data").read_text().splitlines(keepends=True)
    (dst / "u.data").write_text("".join(ln for ln in lines if ln.split("\t")[0] != user))
    return dst


def test_message_shapes_public_movielens(ml100k_dir, tmp_path):
    less = _drop_user_ml(ml100k_dir, tmp_path / "ml-less")
    docs = []
    for d in (ml100k_dir, less):
        out = tmp_path / f"{d.name}.json"
        assert main(["run", "--data", str(d), "--method", "dp-gaussian", "--epsilon", "1", "--k", "4", "--rank",
                     "3", "--param", "cluster_size=none", "--simulation", "--out", str(out)]) == 0
        docs.append(json.loads(out.read_text()))
    assert docs[0]["dataset"]["n_items"] == docs[1]["dataset"]["n_items"] == 1682
    assert docs[0]["dataset"]["n_users"] == docs[1]["dataset"]["n_users"] + 1
    assert _shapes(docs[0]) == _shapes(docs[1])
    assert all(m["shape"][-1] == 1682 for m in docs[0]["messages"] if m["round"] == 1)


def test_message_shapes_public_eicu_with_formulary(eicu_dir, tmp_path):
    full = load_eicu(eicu_dir)
    formulary = tmp_path / "formulary.txt"  # a declared public list (here: built in tmp for the test)
    formulary.write_text("\n".join(sorted(full.item_names)) + "\nsome drug nobody got\n")
    less = tmp_path / "eicu-less"
    less.mkdir()
    for f in ("hospital.csv.gz", "medication.csv.gz"):
        shutil.copy(eicu_dir / f, less / f)
    pat = pd.read_csv(eicu_dir / "patient.csv.gz", dtype=str)
    sizes = pat.groupby("hospitalid").size()
    h10 = sizes[sizes == 10].index[0] if (sizes == 10).any() else sizes.idxmax()
    victim = pat.loc[pat["hospitalid"] == h10, "patientunitstayid"].iloc[0]
    pat.loc[pat["patientunitstayid"] != victim].to_csv(less / "patient.csv.gz", index=False)
    docs = []
    for d in (eicu_dir, less):
        out = tmp_path / f"{d.name}.json"
        assert main(["run", "--data", str(d), "--items", str(formulary), "--method", "dp-gaussian", "--epsilon",
                     "1", "--k", "3", "--rank", "3", "--param", "cluster_size=none", "--simulation",
                     "--out", str(out)]) == 0
        docs.append(json.loads(out.read_text()))
    assert docs[0]["dataset"]["n_items"] == docs[1]["dataset"]["n_items"] == full.n_items + 1
    assert _shapes(docs[0]) == _shapes(docs[1])
    assert f"hospital {h10}" in _shapes(docs[1])[1]  # the hospital with one stay fewer still takes part


def test_message_shapes_public_csv_with_items(tmp_path, toy):
    items = _items_file(toy)
    df = pd.read_csv(toy)
    less = tmp_path / "less.csv"
    df.loc[df["patient"] != "h1u3"].to_csv(less, index=False)
    docs = []
    for d in (toy, less):
        out = tmp_path / f"{d.stem}.json"
        assert main(["run", "--data", str(d), *TOY, "--items", str(items), "--method", "dp-gaussian",
                     "--epsilon", "1", "--k", "3", "--rank", "2", "--param", "cluster_size=none", "--simulation",
                     "--out", str(out)]) == 0
        docs.append(json.loads(out.read_text()))
    assert docs[0]["dataset"]["n_items"] == 30 and _shapes(docs[0]) == _shapes(docs[1])


def test_without_a_catalogue_a_dp_run_selects_items_and_pays_for_it(tmp_path, toy, capsys):
    out = tmp_path / "r.json"
    assert main(["run", "--data", str(toy), *TOY, "--method", "dp-gaussian", "--epsilon", "8", "--k", "3",
                 "--rank", "2", "--simulation", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    rows = [r for r in doc["privacy"]["ledger"] if r["stage"] == "catalogue"]
    assert {r["entity"] for r in rows} == {"hospital 0", "hospital 1", "hospital 2"}
    assert all(r["epsilon"] == pytest.approx(8 * 0.2) for r in rows)
    assert doc["privacy"]["epsilon"] <= 8 * (1 + 1e-9) and doc["privacy"]["delta"] <= 1e-6 * (1 + 1e-9)
    sel = [m for m in doc["messages"] if m["content"] == "DP-selected item ids"]
    assert len(sel) == 3
    assert any("selected by DP partition selection" in n for n in doc["notes"])


def test_catalogue_selection_privacy_map():
    """The threshold K is the smallest integer with P(item held by one user is released) ≤ δ/c, and
    the selection's ledger rows carry ε = c/b (the discrete Laplace map at L1 sensitivity c)."""
    from dpfed_core.privacy.catalogue import new_item_release_probability, selection_threshold

    for eps in (0.05, 1.0, 10.0):
        for delta in (1e-9, 1e-6, 1e-3):
            for c in (1, 4, 20):
                b, k = selection_threshold(eps, delta, c)
                assert b == pytest.approx(c / eps)
                assert new_item_release_probability(b, k) <= delta / c * (1 + 1e-12)
                assert new_item_release_probability(b, k - 1) > delta / c  # K is the smallest that works
    with pytest.raises(ConfigError, match="needs δ > 0"):
        selection_threshold(1.0, 0.0, 4)
