"""The federation is a declared, public input — never read off the private rows.

The acceptance test: the eICU demo as a long CSV with a declared formulary and the hospital table's
hospital list; removing the only patient of a single-patient hospital leaves the server's messages
unchanged (same count, same senders, same shapes). Also: empty declared entities through every DP
method, the refusal of a DP run on an undeclared federation, and the consent flag."""
from __future__ import annotations

import gzip
import io
import json
import math

import numpy as np
import pandas as pd
import pytest

from dpfed_core.cli import main
from dpfed_core.config import RunConfig
from dpfed_core.data.loaders import load_data
from dpfed_core.data.long_table import load_long_table
from dpfed_core.data.samples import sample_entities
from dpfed_core.errors import ConfigError, DataError
from dpfed_core.evaluation.experiments import run_method


def _eicu_long(eicu_dir, tmp_path):
    """medication × patient of the eICU demo as one long CSV (stay, drug, hospital), the formulary (every
    drug name of the medication table: public, a hospital system's drug list) and the hospital list."""
    with gzip.open(eicu_dir / "medication.csv.gz") as f:
        med = pd.read_csv(f, usecols=["patientunitstayid", "drugname"], dtype=str, keep_default_na=False)
    with gzip.open(eicu_dir / "patient.csv.gz") as f:
        pat = pd.read_csv(f, usecols=["patientunitstayid", "hospitalid"], dtype=str, keep_default_na=False)
    with gzip.open(eicu_dir / "hospital.csv.gz") as f:
        hosp = pd.read_csv(f, usecols=["hospitalid"], dtype=str, keep_default_na=False)
    med = med[med["drugname"].str.strip() != ""]
    t = med.merge(pat, on="patientunitstayid")
    t.columns = ["stay", "drug", "hospital"]
    items = tmp_path / "formulary.txt"
    # one drug per line, as written (names contain commas and spaces): the one list reader takes each whole
    items.write_text("drug\n" + "\n".join(sorted(t["drug"].unique())) + "\n")
    ents = tmp_path / "hospitals.txt"
    ents.write_text("hospitalid\n" + "\n".join(hosp["hospitalid"]) + "\n")
    return t, items, ents


def _messages(doc):
    return [(m["round"], m["sender"], m["receiver"], tuple(m["shape"])) for m in doc["messages"]]


def test_sole_patient_removed_leaves_every_message_unchanged(eicu_dir, tmp_path):
    t, items, ents = _eicu_long(eicu_dir, tmp_path)
    stays = t.groupby("hospital")["stay"].nunique()
    sole = stays[stays == 1].index[0]  # e.g. hospital 188 in the demo
    full, minus = tmp_path / "full.csv", tmp_path / "minus.csv"
    t.to_csv(full, index=False)
    t[t["hospital"] != sole].to_csv(minus, index=False)
    docs = []
    for path in (full, minus):
        out = tmp_path / f"{path.stem}.json"
        code = main(["run", "--data", str(path), "--user-col", "stay", "--item-col", "drug", "--entity-col",
                     "hospital", "--value-kind", "implicit", "--items", str(items), "--entities", str(ents),
                     "--method", "dp-popularity", "--epsilon", "1", "--out", str(out)])
        assert code == 0
        docs.append(json.loads(out.read_text()))
    a, b = docs
    assert a["dataset"]["entity_source"] == "declared" and a["dataset"]["n_entities"] == b["dataset"]["n_entities"]
    assert _messages(a) == _messages(b) and len(_messages(a)) > 0
    assert any(m[1] == sole for m in _messages(b))  # the emptied hospital still sends its release
    assert a["dataset"]["n_items"] == b["dataset"]["n_items"]


def test_undeclared_federation_refused_for_dp_and_accepted_with_consent(tmp_path, capsys):
    rows = [f"u{e}{i},i{j},{e}" for e in "AB" for i in range(6) for j in range(4)]
    data = tmp_path / "t.csv"
    data.write_text("user,item,site\n" + "\n".join(rows) + "\n")
    base = ["run", "--data", str(data), "--user-col", "user", "--item-col", "item", "--entity-col", "site",
            "--value-kind", "implicit", "--method", "dp-popularity", "--epsilon", "1", "--rank", "2"]
    assert main(base) == 2
    err = capsys.readouterr().err
    assert "--entities" in err and "--entities-from-data" in err and "Traceback" not in err
    out = tmp_path / "r.json"
    assert main([*base, "--entities-from-data", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["dataset"]["entity_source"] == "data"
    assert any("membership of an entity is NOT protected" in a for a in doc["privacy"]["assumptions"])
    # non-private methods need no declaration (nothing is claimed)
    assert main([*base[:-6], "--method", "individual", "--rank", "2"]) == 0


def test_declared_entities_drop_others_and_keep_empty(tmp_path):
    text = "user,item,site\n" + "\n".join(f"u{e}{i},i{j},{e}" for e in "ABC" for i in range(5) for j in range(3))
    ds = load_long_table(io.BytesIO(text.encode()), filename="t.csv", user_col="user", item_col="item",
                         entity_col="site", value_kind="implicit", entities=["A", "B", "Z"])
    assert ds.entity_names == ["A", "B", "Z"] and ds.entity_source == "declared"
    assert [r["users"] for r in ds.summary()] == [5, 5, 0]
    (dropped,) = [n for n in ds.notes if "not in the declared entity list" in n]
    assert dropped.startswith("dropped 15 rows (33 % of the table) of 1 entity") and "'C'" in dropped
    assert "most of the table" not in dropped
    assert any("no user" in n and "Z" in n for n in ds.notes)
    only_a = load_long_table(io.BytesIO(text.encode()), filename="t.csv", user_col="user", item_col="item",
                             entity_col="site", value_kind="implicit", entities=["A", "Z"])
    (dropped,) = [n for n in only_a.notes if "not in the declared entity list" in n]
    assert "(67 % of the table) of 2 entities" in dropped and "most of the table: check the entity list" in dropped
    # --exclude-entities still works on a declared list
    ds2 = load_long_table(io.BytesIO(text.encode()), filename="t.csv", user_col="user", item_col="item",
                          entity_col="site", value_kind="implicit", entities=["A", "B", "Z"],
                          exclude_entities=["Z"])
    assert ds2.entity_names == ["A", "B"]


def test_a_strict_declared_list_refuses_rows_of_other_entities_by_name(tmp_path):
    """A site's own export read against the federation's list: a row of an entity the list lacks is an
    error naming it (dropping it would lose the site's rows without a word); the same table loads when
    every entity is listed, on every loader the option reaches."""
    text = "user,item,site\n" + "\n".join(f"u{e}{i},i{j},{e}" for e in "ABC" for i in range(5) for j in range(3))
    kw = dict(filename="t.csv", user_col="user", item_col="item", entity_col="site", value_kind="implicit")
    with pytest.raises(DataError, match=r"holds 15 rows \(33 % of the table\) of 1 entity not in the declared "
                                        r"entity list \('C'\)") as err:
        load_long_table(io.BytesIO(text.encode()), entities=["A", "B", "Z"], undeclared_entities="error", **kw)
    assert err.value.param == "entities"
    ds = load_long_table(io.BytesIO(text.encode()), entities=["A", "B", "C", "Z"], undeclared_entities="error", **kw)
    assert ds.entity_names == ["A", "B", "C", "Z"] and not [n for n in ds.notes if "declared entity list" in n]
    with pytest.raises(ConfigError, match="undeclared_entities='keep' must be 'drop' or 'error'"):
        load_long_table(io.BytesIO(text.encode()), entities=["A", "B", "C"], undeclared_entities="keep", **kw)
    with pytest.raises(DataError, match=r"of 29 entities not in the declared entity list \('hospital 02', 'hospital 03'"):
        load_data("sample:clinic", entities=["hospital 01"], undeclared_entities="error")


@pytest.mark.parametrize("method,agg", [("dp-popularity", "none"), ("dp-cooccurrence", "secure"),
                                        ("dp-gaussian", "none"), ("kmeans", "none")])
def test_empty_declared_entity_takes_part(method, agg):
    ds = load_data("sample:clinic", entities=sample_entities("clinic") + ["hospital 99"])
    assert ds.n_entities == 31 and ds.summary()[-1]["users"] == 0
    doc, _ = run_method(ds, RunConfig(method=method, epsilon=1, k=5, rank=3, seed=0, simulation=True,
                                      aggregation=agg))
    assert math.isfinite(doc["overall"]["mar"])
    senders = {m["sender"] for m in doc["messages"]}
    assert "hospital 99" in senders


def test_loaders_declare_their_federation(ml100k_dir, eicu_dir):
    ml = load_data(str(ml100k_dir), federation="zip")
    assert ml.entity_source == "declared" and ml.entity_names[-1] == "ZIP other" and ml.n_entities == 11
    occ = load_data(str(ml100k_dir), federation="occupation")
    assert occ.n_entities == len((ml100k_dir / "u.occupation").read_text().split())
    eicu = load_data(str(eicu_dir))
    hosp = pd.read_csv(eicu_dir / "hospital.csv.gz", dtype=str)
    assert eicu.n_entities == hosp["hospitalid"].nunique() and eicu.entity_source == "declared"
    assert min(r["users"] for r in eicu.summary()) == 0  # hospitals without a stay in the demo take part
    assert load_data("sample:clinic").entity_source == "declared"


def test_refusal_in_the_engine_too():
    ds = load_data("sample:synthetic")
    from dataclasses import replace

    undeclared = replace(ds, entity_source="data", entities_accepted=False)
    with pytest.raises(ConfigError, match="entities"):
        run_method(undeclared, RunConfig(method="dp-popularity", epsilon=1, rank=2, seed=0))
    doc, _ = run_method(undeclared, RunConfig(method="popularity", rank=2, seed=0))
    assert np.isfinite(doc["overall"]["mar"])


def test_an_undeclared_federation_is_refused_only_for_a_private_run_that_is_not_a_simulation():
    from dataclasses import replace

    from dpfed_core.evaluation.experiments import check_declared_federation

    undeclared = replace(load_data("sample:synthetic"), entity_source="data", entities_accepted=False)
    with pytest.raises(ConfigError, match="entities=FILE") as refused:
        check_declared_federation(undeclared, RunConfig(method="dp-popularity", epsilon=1.0))
    # each front end fills in its own names: the CLI's flags, the page's controls, never one inside the other
    from dpfed_core.cli.main import render_error
    from dpfed_core.ui.inputs import friendly_message

    cli, page = render_error(refused.value), friendly_message(refused.value).replace("\\", "")
    assert "--entities FILE" in cli and "--entities-from-data" in cli and "“" not in cli, cli
    assert "“Declared entity list” on the Data page" in page and "“Read the entity list from the data”" in page
    assert "--" not in page and "dashboard" not in page and "entities=FILE" not in page, page
    check_declared_federation(undeclared, RunConfig(method="dp-popularity", epsilon=1.0, simulation=True))
    check_declared_federation(undeclared, RunConfig(method="dp-popularity", epsilon=math.inf))
    check_declared_federation(undeclared, RunConfig(method="central"))
