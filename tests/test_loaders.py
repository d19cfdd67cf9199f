"""Loaders: every malformed input gets a specific DataError/ConfigError; real data loads right."""
from __future__ import annotations

import gzip
import io
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpfed_core.errors import ConfigError, DataError
from dpfed_core.data.eicu import load_eicu, normalize_drug_name, normalize_drug_names
from dpfed_core.data.loaders import load_data
from dpfed_core.data.long_table import derive_entity, load_long_table
from dpfed_core.data.movielens import load_movielens

OPTS = dict(user_col="user", item_col="item", value_col="rating", entity_col="site")


def _table(n_per_entity: int = 3, entities=("A", "B")) -> pd.DataFrame:
    """A small valid ratings table: users u<e><i> rate items 1..3."""
    rows = []
    for e in entities:
        for i in range(n_per_entity):
            for item in (1, 2, 3):
                rows.append({"user": f"u{e}{i}", "item": item, "rating": 1 + (i + item) % 5, "site": e})
    return pd.DataFrame(rows)


def _csv(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# ---------------------------------------------------------------- valid inputs
def test_csv_roundtrip_and_sorting(tmp_path):
    df = _table()
    p = tmp_path / "t.csv"
    df.to_csv(p, index=False)
    before = p.read_bytes()
    ds = load_long_table(p, **OPTS)
    assert ds.X.shape == (6, 3) and ds.X.nnz == 18
    assert ds.entity_names == ["A", "B"]
    assert list(ds.item_ids) == ["1", "2", "3"]
    assert ds.value_kind == "ratings" and ds.value_max == 5
    assert p.read_bytes() == before  # never modified


@pytest.mark.parametrize("fmt", ["csv.gz", "tsv", "parquet", "dataframe", "bytes", "filelike"])
def test_formats(tmp_path, fmt):
    df = _table()
    if fmt == "csv.gz":
        src = tmp_path / "t.csv.gz"
        df.to_csv(src, index=False, compression="gzip")
    elif fmt == "tsv":
        src = tmp_path / "t.tsv"
        df.to_csv(src, index=False, sep="\t")
    elif fmt == "parquet":
        src = tmp_path / "t.parquet"
        df.to_parquet(src)
    elif fmt == "dataframe":
        src = df
    elif fmt == "bytes":
        src = df.to_csv(index=False).encode()
    else:
        src = io.BytesIO(df.to_csv(index=False).encode())
        src.seek(3)
    ds = load_long_table(src, **OPTS, filename="upload.csv" if fmt in ("bytes", "filelike") else None)
    assert ds.X.shape == (6, 3) and ds.X.sum() == df["rating"].sum()
    if fmt == "filelike":
        assert src.tell() == 3  # the upload is left where it was
    if fmt == "dataframe":
        assert df.equals(_table())  # not mutated


def test_dataframe_not_mutated_and_numeric_ids():
    df = _table()
    df["user"] = np.repeat(np.arange(6) * 10, 3)  # numeric ids sort numerically
    copy = df.copy()
    ds = load_long_table(df, **OPTS)
    assert df.equals(copy)
    assert list(ds.user_ids) == ["0", "10", "20", "30", "40", "50"]


def test_entity_from_zip_first_digit():
    df = pd.DataFrame(
        {"user": ["a", "a", "b", "c", "d", "e", "f"], "item": [1, 2, 1, 1, 2, 1, 1],
         "rating": [3] * 7, "zip": ["12345", "12345", "19000", "55455", "5xxxx", "T8H1N", "V3N4P"]}
    )  # fmt: skip
    ds = load_long_table(df, user_col="user", item_col="item", value_col="rating", entity_from="zip",
                         entity_transform="first_digit")  # fmt: skip
    assert ds.entity_names == ["1", "5", "other"]
    assert np.bincount(ds.entity_of_user).tolist() == [2, 2, 2]


def test_derive_entity_transforms():
    s = pd.Series(["12345", " 98765", "K1A0B1", "7"])
    assert derive_entity(s, "first_digit").tolist() == ["1", "9", "other", "7"]
    # a full-width or Arabic-Indic digit is not an ASCII digit: 'other', never an entity of its own
    assert derive_entity(pd.Series(["１２３４５", "٣4567", "3"]), "first_digit").tolist() == ["other", "other", "3"]
    # the first character is the first character: region codes are not merged into "other"
    assert derive_entity(s, "first_char").tolist() == ["1", "9", "K", "7"]
    assert derive_entity(pd.Series(["N12", "S34", "N7"]), "first_char").tolist() == ["N", "S", "N"]
    assert derive_entity(s, "prefix:2").tolist() == ["12", "98", "K1", "7"]
    assert derive_entity(s, None).tolist() == ["12345", "98765", "K1A0B1", "7"]
    with pytest.raises(ConfigError, match="prefix:N"):
        derive_entity(s, "last_digit")


def test_duplicates_ratings_last_and_mean():
    df = pd.concat([_table(), pd.DataFrame([{"user": "uA0", "item": 1, "rating": 5, "site": "A"}])])
    first = df.loc[(df.user == "uA0") & (df.item == 1), "rating"].iloc[0]
    last = load_long_table(df.reset_index(drop=True), **OPTS)
    mean = load_long_table(df.reset_index(drop=True), **OPTS, duplicates="mean")
    r = list(last.user_ids).index("uA0")
    assert last.X[r, 0] == 5 and mean.X[r, 0] == (first + 5) / 2
    assert any("merged 1 repeated" in n for n in last.notes)
    with pytest.raises(DataError, match="more than once") as exc:
        load_long_table(df.reset_index(drop=True), **OPTS, duplicates="error")
    assert "merge them with duplicates=last (keep the last) or duplicates=mean (average them)" in str(exc.value)
    assert exc.value.param == "duplicates"


def test_duplicates_counts_summed_and_event_log():
    log = pd.DataFrame({"user": ["a", "a", "a", "b", "c", "d"], "item": ["x", "x", "y", "x", "y", "x"],
                        "site": ["H1", "H1", "H1", "H1", "H2", "H2"]})  # fmt: skip
    ds = load_long_table(log, user_col="user", item_col="item", entity_col="site", value_kind="counts",
                         value_max=10)  # fmt: skip
    assert ds.X.toarray().tolist() == [[2, 1], [1, 0], [0, 1], [1, 0]]
    imp = load_long_table(log, user_col="user", item_col="item", entity_col="site", value_kind="implicit")  # fmt: skip
    assert imp.X.max() == 1


def test_no_true_count_decides_entities_or_items():
    """Rare items and small entities are kept; leaving entities out is a public declaration."""
    df = _table(n_per_entity=3, entities=("A", "B", "C"))
    df = pd.concat([df, pd.DataFrame([{"user": "uA0", "item": 99, "rating": 4, "site": "A"}])], ignore_index=True)
    df2 = df.loc[~df.user.isin(["uC1", "uC2"])]
    ds = load_long_table(df2, **OPTS)
    assert "99" in ds.item_ids and ds.entity_names == ["A", "B", "C"]  # one-user entity C takes part
    ds2 = load_long_table(df2, **OPTS, exclude_entities=["C"])
    assert ds2.entity_names == ["A", "B"] and any("left out 1 declared entities: C" in n for n in ds2.notes)
    with pytest.raises(ConfigError, match="exclude_entities names 'Z'"):
        load_long_table(df2, **OPTS, exclude_entities=["Z"])
    with pytest.raises(ConfigError, match=r"exclude_entities leaves no entity \(all 3 are left out\)"):
        load_long_table(df2, **OPTS, exclude_entities=["A", "B", "C"])
    with pytest.raises(ConfigError, match=r"exclude_entities leaves one entity \('B'\)"):
        load_long_table(df2, **OPTS, exclude_entities=["A", "C"])
    for opt in ("min_entity_users", "min_item_users", "small_entities"):
        with pytest.raises(ConfigError, match=f"{opt} is no longer an option"):
            load_long_table(df2, **OPTS, **{opt: 3})


def test_value_over_max_as_note():
    df = _table()
    df.loc[0, "rating"] = 7
    ds = load_long_table(df, **OPTS, value_max=5, over_max="note")
    assert ds.X.max() == 7 and any("1 value (5.56%) exceeds the declared public bound 5; it is kept" in n for n in ds.notes)


def test_zero_ratings_are_dropped():
    df = _table()
    df.loc[0, "rating"] = 0
    ds = load_long_table(df, **OPTS)
    assert ds.X.nnz == len(df) - 1
    assert any("dropped 1 of 18 rows with value 0" in n and "not rated" in n for n in ds.notes)


# ---------------------------------------------------------------- one test per bad input
def test_missing_file(tmp_path):
    _csv(tmp_path, "x", "ratings.csv")
    with pytest.raises(DataError, match=r"not found: .*ratngs\.csv.*Did you mean: ratings\.csv"):
        load_long_table(tmp_path / "ratngs.csv", **OPTS)


def test_directory_instead_of_file(tmp_path):
    with pytest.raises(DataError, match="is a directory"):
        load_long_table(tmp_path, **OPTS)


def test_empty_file(tmp_path):
    with pytest.raises(DataError, match=r"empty \(0 bytes\)"):
        load_long_table(_csv(tmp_path, ""), **OPTS)


def test_empty_upload():
    with pytest.raises(DataError, match="upload.csv is empty"):
        load_long_table(b"", **OPTS, filename="upload.csv")


def test_blank_lines_only(tmp_path):
    with pytest.raises(DataError, match="empty"):
        load_long_table(_csv(tmp_path, "\n\n\n"), **OPTS)


def test_header_only(tmp_path):
    with pytest.raises(DataError, match="header but no data rows"):
        load_long_table(_csv(tmp_path, "user,item,rating,site\n"), **OPTS)


def test_a_header_alone_and_a_header_with_only_its_repeats_say_the_same_one_thing(tmp_path):
    """A header followed by nothing but its own repeats (files joined one after another, each empty) has
    no data row: the message of a header alone, once, in every reading of the file."""
    header = "user,item,rating,site\n"
    for text in (header, header * 3, header + "\n" + " user , item,rating, site\n"):
        path = _csv(tmp_path, text)
        for source, name in ((path, None), (path.read_bytes(), "up.csv")):
            with pytest.raises(DataError) as err:
                load_long_table(source, filename=name, value_max=5, entities_from_data=True, **OPTS)
            assert str(err.value) == f"{name or path} has a header but no data rows. Nothing to load.", err.value


def test_malformed_csv(tmp_path):
    text = "user,item,rating,site\nu1,1,3,A\nu2,2,4,B,extra,fields\n"
    with pytest.raises(DataError, match=r"not a well-formed .*line 3"):
        load_long_table(_csv(tmp_path, text), **OPTS)


def test_binary_file(tmp_path):
    p = tmp_path / "t.csv"
    p.write_bytes(b"\x00\x01\x02garbage\x00" * 50)
    with pytest.raises(DataError, match="binary"):
        load_long_table(p, **OPTS)


def test_corrupt_gzip(tmp_path):
    p = tmp_path / "t.csv.gz"
    p.write_bytes(gzip.compress(b"user,item,rating,site\n" + b"u1,1,3,A\n" * 1000)[:60])
    with pytest.raises(DataError, match="truncated or corrupt|empty"):
        load_long_table(p, **OPTS)


def test_fake_parquet(tmp_path):
    with pytest.raises(DataError, match="not one"):
        load_long_table(_csv(tmp_path, "user,item\n1,2\n", "t.parquet"), **OPTS)


def test_zip_or_excel(tmp_path):
    p = tmp_path / "t.xlsx"
    p.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(DataError, match="Excel workbook, not a table.* save the sheet as CSV") as exc:
        load_long_table(p, **OPTS)
    assert exc.value.param == "data"
    p = tmp_path / "t.zip"
    p.write_bytes(b"PK\x03\x04" + b"\x00" * 100)
    with pytest.raises(DataError, match="ZIP archive, not a table. Unzip it"):
        load_long_table(p, **OPTS)


def test_missing_column_lists_found_columns(tmp_path):
    p = tmp_path / "t.csv"
    _table().rename(columns={"rating": "Rating"}).to_csv(p, index=False)
    with pytest.raises(DataError, match=r"no column 'rating' \(value column, value_col\) — did you mean 'Rating'.*Columns found: 'user', 'item', 'Rating', 'site'"):
        load_long_table(p, **OPTS)


def test_text_where_numbers_belong(tmp_path):
    text = "user,item,rating,site\nu1,1,3,A\nu2,1,four,A\nu3,1,2,B\n"
    with pytest.raises(DataError, match=r"data row 2 \(line 3\): column 'rating' holds 'four' where a number was expected"):
        load_long_table(_csv(tmp_path, text), **OPTS)


def test_empty_value(tmp_path):
    text = "user,item,rating,site\nu1,1,3,A\nu2,1,,A\nu3,1,2,B\n"
    with pytest.raises(DataError, match=r"data row 2 \(line 3\): column 'rating' is empty.*drop_missing"):
        load_long_table(_csv(tmp_path, text), **OPTS)


def test_empty_entity_dropped_on_request(tmp_path):
    text = "user,item,rating,site\nu1,1,3,A\nu2,1,4,\nu3,1,2,B\nu4,2,2,B\nu5,2,2,A\n"
    with pytest.raises(DataError, match="column 'site' is empty"):
        load_long_table(_csv(tmp_path, text), **OPTS)
    ds = load_long_table(_csv(tmp_path, text), **OPTS, drop_missing=True)
    assert ds.n_users == 4 and any("dropped 1 row with" in n for n in ds.notes)


def test_nan_in_dataframe_names_index():
    df = _table()
    df.loc[4, "rating"] = np.nan
    with pytest.raises(DataError, match="row with index 4: column 'rating' is empty"):
        load_long_table(df, **OPTS)


def test_negative_value(tmp_path):
    text = "user,item,rating,site\nu1,1,3,A\nu2,1,-2,A\nu3,1,2,B\n"
    with pytest.raises(DataError, match=r"line 3\): column 'rating' holds a negative value '-2'"):
        load_long_table(_csv(tmp_path, text), **OPTS)


def test_a_value_too_large_to_fit_is_named_not_a_crash(tmp_path):
    text = "user,item,n,site\nu1,1,3,A\nu2,1,1e300,A\nu3,1,2,B\n"
    opts = {**OPTS, "value_col": "n", "value_kind": "counts", "value_max": 5}
    with pytest.raises(DataError, match=r"line 3\): column 'n' holds '1e300', beyond 1e\+15.*\(1 such row\)"):
        load_long_table(_csv(tmp_path, text), **opts)
    load_long_table(_csv(tmp_path, text.replace("1e300", "1e12")), **opts)   # large, but fits: kept, noted


def test_infinite_value(tmp_path):
    text = "user,item,rating,site\nu1,1,3,A\nu2,1,inf,A\nu3,1,2,B\n"
    with pytest.raises(DataError, match="infinite"):
        load_long_table(_csv(tmp_path, text), **OPTS)


def test_value_above_declared_max(tmp_path):
    text = "user,item,rating,site\nu1,1,3,A\nu2,1,10,A\nu3,1,2,B\n"
    with pytest.raises(DataError, match=r"holds '10', above the declared maximum value_max=5.*declare the true maximum"):
        load_long_table(_csv(tmp_path, text), **OPTS, value_max=5)


def test_a_bound_nobody_declared_is_said_to_be_assumed_not_declared(tmp_path):
    text = "user,item,rating,site\nu1,1,3,A\nu2,1,10,A\nu3,1,2,B\n"
    with pytest.raises(DataError) as e:
        load_long_table(_csv(tmp_path, text), **OPTS)
    msg = str(e.value)
    assert "holds '10', above 5, the maximum assumed for ratings without a declared value_max" in msg, msg
    assert "declared maximum" not in msg and e.value.param == "value_max"
    ds = load_long_table(_csv(tmp_path, text), **OPTS, over_max="note")
    assert any("1 value (33.33%) exceeds the public bound 5 assumed for ratings without a declared value_max" in n for n in ds.notes)
    ds = load_long_table(_csv(tmp_path, text), **OPTS, value_max=5, over_max="note")
    assert any("1 value (33.33%) exceeds the declared public bound 5; it is kept" in n for n in ds.notes)


def test_user_in_two_entities(tmp_path):
    text = "user,item,rating,site\nu1,1,3,A\nu2,1,4,A\nu1,2,2,B\nu3,1,2,B\n"
    with pytest.raises(DataError, match=r"user 'u1' appears in two entities: 'A' \(.*line 2\)\) and 'B' \(.*line 4\)\).*disjoint"):
        load_long_table(_csv(tmp_path, text), **OPTS)


def test_only_one_entity():
    with pytest.raises(DataError, match=r"only one entity \('A'\) —"):
        load_long_table(_table(entities=("A",)), **OPTS)


def test_all_zero_values():
    df = _table()
    df["rating"] = 0
    with pytest.raises(DataError, match="every value is 0"):
        load_long_table(df, **OPTS)


@pytest.mark.parametrize(
    "opts, match",
    [
        ({"entity_col": None}, "exactly one of entity_col"),
        ({"entity_from": "site"}, "exactly one of entity_col"),
        ({"entity_transform": "first_digit"}, "applies to entity_from"),
        ({"value_kind": "stars"}, "value_kind must be one of"),
        ({"value_col": None, "value_kind": "ratings"}, "ratings need a value column"),
        ({"value_col": None}, "declared public upper bound"),  # an event log is counts: needs a bound
        ({"value_col": "site"}, "value_col and entity_col both name the column 'site'"),
        ({"value_col": "amount"}, "say what the values of column .amount. are"),
        ({"value_kind": "counts"}, "declared public upper bound"),
        ({"value_max": -1}, "positive number ≤ 1e"),
        ({"value_max": 1e308}, "positive number ≤ 1e"),
        ({"duplicates": "first"}, "duplicates must be"),
    ],
)
def test_bad_options(opts, match):
    with pytest.raises(ConfigError, match=match):
        load_long_table(_table(), **{**OPTS, **opts})


def test_unsupported_source_type():
    with pytest.raises(ConfigError, match="cannot read data from a int"):
        load_long_table(42, **OPTS)  # type: ignore[arg-type]


# ---------------------------------------------------------------- dispatcher
def test_load_data_dispatch_errors(tmp_path):
    with pytest.raises(DataError, match="no such dataset or file.*Accepted: 'sample:synthetic'"):
        load_data(tmp_path / "nope")
    (tmp_path / "stuff.txt").write_text("x")
    with pytest.raises(DataError, match="neither a MovieLens nor an eICU one.*stuff.txt"):
        load_data(tmp_path)
    p = tmp_path / "t.csv"
    _table().to_csv(p, index=False)
    with pytest.raises(ConfigError, match="Columns found: 'user', 'item', 'rating', 'site'"):
        load_data(p)
    with pytest.raises(ConfigError, match="federation do"):
        load_data(p, **OPTS, federation="zip")
    with pytest.raises(DataError, match="unknown sample dataset"):
        load_data("sample:nope")
    assert load_data(p, **OPTS).n_users == 6


def test_load_data_samples_and_synthetic():
    assert load_data("sample:clinic", federation="region").n_entities == 4
    ds = load_data("synthetic", n_users=300, n_items=40, n_entities=3, seed=1)
    assert ds.X.shape == (300, 40) and ds.n_entities == 3


def test_a_sample_error_names_the_sample_not_its_file_on_the_server():
    with pytest.raises(ConfigError) as err:
        load_data("sample:clinic", federation="region", exclude_entities=["nowhere"])
    assert "not an entity of sample:clinic;" in str(err.value) and "sample_data" not in str(err.value)


# ---------------------------------------------------------------- MovieLens
def test_movielens_100k(ml100k_dir):
    ds = load_movielens(ml100k_dir)
    assert ds.X.shape == (943, 1682) and ds.X.nnz == 100_000
    assert ds.n_entities >= 10 and "ZIP other" in ds.entity_names
    assert ds.item_names[0] == "Toy Story (1995)"
    assert ds.value_kind == "ratings" and ds.value_max == 5 and ds.X.max() == 5
    occ = load_movielens(ml100k_dir, federation="occupation")
    assert occ.n_entities >= 15


def test_movielens_1m_format(tmp_path):
    (tmp_path / "ratings.dat").write_text("".join(f"{u}::{i}::{1 + (u + i) % 5}::978300760\n" for u in range(1, 13) for i in (1, 2)))
    (tmp_path / "users.dat").write_text("".join(f"{u}::{'MF'[u % 2]}::25::{u % 3}::{'1' if u <= 6 else '9'}2345\n" for u in range(1, 13)))
    (tmp_path / "movies.dat").write_bytes("1::Toy Story (1995)::Animation\n2::Amélie (2001)::Comedy\n".encode("latin-1"))
    ds = load_movielens(tmp_path)
    # the declared federation: every ZIP digit and "other" (public), users only in ZIP 1 and ZIP 9
    assert ds.X.shape == (12, 2) and ds.entity_names == [f"ZIP {d}" for d in range(10)] + ["ZIP other"]
    assert {r["entity"]: r["users"] for r in ds.summary() if r["users"]} == {"ZIP 1": 6, "ZIP 9": 6}
    assert list(ds.item_names) == ["Toy Story (1995)", "Amélie (2001)"]
    g = load_movielens(tmp_path, federation="gender")
    assert g.entity_names == ["F", "M"]


def test_movielens_errors(tmp_path):
    with pytest.raises(DataError, match="not a MovieLens 100K or 1M directory.*Found: x.txt"):
        (tmp_path / "x.txt").write_text("x")
        load_movielens(tmp_path)
    (tmp_path / "u.data").write_text("1\t1\t5\t0\n2\t1\t4\t0\n")
    with pytest.raises(DataError, match="users file missing"):
        load_movielens(tmp_path)
    (tmp_path / "u.user").write_text("1|24|M|technician|85711\n")
    (tmp_path / "u.item").write_text("1|Toy Story (1995)|\n")
    with pytest.raises(DataError, match=r"line 2\): user '2' is not in the users file"):
        load_movielens(tmp_path)
    with pytest.raises(ConfigError, match="federation must be"):
        load_movielens(tmp_path, federation="city")  # type: ignore[arg-type]


# ---------------------------------------------------------------- eICU
def test_eicu_demo_by_hospital(eicu_dir):
    ds = load_eicu(eicu_dir)
    assert ds.value_kind == "counts" and ds.value_max == 20
    assert ds.n_entities > 50 and all(e.startswith("hospital ") for e in ds.entity_names)
    assert min(s["users"] for s in ds.summary()) < 10  # small hospitals take part
    names = set(ds.item_names)
    assert {"acetaminophen", "potassium chloride", "sodium chloride", "furosemide"} <= names
    assert not any("325 mg" in n or n.isupper() for n in names)
    assert 100 < ds.n_items < 400  # ~1400 raw drug names collapse to a readable catalogue
    assert any("exceed the declared public bound" in n for n in ds.notes)  # reported, not clipped
    assert ds.X.max() > ds.value_max


def test_eicu_demo_by_region(eicu_dir):
    ds = load_eicu(eicu_dir, entity="region")
    assert set(ds.entity_names) == {"Midwest", "Northeast", "South", "West", "Unknown region"}
    assert load_data(eicu_dir, federation="region", events="medication").n_entities == 5


def test_drug_name_normalisation():
    cases = {
        "ACETAMINOPHEN 325 MG PO TABS": "acetaminophen",
        "acetaminophen": "acetaminophen",
        "TYLENOL": "acetaminophen",
        "1000 ML FLEX CONT : SODIUM CHLORIDE 0.9 % IV SOLN": "sodium chloride",
        "SODIUM CHLORIDE 0.9 % IV : 1000 ML": "sodium chloride",
        "0.9%NaCl 1,000 mL": "sodium chloride",
        "POTASSIUM CHLORIDE CRYS ER 20 MEQ PO TBCR": "potassium chloride",
        "famotidine (PEPCID) tab 20 mg": "famotidine",
        "metoPROLOL tartrate": "metoprolol",
        "MAGNESIUM SULFATE 2 GM/50 ML IVPB": "magnesium sulfate",
        "PRMX NOREPInephrine 4 mg/250 mL NS Drip": "norepinephrine",
        "albuterol/ipratropium": "ipratropium-albuterol",
        "calcium gluconate": "calcium gluconate",
    }
    for raw, want in cases.items():
        assert normalize_drug_name(raw) == want, raw
    s = pd.Series(["TYLENOL", None, "acetaminophen"])
    assert normalize_drug_names(s).tolist()[::2] == ["acetaminophen", "acetaminophen"]


def _eicu_dir(tmp_path: Path, tables: dict[str, str]) -> Path:
    for name, text in tables.items():
        (tmp_path / f"{name}.csv").write_text(text)
    return tmp_path


PATIENT = "patientunitstayid,hospitalid\n" + "".join(f"{i},{1 if i <= 4 else 2}\n" for i in range(1, 9))
HOSPITAL = "hospitalid,region\n1,South\n2,\n"


def test_eicu_other_event_tables(tmp_path):
    lab = "labid,patientunitstayid,labname,labresult\n" + "".join(
        f"{k},{i},{'potassium' if k % 2 else 'BUN'},4\n" for k, i in enumerate(list(range(1, 9)) * 3)
    )
    diag = "diagnosisid,patientunitstayid,diagnosisstring\n" + "".join(
        f"{i},{i},cardiovascular|shock|septic shock\n" for i in range(1, 9)
    )
    d = _eicu_dir(tmp_path, {"patient": PATIENT, "hospital": HOSPITAL, "lab": lab, "diagnosis": diag})
    ds = load_eicu(d, "lab")
    assert sorted(ds.item_names) == ["BUN", "potassium"] and ds.entity_names == ["hospital 1", "hospital 2"]
    assert ds.value_max == 50 and ds.X.sum() == 24
    both = load_eicu(d, ["lab", "diagnosis"], entity="region")
    assert "diagnosis: cardiovascular|shock|septic shock" in set(both.item_names)
    assert both.entity_names == ["South", "Unknown region"]


def test_a_declared_list_of_hierarchical_eicu_names_gives_the_public_hierarchy_as_features(tmp_path):
    """The `|` levels of a declared list's names are public item features; the data's other names
    (not declared, not public) get none."""
    diag = "diagnosisid,patientunitstayid,diagnosisstring\n" + "".join(
        f"{i},{i},{'cardiovascular|shock|septic shock' if i % 2 else 'neurologic|seizures'}\n" for i in range(1, 9))
    d = _eicu_dir(tmp_path, {"patient": PATIENT, "hospital": HOSPITAL, "diagnosis": diag})
    ds = load_eicu(d, "diagnosis", items=["cardiovascular|shock|septic shock", "cardiovascular|shock|cardiogenic"])
    assert list(ds.item_names) == ["cardiovascular|shock|septic shock", "cardiovascular|shock|cardiogenic",
                                   "neurologic|seizures"]
    names = list(ds.item_feature_names)
    assert "path: cardiovascular" in names and "path: cardiovascular|shock" in names
    assert not any("neurologic" in n for n in names)
    col = names.index("path: cardiovascular|shock")
    assert ds.item_features[:, col].tolist() == [1, 1, 0]


def test_eicu_errors(tmp_path):
    with pytest.raises(DataError, match="eICU directory not found"):
        load_eicu(tmp_path / "nope")
    d = _eicu_dir(tmp_path, {"patient": PATIENT})
    with pytest.raises(DataError, match=r"has no medication.csv or medication.csv.gz .*Found: patient.csv"):
        load_eicu(d)
    with pytest.raises(DataError, match="has no vitals.csv"):
        load_eicu(d, "vitals")
    (tmp_path / "medication.csv").write_text("patientunitstayid,drug\n1,x\n")
    with pytest.raises(DataError, match=r"no column 'drugname'.*Columns found: 'patientunitstayid', 'drug'"):
        load_eicu(d)
    (tmp_path / "medication.csv").write_text("patientunitstayid,drugname\n1,ASPIRIN 81 MG\n2,ASPIRIN\n")
    with pytest.raises(DataError, match="hospital.csv"):
        load_eicu(d, entity="region")
    (tmp_path / "patient.csv").write_text(PATIENT + "1,2\n")
    with pytest.raises(DataError, match="unit stay 1 is listed twice"):
        load_eicu(d)


def test_from_parts_keeps_a_matrix_only_when_given_away_and_in_entity_order():
    """The loader gives its own matrix, built in entity order, to the dataset uncopied (which
    bounds the peak memory); a caller's matrix is never aliased, and rows out of entity order are reordered."""
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    X = sp.csr_matrix(np.array([[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]]))
    ds = FederatedDataset.from_parts(X, np.array(["a", "a", "b"]), value_kind="implicit")
    assert not np.shares_memory(ds.X.data, X.data)
    given = FederatedDataset.from_parts(X, np.array(["a", "a", "b"]), value_kind="implicit", copy=False)
    assert np.shares_memory(given.X.data, X.data)
    moved = FederatedDataset.from_parts(X, np.array(["b", "a", "a"]), value_kind="implicit", copy=False)
    assert not np.shares_memory(moved.X.data, X.data)
    np.testing.assert_array_equal(moved.X.toarray(), X.toarray()[[1, 2, 0]])
    assert list(moved.entity_of_user) == [0, 0, 1]


def test_a_long_table_is_built_in_entity_order_with_exact_ids(tmp_path):
    """Users by entity, natural order within, ids exact (01 ≠ 1), the entity of each user right."""
    from dpfed_core.data.long_table import load_long_table

    p = tmp_path / "t.csv"
    p.write_text("user,item,entity\n10,x,B\n2,y,A\n01,x,B\n1,y,A\n2,x,A\nNA,y,B\n")
    ds = load_long_table(p, user_col="user", item_col="item", entity_col="entity", value_kind="implicit")
    assert ds.entity_names == ["A", "B"]
    assert list(ds.user_ids) == ["1", "2", "01", "10", "NA"]
    assert list(ds.entity_of_user) == [0, 0, 1, 1, 1]
    dense = ds.X.toarray()
    j = {v: k for k, v in enumerate(ds.item_ids)}
    assert dense[1, j["x"]] == 1 and dense[1, j["y"]] == 1 and dense[4, j["y"]] == 1 and dense.sum() == 6


# ---------------------------------------------------------------- the dataset itself
def _ds(**kw):
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    X = sp.csr_matrix(np.array([[4.0, 0, 3, 0], [0, 2, 3, 0], [2, 0, 0, 0], [0, 0, 0, 0], [1, 0, 2, 0]]))
    return FederatedDataset.from_parts(X, np.array(["A", "A", "B", "B", "B"]), **kw)


def test_declared_bounds_default_to_the_scale_of_the_value_kind_and_counts_need_one():
    assert _ds(value_kind="ratings").value_max == 5.0
    assert _ds(value_kind="implicit").value_max == 1.0
    with pytest.raises(ConfigError, match="count data needs a declared public upper bound"):
        _ds(value_kind="counts")


def test_a_table_of_events_without_a_bound_is_told_both_ways_to_read_it():
    """Without a value column each row is one event: the refusal names the bound to declare and, as the
    other way, reading each user–item pair as one 1 — in the CLI's flags and the dashboard's controls."""
    from dpfed_core.cli.main import render_error
    from dpfed_core.ui.inputs import friendly_message

    t = pd.DataFrame({"u": ["a", "a", "b"], "i": ["x", "y", "y"], "h": ["H", "H", "K"]})
    with pytest.raises(ConfigError) as exc:
        load_long_table(t, user_col="u", item_col="i", entity_col="h", entities_from_data=True)
    assert exc.value.param == "value_max"
    assert render_error(exc.value).endswith("pass --value-max (e.g. the most events one user can plausibly have "
                                            "for one item), or read each user–item pair as one 1 (--value-kind "
                                            "implicit). It must not be read off the data.")
    said = friendly_message(exc.value).replace("\\", "")
    assert "“Declared maximum of one value (public bound)” on the Data page" in said
    assert "(“Values are” set to implicit)" in said  # the same page, named once
    t["n"] = [1, 2, 3]
    with pytest.raises(ConfigError) as exc:  # counted values: implicit would throw their counts away
        load_long_table(t, user_col="u", item_col="i", value_col="n", entity_col="h", entities_from_data=True)
    assert "implicit" not in str(exc.value)


def test_implicit_values_are_bounded_by_one_and_ratings_are_never_added_up():
    """Implicit values are read as 0/1, so a larger declared bound would only scale the noise up; two
    ratings of one item added up would leave their scale (5 + 5 = 10) with no check after the merge."""
    t = pd.DataFrame({"u": ["a", "a", "b", "c"], "i": ["x", "x", "y", "y"], "v": [5, 4, 3, 2], "h": ["H", "H", "K", "K"]})
    cols = dict(user_col="u", item_col="i", value_col="v", entity_col="h", entities_from_data=True)
    ds = load_long_table(t, value_kind="implicit", value_max=5, **cols)
    assert ds.value_max == 1.0 and ds.X.max() == 1.0
    assert "implicit values are read as 0/1, so their public bound is 1, not the declared 5" in ds.notes
    assert not [n for n in load_long_table(t, value_kind="implicit", **cols).notes if "public bound is 1" in n]
    with pytest.raises(ConfigError, match="duplicates='sum' adds repeated ratings up, beyond their scale") as exc:
        load_long_table(t, value_kind="ratings", duplicates="sum", **cols)
    assert exc.value.param == "duplicates"
    assert load_long_table(t, value_kind="counts", value_max=10, **cols).X.max() == 9.0  # counts do add up


def test_an_item_lists_first_line_naming_another_column_of_the_table_is_said_to_be_a_header():
    t = pd.DataFrame({"user": ["a", "a", "b"], "item": ["x", "y", "y"], "rating": [5, 4, 3], "h": ["H", "H", "K"]})
    cols = dict(user_col="user", item_col="item", value_col="rating", entity_col="h", entities_from_data=True)
    (note,) = [n for n in load_long_table(t, items=["rating", "x", "y"], **cols).notes if "declared items" in n]
    assert "its first line 'rating' names a column of the table, not an item" in note
    (note,) = [n for n in load_long_table(t, items=["x", "y", "w"], **cols).notes if "declared items" in n]
    assert "first line" not in note


def test_a_label_outside_the_declared_entity_list_is_refused_by_name():
    """Even a label that sorts between two declared entities is not one of them."""
    with pytest.raises(DataError, match=r"entity 'B' of a user is not in the declared entity list"):
        _ds(value_kind="implicit", entities=["A", "C"])
    ds = _ds(value_kind="implicit", entities=["C", "B", "A"])
    assert ds.entity_names == ["A", "B", "C"] and [r["users"] for r in ds.summary()] == [2, 3, 0]


def test_the_summary_counts_each_entitys_users_items_used_interactions_and_density():
    ds = _ds(value_kind="counts", value_max=5)
    assert ds.summary() == [
        {"entity": "A", "users": 2, "items_used": 3, "interactions": 4, "density": 4 / 8},
        {"entity": "B", "users": 3, "items_used": 2, "interactions": 3, "density": 3 / 12},
    ]


def test_merged_items_sum_a_users_values_and_clip_them_to_the_declared_bound():
    import scipy.sparse as sp

    ds = _ds(value_kind="counts", value_max=5)
    keys = sp.csr_matrix(np.array([[1, 0], [1, 0], [1, 0], [0, 1]], float))  # items 0–2 → key 0
    m = ds.merge_items(keys, np.array(["k0", "k1"]), item_source="declared")
    assert m.X.toarray()[:, 0].tolist() == [5.0, 5.0, 2.0, 0.0, 3.0]  # 4 + 3 clipped to 5
    assert m.item_source == "declared" and list(m.item_names) == ["k0", "k1"]


def test_selected_items_take_the_item_source_they_are_given():
    ds = _ds(value_kind="implicit")
    assert ds.item_source == "data"
    sel = ds.select_items(np.array([2, 0]), item_source="declared")
    assert sel.item_source == "declared" and list(sel.item_ids) == ["2", "0"]
    assert ds.select_items(np.array([1])).item_source == "data"


def _ml100k(tmp_path: Path, users: str, items: str = "1|Toy Story (1995)|01-Jan-1995||http://x|0|0|0|1|1\n"
            "2|Heat (1995)|01-Jan-1995||http://y|0|1|0|0|0\n") -> Path:
    """A MovieLens 100K directory: every user rates movies 1 and 2; five genres."""
    ids = [ln.split("|")[0] for ln in users.splitlines()]
    (tmp_path / "u.data").write_text("".join(f"{u}\t{i}\t{1 + (int(u) + i) % 5}\t0\n" for u in ids for i in (1, 2)))
    (tmp_path / "u.user").write_text(users)
    (tmp_path / "u.item").write_text(items)
    (tmp_path / "u.genre").write_text("unknown|0\nAction|1\nAdventure|2\nAnimation|3\nChildren's|4\n")
    return tmp_path


def test_movielens_100k_ages_fall_in_the_1m_bands_each_band_from_its_lower_age(tmp_path):
    users = "".join(f"{u}|{age}|M|writer|12345\n" for u, age in enumerate((17, 18, 24, 25, 49, 50, 56), start=1))
    ds = load_movielens(_ml100k(tmp_path, users), federation="age")
    got = {r["entity"]: r["users"] for r in ds.summary()}
    assert got == {"under 18": 1, "18-24": 2, "25-34": 1, "35-44": 0, "45-49": 1, "50-55": 1, "56+": 1}


def test_movielens_files_that_repeat_a_user_or_a_movie_are_refused(tmp_path):
    with pytest.raises(DataError, match="lists user 2 twice"):
        load_movielens(_ml100k(tmp_path, "1|30|M|writer|1\n2|30|F|writer|2\n2|40|F|writer|3\n"))
    items = "1|Toy Story (1995)|01-Jan-1995||x|0|0|0|1|1\n1|Heat (1995)|01-Jan-1995||y|0|1|0|0|0\n"
    with pytest.raises(DataError, match="repeated movie id '1'"):
        load_movielens(_ml100k(tmp_path, "1|30|M|writer|1\n", items))


def test_a_movie_without_a_title_is_named_by_its_id_and_keeps_its_genres(tmp_path):
    items = "1||01-Jan-1995||x|0|0|0|1|1\n2|Heat (1995)|01-Jan-1995||y|0|1|0|0|0\n"
    ds = load_movielens(_ml100k(tmp_path, "1|30|M|writer|1\n", items))
    assert list(ds.item_names) == ["1", "Heat (1995)"]
    F = dict(zip(ds.item_feature_names, ds.item_features[1]))
    assert F["genre: Action"] == 1 and F["genre: Children's"] == 0 and F["genre: unknown"] == 0
    F0 = dict(zip(ds.item_feature_names, ds.item_features[0]))
    assert F0["genre: Animation"] == 1 and F0["genre: Children's"] == 1 and F0["release year"] == 1995

def test_movielens_100k_ages_at_every_band_edge_fall_in_the_band_that_starts_there(tmp_path):
    ages = (17, 18, 24, 25, 34, 35, 44, 45, 49, 50, 55, 56, 73)
    users = "".join(f"{u}|{age}|M|writer|12345\n" for u, age in enumerate(ages, start=1))
    ds = load_movielens(_ml100k(tmp_path, users), federation="age")
    got = {r["entity"]: r["users"] for r in ds.summary()}
    assert got == {"under 18": 1, "18-24": 2, "25-34": 2, "35-44": 2, "45-49": 2, "50-55": 2, "56+": 2}


def test_a_zip_code_federates_by_its_first_digit_after_spaces_and_any_other_start_is_other(tmp_path):
    users = ("1|30|M|writer| 12345\n2|30|F|writer|02139\n3|30|M|writer|T8H1N\n4|30|F|writer|\n"
             "5|30|M|writer|98101\n")
    ds = load_movielens(_ml100k(tmp_path, users))
    assert ds.n_users == 5
    got = {r["entity"]: r["users"] for r in ds.summary() if r["users"]}
    assert got == {"ZIP 0": 1, "ZIP 1": 1, "ZIP 9": 1, "ZIP other": 2}


def test_a_rating_repeated_in_the_ratings_file_counts_as_its_last_line(tmp_path):
    d = _ml100k(tmp_path, "1|30|M|writer|12345\n2|30|F|writer|12345\n")
    (d / "u.data").write_text("1\t1\t2\t0\n1\t2\t4\t0\n2\t1\t3\t0\n1\t1\t5\t0\n")
    ds = load_movielens(d)
    u, i = list(ds.user_ids).index("1"), list(ds.item_ids).index("1")
    assert ds.X[u, i] == 5 and ds.X.nnz == 3


def test_a_movielens_100k_directory_without_u_genre_numbers_its_genre_columns(tmp_path):
    d = _ml100k(tmp_path, "1|30|M|writer|12345\n")
    (d / "u.genre").unlink()
    ds = load_movielens(d)
    genres = [n for n in ds.item_feature_names if n.startswith("genre")]
    assert genres == [f"genre: genre {j}" for j in range(5)]
    cols = [ds.item_feature_names.index(g) for g in genres]
    assert ds.item_features[:, cols].tolist() == [[0, 0, 0, 1, 1], [0, 1, 0, 0, 0]]


def test_movielens_1m_occupations_are_the_readmes_codes_from_zero_and_movies_carry_genres_and_year(tmp_path):
    codes = (0, 4, 12, 20, 20)
    (tmp_path / "ratings.dat").write_text("".join(f"{u}::{i}::{1 + (u + i) % 5}::978300760\n"
                                                  for u in range(1, 6) for i in (1, 2, 3)))
    (tmp_path / "users.dat").write_text("".join(f"{u}::F::{age}::{c}::12345\n"
                                                for u, (c, age) in enumerate(zip(codes, (1, 18, 35, 50, 56)), start=1)))
    (tmp_path / "movies.dat").write_text("1::Toy Story (1995)::Animation|Children's\n2::Heat (1995)::Action|Crime\n"
                                         "3::Nosferatu (1922)::Horror\n")
    ds = load_movielens(tmp_path, federation="occupation")
    assert len(ds.entity_names) == 21 and ds.n_users == 5
    got = {r["entity"]: r["users"] for r in ds.summary() if r["users"]}
    assert got == {"other": 1, "college/grad student": 1, "programmer": 1, "writer": 2}
    ages = load_movielens(tmp_path, federation="age")
    assert {r["entity"]: r["users"] for r in ages.summary() if r["users"]} == {
        "under 18": 1, "18-24": 1, "35-44": 1, "50-55": 1, "56+": 1}
    assert ds.item_feature_names == ["genre: Action", "genre: Animation", "genre: Children's", "genre: Crime",
                                     "genre: Horror", "release year", "decade: 1920s", "decade: 1990s"]
    assert ds.item_features.tolist() == [[0, 1, 1, 0, 0, 1995, 0, 1], [1, 0, 0, 1, 0, 1995, 0, 1],
                                         [0, 0, 0, 0, 1, 1922, 1, 0]]


def test_a_features_file_beside_movielens_own_features_is_the_declared_one(tmp_path):
    """MovieLens brings its genres; a features file given beside them is the declared source: it must
    match a movie, and the notes tell the two sources apart."""
    d = _ml100k(tmp_path, "1|30|M|writer|12345\n")
    f = tmp_path / "budget.csv"
    f.write_text("item,budget\n2,7\n99,1\n")
    ds = load_movielens(d, item_features=str(f))
    assert ds.item_feature_names[-1] == "budget" and ds.item_features[:, -1].tolist() == [0, 7]
    notes = [n for n in ds.notes if n.startswith("public input")]
    assert len(notes) == 2
    assert "from the item metadata the loader knows (2 of 2 items matched)" in notes[0]
    assert "from the declared item features file (1 of 2 items matched" in notes[1]
    f.write_text("item,budget\n98,7\n99,1\n")
    with pytest.raises(DataError, match="no item of the item features file is an item of the data"):
        load_movielens(d, item_features=str(f))



def test_eicu_tables_combined_take_the_largest_declared_bound(tmp_path):
    lab = "labid,patientunitstayid,labname\n1,1,BUN\n2,2,BUN\n"
    diag = "diagnosisid,patientunitstayid,diagnosisstring\n1,1,renal|aki\n2,3,renal|aki\n"
    vitals = "vitalid,patientunitstayid,vitalname\n1,1,heart rate\n2,5,heart rate\n"
    d = _eicu_dir(tmp_path, {"patient": PATIENT, "hospital": HOSPITAL, "lab": lab, "diagnosis": diag,
                             "vitals": vitals})
    assert load_eicu(d, ["diagnosis", "lab"]).value_max == 50  # lab 50, diagnosis 10
    other = load_eicu(d, ["diagnosis", "vitals"])
    assert other.value_max == 20 and any("vitals have no declared bound" in n for n in other.notes)


def test_an_eicu_medication_row_without_a_name_takes_the_name_most_often_recorded_with_its_code(tmp_path):
    med = ("medicationid,patientunitstayid,drugname,drughiclseqno,drugordercancelled\n"
           "1,1,HEPARIN 5000 UNIT,100,No\n2,2,ASPIRIN 81 MG,100,No\n3,3,aspirin,100,No\n"
           "4,4,,100,No\n5,5,,200,No\n6,6,ZINC,300,Yes\n")
    ds = load_eicu(_eicu_dir(tmp_path, {"patient": PATIENT, "hospital": HOSPITAL, "medication": med}))
    j = {name: k for k, name in enumerate(ds.item_names)}
    assert set(j) == {"aspirin", "heparin"}
    row = list(ds.user_ids).index("4")
    assert ds.X[row, j["aspirin"]] == 1 and ds.X[row].sum() == 1
    assert any("named 1 medication rows without a drug name from their HICL code" in n for n in ds.notes)
    assert any("dropped 1 cancelled medication orders" in n for n in ds.notes)


def test_a_declared_eicu_hospital_list_may_give_bare_hospital_ids(tmp_path):
    med = "patientunitstayid,drugname\n1,ASPIRIN\n5,HEPARIN\n"
    d = _eicu_dir(tmp_path, {"patient": PATIENT, "medication": med})
    ds = load_eicu(d, entities=["1", "hospital 2", "3"])
    assert ds.entity_names == ["hospital 1", "hospital 2", "hospital 3"]
    assert [r["users"] for r in ds.summary()] == [1, 1, 0]


def test_a_nul_byte_past_the_first_64_kib_is_refused_with_its_offset():
    from dpfed_core.data.tables import read_table

    head = b"user,item,site\n" + b"u1,i1,A\n" * 9000  # 72,015 bytes: past the head the format is told from
    data = head + b"u2,i\x002,B\n"
    for blob, name in ((data, "t.csv"), (gzip.compress(data), "t.csv.gz")):
        with pytest.raises(DataError, match=rf"contains a NUL byte \(byte {len(head) + 4:,} of its text\)"):
            read_table(blob, filename=name)


def test_a_file_object_is_read_and_left_where_it_was(tmp_path):
    from dpfed_core.data.tables import read_table

    path = tmp_path / "t.csv"
    path.write_bytes(b"user,item,site\nu1,i1,A\nu2,i2,B\n")
    with open(path, "rb") as stream:  # no getvalue(): read, then put back
        df, label, _ = read_table(stream)
        assert len(df) == 2 and stream.tell() == 0 and label == str(path)


def test_load_data_reads_a_movielens_1m_directory_and_a_samples_or_movielens_entity_list_is_public(tmp_path):
    """The dashboard asks every source for entities_from_data; a sample's and MovieLens' entity lists are
    public metadata, so the option is dropped for them, never refused. A release already in the cache is read
    from there (cache_dir is the fetch's option, not the directory's)."""
    d = tmp_path / "ml-1m"
    d.mkdir()
    (d / "ratings.dat").write_text("".join(f"{u}::{i}::{1 + (u + i) % 5}::978300760\n" for u in range(1, 13)
                                           for i in (1, 2)))
    (d / "users.dat").write_text("".join(f"{u}::{'MF'[u % 2]}::25::{u % 3}::{'1' if u <= 6 else '9'}2345\n"
                                         for u in range(1, 13)))
    (d / "movies.dat").write_bytes("1::Toy Story (1995)::Animation\n2::Amélie (2001)::Comedy\n".encode("latin-1"))
    ds = load_data(d, federation="gender", entities_from_data=True)
    assert ds.X.shape == (12, 2) and ds.entity_names == ["F", "M"]
    cached = load_data("movielens:1m", cache_dir=tmp_path, federation="gender", entities_from_data=True)
    assert (cached.X != ds.X).nnz == 0 and cached.entity_names == ["F", "M"]
    assert load_data(" Sample:Clinic ", federation="region", entities_from_data=True).n_entities == 4


def test_synthetic_data_is_seeded_by_default_the_paper_preset_applies_and_a_wrong_option_is_named():
    a = load_data("synthetic", n_users=200, n_items=30, n_entities=3)
    b = load_data("synthetic", n_users=200, n_items=30, n_entities=3)
    assert (a.X != b.X).nnz == 0 and a.X.nnz > 0
    paper = load_data("synthetic:paper", n_users=300, n_items=120, seed=1)  # the paper's ten equal entities
    assert paper.n_entities == 10 and np.bincount(paper.entity_of_user).tolist() == [30] * 10
    with pytest.raises(ConfigError, match="synthetic data: .*n_userz"):
        load_data("synthetic", n_userz=100)


def test_a_removed_option_says_why_it_went_for_every_source(tmp_path):
    for spec in ("sample:clinic", "synthetic"):
        with pytest.raises(ConfigError, match="min_entity_users is no longer an option: entities are the declared "
                                              "federation whatever their size") as err:
            load_data(spec, min_entity_users=5)
        assert err.value.param == "min_entity_users"


def test_an_eicu_unit_stay_without_a_hospital_is_refused_naming_its_row(tmp_path):
    d = _eicu_dir(tmp_path, {"patient": PATIENT + "9,\n", "medication": "patientunitstayid,drugname\n1,ASPIRIN\n"})
    with pytest.raises(DataError, match="patientunitstayid or hospitalid is empty"):
        load_eicu(d)


def test_eicu_stays_in_a_hospital_whose_region_is_blank_are_counted_in_the_unknown_region_note(tmp_path):
    """A region of spaces is no region, like an empty one: its stays are said to be in 'Unknown region'."""
    med = "patientunitstayid,drugname\n" + "".join(f"{i},ASPIRIN\n" for i in range(1, 9))
    blank = "hospitalid,region\n1,South\n2,\"  \"\n"
    ds = load_eicu(_eicu_dir(tmp_path, {"patient": PATIENT, "hospital": blank, "medication": med}),
                   entity="region")
    assert ds.entity_names == ["South", "Unknown region"]
    assert [r["users"] for r in ds.summary()] == [4, 4]
    assert any(n.startswith("4 unit stays are in hospitals without a region") for n in ds.notes)


@pytest.mark.parametrize("region", ["nan", "NA", "None"])
def test_an_eicu_region_is_the_same_entity_in_the_entity_list_and_in_the_stays(tmp_path, region):
    """A region written as text that looks missing is named alike by the declared entity list and by the
    stays' lookup: its hospital's users are in that one entity, never split off to 'Unknown region' beside
    an empty entity of the same name."""
    med = "patientunitstayid,drugname\n" + "".join(f"{i},ASPIRIN\n" for i in range(1, 9))
    ds = load_eicu(_eicu_dir(tmp_path, {"patient": PATIENT, "hospital": f"hospitalid,region\n1,South\n2,{region}\n",
                                        "medication": med}), entity="region")
    users = {r["entity"]: r["users"] for r in ds.summary()}
    assert sum(users.values()) == 8 and all(n > 0 for n in users.values()), users
    assert users["South"] == 4


def test_an_eicu_table_named_in_any_case_keeps_its_declared_bound(tmp_path):
    """``infusionDrug`` as eICU spells it has the declared bound of ``infusiondrug``, not the default."""
    inf = "infusiondrugid,patientunitstayid,drugname\n1,1,Propofol (mcg/kg/min)\n2,5,Heparin (units/hr)\n"
    ds = load_eicu(_eicu_dir(tmp_path, {"patient": PATIENT, "infusionDrug": inf}), "infusionDrug")
    assert ds.value_max == 50 and not any("no declared bound" in n for n in ds.notes)


def test_an_undeclared_eicu_table_beside_a_declared_one_takes_the_larger_bound(tmp_path):
    lab = "labid,patientunitstayid,labname\n1,1,BUN\n2,2,BUN\n"
    vitals = "vitalid,patientunitstayid,vitalname\n1,1,heart rate\n2,5,heart rate\n"
    ds = load_eicu(_eicu_dir(tmp_path, {"patient": PATIENT, "lab": lab, "vitals": vitals}), ["lab", "vitals"])
    assert ds.value_max == 50  # lab's 50 over the default 20 of vitals
    assert any("vitals have no declared bound" in n for n in ds.notes)


def test_eicu_event_names_differing_in_inner_spaces_are_one_item(tmp_path):
    lab = "labid,patientunitstayid,labname\n1,1,blood  urea\n2,2,blood urea\n3,5, blood urea \n"
    ds = load_eicu(_eicu_dir(tmp_path, {"patient": PATIENT, "lab": lab}), "lab")
    assert list(ds.item_names) == ["blood urea"] and ds.X.sum() == 3


def test_a_formulary_of_combined_eicu_tables_names_items_with_their_table_unchanged(tmp_path):
    """With several tables a declared list names the prefixed items; its names are not read as drug names
    (normalised, "medication: aspirin" would become "medication") and give no drug-token features."""
    med = "patientunitstayid,drugname\n1,ASPIRIN\n5,HEPARIN\n"
    lab = "labid,patientunitstayid,labname\n1,1,BUN\n2,2,BUN\n"
    d = _eicu_dir(tmp_path, {"patient": PATIENT, "medication": med, "lab": lab})
    ds = load_eicu(d, ["medication", "lab"], items=["medication: aspirin", "lab: BUN"])
    assert list(ds.item_names)[:2] == ["medication: aspirin", "lab: BUN"]
    assert set(ds.item_names) == {"medication: aspirin", "lab: BUN", "medication: heparin"}
    assert ds.item_features is None or ds.item_features.shape[1] == 0


def test_a_drug_name_listing_its_brand_synonyms_is_the_generic_of_the_first():
    assert normalize_drug_name("PROVENTIL,VENTOLIN") == "albuterol"
    assert normalize_drug_name("NORMODYNE;TRANDATE") == "labetalol"


def test_an_eicu_table_is_found_whatever_the_case_of_its_file_name(tmp_path):
    inf = "infusiondrugid,patientunitstayid,drugname\n1,1,Propofol (mcg/kg/min)\n2,5,Heparin (units/hr)\n"
    d = _eicu_dir(tmp_path, {"patient": PATIENT, "infusionDrug": inf})
    assert sorted(load_eicu(d, "infusiondrug").item_names) == ["heparin", "propofol"]


def test_an_eicu_table_with_two_columns_that_may_name_its_event_asks_which(tmp_path):
    vitals = "vitalid,patientunitstayid,vitalname,unitname\n1,1,heart rate,icu\n2,5,heart rate,icu\n"
    d = _eicu_dir(tmp_path, {"patient": PATIENT, "vitals": vitals})
    with pytest.raises(ConfigError, match=r"cannot tell which column names the event \(candidates: vitalname, "
                                          r"unitname\).*events=vitals:<column>"):
        load_eicu(d, "vitals")
    assert load_eicu(d, "vitals:unitname").item_names == ["icu"]


def test_an_eicu_event_table_named_with_a_path_is_refused_before_any_file_is_read(tmp_path):
    """A table name is a file stem inside the eICU folder: ``../x`` would read a file outside it."""
    (tmp_path / "eicu").mkdir()
    d = _eicu_dir(tmp_path / "eicu", {"patient": PATIENT})
    (tmp_path / "outside.csv").write_text("patientunitstayid,drugname\n1,ASPIRIN\n")
    for bad in ("../outside", "lab/x", "lab x"):
        with pytest.raises(ConfigError, match="is not a table name"):
            load_eicu(d, bad)


def test_an_eicu_event_list_naming_no_table_is_refused_by_its_flag(tmp_path):
    d = _eicu_dir(tmp_path, {"patient": PATIENT, "medication": "patientunitstayid,drugname\n1,ASPIRIN\n"})
    for empty in (",", " , ", []):
        with pytest.raises(ConfigError, match="give at least one eICU event table") as info:
            load_eicu(d, empty)
        assert info.value.param == "events"


def test_without_a_hospital_table_the_eicu_hospitals_are_read_from_the_data_and_said_so(tmp_path):
    med = "patientunitstayid,drugname\n1,ASPIRIN\n5,HEPARIN\n"
    ds = load_eicu(_eicu_dir(tmp_path, {"patient": PATIENT, "medication": med}))
    assert ds.entity_names == ["hospital 1", "hospital 2"]
    assert any(n.startswith("no hospital table: the entity list is the hospitals found in the patient table")
               for n in ds.notes)


def test_a_hospital_table_row_without_an_id_declares_no_hospital(tmp_path):
    med = "patientunitstayid,drugname\n1,ASPIRIN\n5,HEPARIN\n"
    hospital = "hospitalid,region\n1,South\n\" \",West\n2,\n"  # a blank id, not a row left out whole
    ds = load_eicu(_eicu_dir(tmp_path, {"patient": PATIENT, "hospital": hospital, "medication": med}))
    assert ds.entity_names == ["hospital 1", "hospital 2"]


def test_eicu_cancelled_orders_are_kept_when_asked_and_hospital_is_hospitalid(tmp_path):
    med = ("medicationid,patientunitstayid,drugname,drugordercancelled\n"
           "1,1,ASPIRIN,No\n2,2,HEPARIN,Yes\n3,5,ASPIRIN,No\n")
    d = _eicu_dir(tmp_path, {"patient": PATIENT, "medication": med})
    assert list(load_eicu(d).item_names) == ["aspirin"]
    kept = load_eicu(d, drop_cancelled=False)
    assert sorted(kept.item_names) == ["aspirin", "heparin"] and not any("cancelled" in n for n in kept.notes)
    assert list(load_eicu(d, entity="hospital").entity_names) == ["hospital 1", "hospital 2"]


def test_a_dose_written_from_its_decimal_point_ends_the_drug_name():
    assert normalize_drug_name("NITROGLYCERIN .4 MG SL TABS") == "nitroglycerin"


def test_what_the_eicu_formulary_reader_did_is_in_the_datasets_notes(tmp_path):
    med = "patientunitstayid,drugname\n1,ASPIRIN\n5,HEPARIN\n"
    (tmp_path / "formulary.txt").write_text("drugname\nASPIRIN 81 MG\nHEPARIN\n")
    d = _eicu_dir(tmp_path, {"patient": PATIENT, "medication": med})
    ds = load_eicu(d, items=str(tmp_path / "formulary.txt"))
    assert list(ds.item_names) == ["aspirin", "heparin"]
    assert any("first line 'drugname' read as a header" in n for n in ds.notes)
