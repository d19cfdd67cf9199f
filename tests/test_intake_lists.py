"""One reader for catalogue, formulary and entity lists; item features;
exact ids; whole-file encodings; strict numbers."""
from __future__ import annotations

import gzip
import io

import numpy as np
import pytest

from dpfed_core.cli import main
from dpfed_core.cli.args import parse_params
from dpfed_core.data.inputs import (parse_list, read_item_features, read_json_document, read_list, strict_float,
                                    strict_int)
from dpfed_core.data.loaders import load_data
from dpfed_core.data.long_table import load_long_table
from dpfed_core.errors import DataError, DpfedError

ROWS = [("u1", "cardiovascular|shock|vasopressors|norepinephrine", "A"),
        ("u2", "sodium chloride 0.9 %, 1000 ml", "A"), ("u3", "aspirin", "B"), ("u4", "heparin", "B"),
        ("u5", "aspirin", "A"), ("u6", "heparin", "B")]


def _table(rows=ROWS) -> bytes:
    import csv

    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["user", "item", "site"])
    w.writerows(rows)
    return buf.getvalue().encode()


def _load(data: bytes, **kw):
    return load_long_table(io.BytesIO(data), filename="t.csv", user_col="user", item_col="item", entity_col="site",
                           value_kind="implicit", **kw)


def test_one_item_per_line_taken_whole():
    text = ("item\ncardiovascular|shock|vasopressors|norepinephrine\nsodium chloride 0.9 %, 1000 ml\naspirin\n"
            "heparin\nheparin\nnever used\n")
    lf = parse_list(text)
    assert lf.header == "item" and lf.duplicates == ["heparin"] and lf.names is None
    assert lf.ids == ["cardiovascular|shock|vasopressors|norepinephrine", "sodium chloride 0.9 %, 1000 ml",
                      "aspirin", "heparin", "never used"]
    ds = _load(_table(), items=text.encode())
    assert list(ds.item_ids) == lf.ids and ds.X.nnz == len(ROWS)  # no row dropped, no phantom 'item'
    notes = " ".join(ds.notes)
    assert "read as a header" in notes and "repeated" in notes and "1 of the 5 declared items have no row" in notes


def test_csv_only_when_declared_by_its_header():
    lf = parse_list("id,name\n1,Toy Story (1995)\n2,\"Amélie, the movie\"\n")
    assert lf.ids == ["1", "2"] and lf.names == ["Toy Story (1995)", "Amélie, the movie"]
    # a comma in a name without a CSV header: the whole line is the item
    assert parse_list("a, b\nc\n").ids == ["a, b", "c"]
    # a first line that is not a name (an empty field) does not turn the file into CSV
    assert parse_list(",\nx,1\ny\n").ids == [",", "x,1", "y"]


def test_list_errors_name_the_flag(tmp_path):
    with pytest.raises(DataError, match="empty"):
        parse_list("\n\n")
    with pytest.raises(DataError, match="header but no names"):
        parse_list("item\n", what="item list")
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.truncate(65 * 2**20)
    with pytest.raises(DataError, match="larger than"):
        read_list(big)
    bomb = gzip.compress(b"a\n" * (40 * 2**20))
    with pytest.raises(DataError, match="larger than"):
        read_list(bomb)


def test_ids_are_exact_strings_never_missing():
    rows = [(u, i, e) for e in "AB" for u in (f"NA{e}", f"None{e}", f"null{e}") for i in ("NA", "#N/A", "null", "x")]
    ds = _load(_table(rows))
    assert set(ds.item_ids) == {"NA", "#N/A", "null", "x"} and "NAA" in set(ds.user_ids)


def test_encoding_decided_on_the_whole_file():
    rows = [(f"u{i}", f"item{i % 7}", "ÅB"[i % 2]) for i in range(5000)]
    good = _table(rows)
    assert len(good) > 65536
    ds = _load(good)
    assert "Å" in ds.entity_names
    bad = good + "u9999,item1,Å\n".encode("utf-8").replace("Å".encode("utf-8"), b"\xc5")  # one stray byte, late
    with pytest.raises(DataError, match="encoding"):
        _load(bad)
    ds2 = _load(bad.replace(b"\xc5\x3f", b"?"), encoding="latin-1")  # declared: used strictly
    assert ds2.n_users == 5001
    old = "user,item,site\n" + "\n".join(f"u{i},caf\xe9{i % 3},{'AB'[i % 2]}" for i in range(20)) + "\n"
    ds3 = _load(old.encode("latin-1"))  # no UTF-8 sequence at all: an old latin-1 export
    assert "café0" in set(ds3.item_ids)


def test_a_utf8_list_beside_a_latin1_export_is_read_as_utf8_and_said_so(tmp_path):
    """--encoding names the data file's encoding; a list written beside it in UTF-8 keeps its names (decoded
    as latin-1, "München" would match no row and its entity would be left out), with a note. A list in the
    declared encoding is read in it."""
    rows = "user,item,site\n" + "".join(f"u{i},caf\xe9,{'München' if i % 2 else 'Köln'}\n" for i in range(8))
    data = tmp_path / "export.csv"
    data.write_bytes(rows.encode("latin-1"))
    for enc in ("utf-8", "latin-1"):
        (tmp_path / f"sites-{enc}.txt").write_bytes("München\nKöln\n".encode(enc))
        ds = load_long_table(data, user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                             encoding="latin-1", entities=tmp_path / f"sites-{enc}.txt")
        assert sorted(ds.entity_names) == ["Köln", "München"] and ds.n_users == 8
        said = [n for n in ds.notes if "read as UTF-8" in n]
        assert len(said) == (enc == "utf-8")
    assert read_list(b"plain\nascii\n", what="item list", encoding="latin-1").notes == []


def test_an_entity_list_that_matches_no_row_says_what_the_data_holds(tmp_path):
    """Written in another case (or with spaces), the list's names are shown beside the data's; otherwise
    the error names the entities the data's column holds."""
    data = tmp_path / "t.csv"
    data.write_bytes(_table())
    for listed, said in (("a\n b \n", "names differ only in case or spaces: 'a' in the list, 'A' in the data"),
                         ("north\nsouth\n", "the data's entity column holds 'A', 'B'")):
        (tmp_path / "sites.txt").write_text(listed)
        with pytest.raises(DataError) as exc:
            load_long_table(data, user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                            entities=tmp_path / "sites.txt")
        assert "no row belongs to a declared entity" in str(exc.value) and said in str(exc.value), str(exc.value)
        assert exc.value.param == "entities"


def test_an_entity_listed_in_another_case_is_named_beside_the_rows_it_drops(tmp_path):
    """One entity of the list written in another case than the data's: its rows are dropped and the
    entity takes part with no user; the note names the two spellings, not only the dropped rows."""
    data = tmp_path / "t.csv"
    data.write_bytes(_table())
    (tmp_path / "sites.txt").write_text("a\nB\n")
    ds = load_long_table(data, user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                         entities=tmp_path / "sites.txt")
    (dropped,) = [n for n in ds.notes if n.startswith("dropped")]
    assert "names differ only in case or spaces: 'a' in the list, 'A' in the data" in dropped, dropped


def test_one_column_one_role():
    with pytest.raises(DpfedError, match="both name the column"):
        load_long_table(io.BytesIO(_table()), filename="t.csv", user_col="item", item_col="item", entity_col="site",
                        value_kind="implicit")
    with pytest.raises(DpfedError, match="both name the column"):
        load_long_table(io.BytesIO(_table()), filename="t.csv", user_col="user", item_col="item", entity_col="item",
                        value_kind="implicit")


def test_strict_numbers():
    for bad in ("1_0", "１", "nan", "0x10", "1e", ""):
        with pytest.raises(ValueError):
            strict_float(bad)
    assert strict_float("1e-6") == 1e-6 and strict_float("inf") == float("inf")
    with pytest.raises(ValueError):
        strict_int("1_000")
    # at most 40 characters: a whole number of hundreds of digits is a pasted mistake, not a seed or a count
    assert strict_int("-" + "9" * 39) == -int("9" * 39)
    for bad in ("9" * 41, "+" + "9" * 40):
        with pytest.raises(ValueError, match="not a whole number"):
            strict_int(bad)
    with pytest.raises(DpfedError, match="not a number"):
        parse_params(["support=1_0"])
    assert parse_params(["support=10", "candidates=lsh"]) == {"support": 10, "candidates": "lsh"}


def test_a_list_given_as_names_that_are_all_blank_is_refused_and_repeats_are_counted():
    for blank in ([], [""], ["  ", "\t"]):
        with pytest.raises(DataError, match="the entity list is empty; give at least one name"):
            read_list(blank, what="entity list", param="entities")
    once = read_list([" A", "", "B", "A"], what="entity list")
    assert once.ids == ["A", "B"] and once.duplicates == ["A"]
    assert once.notes == ["entity list: 1 repeated name ignored (first kept)"]
    assert read_list(["A", "A", "B", "B"], what="entity list").notes == ["entity list: 2 repeated names ignored (first kept)"]


def test_a_utf8_list_beside_data_of_another_encoding_is_read_as_utf8_and_said_only_then():
    raw = "entity\nZürich\nGenève\n".encode("utf-8")
    lf = read_list(raw, what="entity list", param="entities", encoding="latin-1", filename="cantons.txt")
    assert lf.ids == ["Zürich", "Genève"]
    assert any("read as UTF-8 (it is valid UTF-8), not as the data's encoding" in n for n in lf.notes), lf.notes
    same = read_list(raw, what="entity list", param="entities", encoding="utf-8", filename="cantons.txt")
    assert same.ids == ["Zürich", "Genève"] and not any("read as UTF-8" in n for n in same.notes), same.notes


def test_a_csv_list_line_without_an_id_is_refused_naming_its_line():
    with pytest.raises(DataError, match="the item list: CSV line 3 has no id in its first field"):
        parse_list("id,name\na1,aspirin\n,heparin\n")


def test_a_feature_table_of_exactly_the_limit_is_accepted_and_one_value_more_refused(monkeypatch):
    from dpfed_core.data.inputs import check_feature_size

    monkeypatch.setenv("DPFED_MAX_FEATURE_VALUES", "600")
    check_feature_size(200, 3, what="item features", param="item_features")
    with pytest.raises(DataError, match="200 items × 4 feature columns = 800 values .* above the limit of 600"):
        check_feature_size(200, 4, what="item features", param="item_features")
    with pytest.raises(DataError, match="601 values"):
        check_feature_size(601, 1, what="item features", param="item_features")


def test_item_features_file(tmp_path):
    f = tmp_path / "features.csv"
    f.write_text("item,size,class\naspirin,1,0\nheparin,2.5,\nunknown drug,3,1\n")
    ds = _load(_table(), item_features=str(f))
    assert ds.item_feature_names == ["size", "class"] and ds.item_features.shape == (ds.n_items, 2)
    j = list(ds.item_ids).index("heparin")
    assert ds.item_features[j].tolist() == [2.5, 0.0]
    assert any("item features: column 'class': 1 empty cell read as 0" in n for n in ds.notes)
    assert any("public input" in n and "no privacy cost" in n for n in ds.notes)
    f.write_text("item,size\naspirin,1_0\n")
    with pytest.raises(DataError, match="not a number"):
        read_item_features(str(f))
    f.write_text("item,size\naspirin,1\naspirin,2\n")
    with pytest.raises(DataError, match="twice"):
        read_item_features(str(f))


def test_item_features_category_columns(tmp_path):
    """Public metadata as written: a text column is categories (``|`` separates several values), one
    0/1 column per value two or more items share; a numeric column beside it is kept as numbers; a
    column mixing numbers and text is an error naming the cell, never a silent category."""
    f = tmp_path / "features.csv"
    f.write_text("item;class;tags;dose\naspirin;nsaid;oral|tablet;1\nheparin;anticoagulant;iv;2\n"
                 "unknown drug;anticoagulant;oral|iv;\nibuprofen;nsaid;tablet|oral;4\nzinc;;solo;5\n")
    tab = read_item_features(str(f))
    assert tab.names[0] == "dose" and tab.values[:, 0].tolist() == [1, 2, 0, 4, 5]
    cols = dict(zip(tab.names, tab.values.T))
    # shared values only: 'solo' is on one item and relates it to nothing
    assert set(tab.names[1:]) == {"class=nsaid", "class=anticoagulant", "tags=oral", "tags=tablet", "tags=iv"}
    assert cols["class=nsaid"].tolist() == [1, 0, 0, 1, 0]
    assert cols["tags=oral"].tolist() == [1, 0, 1, 1, 0] and cols["tags=iv"].tolist() == [0, 1, 1, 0, 0]
    assert any("'tags' read as categories" in n and "3 of its 4 values" in n for n in tab.notes)
    ds = _load(_table(), item_features=str(f))
    j = list(ds.item_ids).index("heparin")
    row = dict(zip(ds.item_feature_names, ds.item_features[j]))
    assert row["class=anticoagulant"] == 1 and row["tags=iv"] == 1 and row["dose"] == 2
    assert any("read as categories" in n for n in ds.notes)
    f.write_text("item,size\naspirin,1\nheparin,2.O\nzinc,3\n")  # a typo in a numeric column
    with pytest.raises(DataError, match=r"line 3, column 'size': '2.O' is not a number \(a column of categories"):
        read_item_features(str(f))
    f.write_text("item,title\naspirin,a\nheparin,b\n")  # every value on one item: nothing to use
    with pytest.raises(DataError, match="no usable feature column"):
        read_item_features(str(f))


def test_movielens_public_item_features(ml100k_dir):
    ds = load_data(str(ml100k_dir))
    names = ds.item_feature_names
    assert "genre: Action" in names and "release year" in names and any(n.startswith("decade: ") for n in names)
    toy = list(ds.item_ids).index("1")
    F = dict(zip(names, ds.item_features[toy]))
    assert F["genre: Animation"] == 1 and F["release year"] == 1995 and F["decade: 1990s"] == 1


def test_eicu_formulary_hierarchy_and_drug_tokens(eicu_dir, tmp_path):
    ds = load_data(str(eicu_dir), items=b"drugname\nfurosemide\ninsulin aspart\ninsulin lispro\nACETAMINOPHEN 325 MG\n")
    # a formulary's drug names are normalised as the data's are, so its raw strings name the data's drugs
    assert list(ds.item_names[:4]) == ["furosemide", "insulin aspart", "insulin lispro", "acetaminophen"]
    assert ds.n_declared == 4 and np.all(np.asarray(ds.X[:, :4].sum(axis=0)).ravel() > 0)
    assert any(n == "token: insulin" for n in ds.item_feature_names)
    col = ds.item_feature_names.index("token: insulin")
    assert ds.item_features[:, col].sum() == 2
    from dpfed_core.data.features import hierarchy_features

    h = hierarchy_features(["a", "b", "c"], ["cardio|shock|vaso|norepi", "cardio|shock|fluids", "neuro|x"])
    assert "path: cardio" in h.names and "path: cardio|shock" in h.names
    assert h.values[:, h.names.index("path: cardio|shock")].tolist() == [1, 1, 0]


def test_json_documents_bounded(tmp_path):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 50000 + "]" * 50000)
    with pytest.raises(DataError, match="nested deeper"):
        read_json_document(deep, what="--resume", param="resume")
    from dpfed_core.data.inputs import MAX_JSON_DEPTH

    edge = tmp_path / "edge.json"  # exactly the limit is read; one level more is refused
    edge.write_text("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)
    nested: list = []
    for _ in range(MAX_JSON_DEPTH - 1):
        nested = [nested]
    assert read_json_document(edge, what="--run", param="run") == nested
    edge.write_text("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    with pytest.raises(DataError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        read_json_document(edge, what="--run", param="run")
    ok = tmp_path / "ok.json"
    ok.write_text('{"a": "[[[[", "b": [1, {"c": "\\"]"}]}')
    assert read_json_document(ok, what="--run", param=None)["b"][1]["c"] == '"]'


def test_cli_outputs_never_overwrite_inputs(tmp_path, capsys):
    data = tmp_path / "t.csv"
    data.write_bytes(_table())
    items = tmp_path / "items.txt"
    items.write_text("aspirin\nheparin\n")
    link = tmp_path / "link.csv"
    link.symlink_to(data)
    hard = tmp_path / "hard.csv"
    import os

    os.link(data, hard)
    base = ["run", "--data", str(data), "--user-col", "user", "--item-col", "item", "--entity-col", "site",
            "--value-kind", "implicit", "--items", str(items), "--method", "popularity", "--rank", "1"]
    before = data.read_bytes(), items.read_bytes()
    for out in (data, link, hard, items, os.environ["DPFED_STORE"]):
        assert main([*base, "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "--out" in err and "input" in err, err
    assert (data.read_bytes(), items.read_bytes()) == before


def test_item_features_match_an_item_by_its_name_when_no_row_has_its_id():
    """A features file may name the items as the catalogue shows them (titles, drug names): a row
    matches by id first, then by name; unmatched items get zeros and the note counts both."""
    import numpy as np
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset
    from dpfed_core.data.features import attach_item_features
    from dpfed_core.data.inputs import FeatureTable

    ds = FederatedDataset.from_parts(sp.csr_matrix(np.eye(3)), np.array(["A", "A", "B"]), value_kind="implicit",
                                     item_ids=np.array(["1", "2", "3"]),
                                     item_names=np.array(["aspirin", "heparin", "zinc"]))
    tab = FeatureTable(ids=["2", "aspirin", "ibuprofen"], values=np.array([[20.0], [10.0], [30.0]]), names=["dose"])
    out = attach_item_features(ds, tab)
    assert out.item_features[:, 0].tolist() == [10.0, 20.0, 0.0]
    note = next(n for n in out.notes if n.startswith("public input"))
    assert "2 of 3 items matched" in note and "1 without a row get zeros" in note and "1 rows name items" in note


def test_name_features_keep_only_keys_two_or_more_items_share():
    """A hierarchy prefix or a drug-name token held by one item relates it to nothing: no column; a
    combination drug's hyphenated parts are tokens it shares with the single drugs."""
    from dpfed_core.data.features import drug_token_features, hierarchy_features

    h = hierarchy_features(["a", "b", "c"], ["cardio|shock|vaso|norepi", "cardio|arrest|cpr", "neuro|stroke|tpa"])
    assert h.names == ["path: cardio"] and h.values[:, 0].tolist() == [1, 1, 0]
    t = drug_token_features(["1", "2", "3"], ["ipratropium-albuterol", "albuterol", "insulin lispro"])
    assert t.names == ["token: albuterol"] and t.values[:, 0].tolist() == [1, 1, 0]


def test_an_id_given_two_names_is_refused_and_a_repeated_line_is_a_repeat():
    """``1,Toy Story`` then ``1,Dup`` is not a repeat: which name is meant is the author's to say."""
    with pytest.raises(DataError, match=r"gives id '1' two names \('Toy Story', then 'Dup' on line 3\)"):
        parse_list("id,title\n1,Toy Story\n1,Dup\n")
    lf = parse_list("id,title\n1,Toy Story\n2,Heat\n1,Toy Story\n")
    assert lf.ids == ["1", "2"] and lf.duplicates == ["1"]


ZU_NFC, ZU_NFD = "Z\u00fcrich", "Zu\u0308rich"  # one name: a precomposed 'ü', then 'u' and a combining diaeresis


def test_a_name_written_in_two_unicode_forms_or_with_invisible_characters_is_one_name():
    """Two spellings that display the same are one entity or item, match a declared list written either
    way, and the note says which spellings were read as one; a field of invisible characters is empty."""
    rows = [("u1", "aspirin", ZU_NFC), ("u2", "aspirin\u200b", ZU_NFD), ("u3", "heparin", "Bern\ufeff"),
            ("u4", "heparin", "Bern"), ("u5", "aspirin", ZU_NFD)]
    for entities in ([ZU_NFD, "Bern"], f"site\r\n{ZU_NFC}\r\n\ufeffBern".encode("utf-8-sig")):
        ds = _load(_table(rows), entities=entities, items=f"{ZU_NFD}\n\u200baspirin\nheparin\n".encode())
        assert list(ds.entity_names) == ["Bern", ZU_NFC] and ds.n_users == 5 and ds.X.nnz == 5
        assert list(ds.item_ids) == [ZU_NFC, "aspirin", "heparin"] and ds.item_source == "declared"
        assert not [n for n in ds.notes if "dropped" in n or "not in the declared" in n], ds.notes
        said = [n for n in ds.notes if "displays the same" in n]
        assert said == [
            "column 'item': 1 of its item ids is written in more than one way that displays the same (another "
            "Unicode form of an accent, or an invisible character around it), read as one ('aspirin' and "
            "'aspirin\\u200b' as 'aspirin')",
            "column 'site': 2 of its entity names are written in more than one way that displays the same (another "
            "Unicode form of an accent, or an invisible character around it), read as one ('Bern\\ufeff' and 'Bern' "
            "as 'Bern'; 'Z\\xfcrich' and 'Zu\\u0308rich' as 'Z\u00fcrich')"], said
    ds = _load(_table([*rows, ("u6", "heparin", "St.\u00a0Gallen")]), entities_from_data=True,
               exclude_entities=[f" {ZU_NFD}"])
    assert list(ds.entity_names) == ["Bern", "St. Gallen"] and ds.n_users == 3
    ds = _load(_table([*rows, ("u6", "heparin", "St. Gallen")]), entities=[ZU_NFC, "Bern", "St.\u202fGallen"])
    assert list(ds.entity_names) == ["Bern", "St. Gallen", ZU_NFC] and ds.n_users == 6
    with pytest.raises(DataError) as e:
        _load(_table([*rows, ("u6", "heparin", "\u200b \u2060")]), entities_from_data=True)
    assert str(e.value) == (
        "t.csv, data row 6 (line 7): column 'site' holds only invisible characters ('\\u200b \\u2060'), so it shows "
        "as empty. Every row needs a value in its entity column; fill the gaps, or leave such rows out with "
        "drop_missing.")


def test_a_list_line_in_double_quotes_is_the_field_they_hold_as_in_the_data():
    """A spreadsheet saves a one-column list's 'A, ward' as '"A, ward"', as it saves the data's cell; the
    data's reader takes the quotes off, so the list's reader does too — a line not wholly in quotes is
    taken whole, quotes and all."""
    lf = parse_list('entity\n"A, ward"\n"the ""East"" wing"\n12" tube\n"B" annex\n', what="entity list",
                    param="entities")
    assert lf.ids == ["A, ward", 'the "East" wing', '12" tube', '"B" annex'] and lf.header == "entity"
    rows = [("u1", "aspirin", "A, ward"), ("u2", "heparin", "A, ward"), ("u3", "aspirin", "B"), ("u4", "heparin", "B")]
    ds = _load(_table(rows), entities=b'"A, ward"\r\nB\r\n')
    assert list(ds.entity_names) == ["A, ward", "B"] and ds.n_users == 4 and not [n for n in ds.notes if "dropped" in n]


def test_a_repeated_line_of_a_list_is_counted_in_the_note_in_its_own_number():
    one = parse_list("A\nB\nA\n", what="entity list", param="entities")
    assert one.ids == ["A", "B"] and "entity list: 1 repeated line ignored (first kept): 'A'" in one.notes, one.notes
    two = parse_list("A\nB\nA\nB\n", what="entity list", param="entities")
    assert "entity list: 2 repeated lines ignored (first kept): 'A', 'B'" in two.notes, two.notes


def _three_items():
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    return FederatedDataset.from_parts(sp.csr_matrix(np.eye(3)), np.array(["A", "A", "B"]),
                                       item_names=np.array(["i1", "i2", "i3"]), value_kind="binary", value_max=1.0)


def test_public_feature_sources_are_kept_side_by_side_and_a_repeated_name_told_apart():
    from dpfed_core.data.features import attach_item_features
    from dpfed_core.data.inputs import FeatureTable

    first = attach_item_features(_three_items(), FeatureTable(["i1", "i3"], np.array([[1.0], [2.0]]), ["size"]))
    both = attach_item_features(first, FeatureTable(["i2"], np.array([[5.0]]), ["size"]))
    assert both.item_feature_names == ["size", "size (2)"]
    assert both.item_features.tolist() == [[1.0, 0.0], [0.0, 5.0], [2.0, 0.0]]
    with pytest.raises(DataError, match="no item of the item features file is an item of the data .* exact strings"):
        attach_item_features(_three_items(), FeatureTable(["I1", "x"], np.ones((2, 1)), ["size"]))


def test_name_features_link_items_by_shared_levels_and_words_not_by_case_or_short_route_words():
    from dpfed_core.data.features import drug_token_features, hierarchy_features

    h = hierarchy_features(["a", "b", "c"], ["Cardio|Shock|vasopressors", "cardio|shock|fluids", "neuro|x|y"])
    assert h.names == ["path: cardio", "path: cardio|shock"] and h.values.tolist() == [[1, 1], [1, 1], [0, 0]]
    t = drug_token_features(["a", "b", "c"], ["insulin iv", "heparin iv", "insulin lispro"])
    assert t.names == ["token: insulin"] and t.values[:, 0].tolist() == [1, 0, 1]


def test_a_release_year_is_read_from_the_1800s_on():
    from dpfed_core.data.features import movielens_item_features

    f = movielens_item_features(["1", "2", "3"], np.zeros((3, 1)), ["Drama"], ["01-Jan-1895", "1995", ""])
    year = f.names.index("release year")
    assert f.values[:, year].tolist() == [1895.0, 1995.0, 0.0]
    assert [n for n in f.names if n.startswith("decade")] == ["decade: 1890s", "decade: 1990s"]


def test_hierarchy_levels_stop_above_the_leaf_and_at_three_levels():
    """A name's last part is the item itself, never a level, and only the first three levels count: 'care|meds'
    has the one level 'care', so 'care|meds' links it to no item; two items sharing four levels share three."""
    from dpfed_core.data.features import hierarchy_features

    h = hierarchy_features(["1", "2", "3", "4"], ["Care|Meds", "care|meds|oral", "x|y|z|w|v", "x|y|z|w|u"])
    assert h.names == ["path: care", "path: x", "path: x|y", "path: x|y|z"]
    assert h.values.tolist() == [[1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 1, 1], [0, 1, 1, 1]]


def test_drug_words_are_split_at_slashes_and_commas_read_in_lower_case_and_counted_once_per_drug():
    from dpfed_core.data.features import drug_token_features

    names = ["Sodium Chloride/Dextrose", "dextrose,potassium", "sodium bicarbonate", "tpa alteplase", "tpa",
             "heparin lock heparin"]
    t = drug_token_features([str(i) for i in range(6)], names)
    assert t.names == ["token: dextrose", "token: sodium", "token: tpa"]
    assert t.values.T.tolist() == [[1, 1, 0, 0, 0, 0], [1, 0, 1, 0, 0, 0], [0, 0, 0, 1, 1, 0]]


def test_name_features_keep_the_commonest_keys_up_to_the_limit(monkeypatch):
    from dpfed_core.data import features

    names = ["insulin aspart", "insulin lispro", "insulin albuterol", "albuterol", "zinc"]
    t = features.drug_token_features(list("abcde"), names)
    assert t.names == ["token: insulin", "token: albuterol"]  # 3 drugs, then 2, not alphabetical
    monkeypatch.setattr(features, "MAX_NAME_FEATURES", 1)
    t = features.drug_token_features(list("abcde"), names)
    assert t.names == ["token: insulin"] and t.values[:, 0].tolist() == [1, 1, 1, 0, 0]


def test_a_list_in_no_utf8_is_read_as_windows_1252_when_it_decodes_so():
    """A Windows export's 0x80 is the euro sign; read as latin-1 it would be an invisible control character
    and the name would match no row."""
    assert read_list(b"K\xf6ln \x80\nBerlin\n").ids == ["Köln €", "Berlin"]
    assert read_list(b"K\xf6ln \x81\n").ids == ["Köln \x81"]  # 0x81 is no cp1252 character: latin-1


def test_a_pipe_table_after_a_utf8_byte_order_mark_is_still_read_as_flag_features():
    text = "1|Toy Story (1995)|01-Jan-1995||http://x|0|1|1\n2|GoldenEye (1995)|01-Jan-1995||http://y|0|1|0\n"
    ft = read_item_features(b"\xef\xbb\xbf" + text.encode())
    assert ft.ids == ["1", "2"] and ft.names == ["genre=flag 1", "genre=flag 2", "genre=flag 3"]
    assert ft.values.tolist() == [[0, 1, 1], [0, 1, 0]]


def test_a_pipe_table_needs_five_fields_a_unique_whole_id_and_two_flag_columns():
    """Lines short of a MovieLens item table, with one 0/1 column or with a repeated id are names taken whole."""
    for text in ("1|a|0|1\n2|b|1|0\n",  # four fields
                 "1|a|d|x|1\n2|b|d|y|0\n",  # one flag column
                 "1|a|d|0|1\n1|b|d|1|0\n"):  # the id repeated
        lf = parse_list(text)
        assert lf.ids == text.split() and lf.names is None, text
    lf = parse_list("1||d|0|1\n2|Heat|d|1|0\n")
    assert lf.ids == ["1", "2"] and lf.names == ["1", "Heat"]  # a movie without a title is named by its id


def test_the_flags_of_a_pipe_table_are_named_as_genres_only_when_they_are_movielens_nineteen():
    row = "|t|d||u|" + "|".join("1" if g % 2 else "0" for g in range(19))
    ft = read_item_features(("\n".join(f"{k}{row}" for k in (1, 2)) + "\n").encode())
    assert ft.names[:2] == ["genre=unknown", "genre=Action"] and len(ft.names) == 19
    few = read_item_features(b"1|t|d|0|1|1\n2|u|d|1|0|1\n")
    assert few.names == ["genre=flag 1", "genre=flag 2", "genre=flag 3"]


def test_an_item_features_header_naming_a_feature_twice_is_refused():
    with pytest.raises(DataError, match="feature names in the header must be distinct"):
        read_item_features(b"item,dose,dose\na,1,2\nb,3,4\n")


def test_an_item_features_line_of_another_width_than_the_header_is_refused_naming_it():
    for body in ("a,1,2\nb,3\n", "a,1,2\nb,3,4,5\n"):
        with pytest.raises(DataError, match="line 3: [24] fields where the header has 3"):
            read_item_features(("item,dose,age\n" + body).encode())


def test_an_infinite_item_feature_is_refused_naming_its_cell():
    with pytest.raises(DataError, match=r"line 3, column 'dose': 'inf' is not finite"):
        read_item_features(b"item,dose\na,1\nb,inf\n")


def test_an_item_feature_too_large_for_the_models_is_refused_naming_its_cell():
    """A finite 1e160 squares past float64 in the site models' fits: the run would end in an internal
    error instead of an intake error naming the file's cell."""
    with pytest.raises(DataError, match=r"line 3, column 'price': '-1e160' is beyond ±1e\+15") as err:
        read_item_features(b"item,price\na,1\nb,-1e160\n")
    assert err.value.param == "item_features"
    assert read_item_features(b"item,price\na,1\nb,-1e15\n").values[:, 0].tolist() == [1.0, -1e15]


def test_category_features_come_commonest_first_then_in_file_order():
    ft = read_item_features(b"item,kind\na,x\nb,y\nc,y\nd,x|y\ne,z\nf,z\n")
    assert ft.names == ["kind=y", "kind=x", "kind=z"]  # y on 3 items, x and z on 2: x is met first
    assert ft.values[:, 0].tolist() == [0, 1, 1, 1, 0, 0]


def test_category_features_are_cut_to_the_commonest_up_to_the_limit(monkeypatch):
    import dpfed_core.data.inputs as inputs

    monkeypatch.setattr(inputs, "MAX_CATEGORY_FEATURES", 2)
    ft = read_item_features(b"item,kind\na,x\nb,y\nc,y\nd,x|y|z\ne,z\nf,z\ng,z\n")
    assert ft.names == ["kind=z", "kind=y"] and ft.values.shape == (7, 2)
    assert any("2 of its 3 values" in n for n in ft.notes)


def test_an_item_features_line_without_an_item_id_is_refused_naming_it():
    with pytest.raises(DataError, match="line 3: empty item id"):
        read_item_features(b"item,dose\na,1\n ,2\n")


def test_a_category_value_repeated_in_one_cell_is_on_one_item_and_relates_it_to_nothing():
    ft = read_item_features(b"item,kind\na,x|x\nb,y\nc,y\n")
    assert ft.names == ["kind=y"] and ft.values[:, 0].tolist() == [0, 1, 1]


def test_a_backslash_escapes_only_the_character_next_to_it_in_the_json_depth_check(tmp_path):
    """An escape like ``\\n`` must not swallow the string's closing quote: the brackets after it would be
    read as text and a document nested past the limit would reach the recursive parser."""
    from dpfed_core.data.inputs import MAX_JSON_DEPTH

    doc = tmp_path / "doc.json"
    n = MAX_JSON_DEPTH + 1
    doc.write_text('["a\\nb", ' + "[" * n + "]" * n + "]")
    with pytest.raises(DataError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        read_json_document(doc, what="--run", param="run")
    doc.write_text('["a\\nb", "c\\\\", "d\\"["]')
    assert read_json_document(doc, what="--run", param="run") == ["a\nb", "c\\", 'd"[']


def test_an_output_that_is_a_file_anywhere_inside_an_input_folder_is_refused(tmp_path):
    """A MovieLens or eICU folder protects its files in its subfolders too, not only the files directly in it."""
    from dpfed_core.data.inputs import check_output_not_input
    from dpfed_core.errors import ConfigError

    data = tmp_path / "eicu"
    (data / "extra").mkdir(parents=True)
    for out in (data / "patient.csv", data / "extra" / "notes.csv"):
        out.write_text("kept\n")
        with pytest.raises(ConfigError, match="is the input --data"):
            check_output_not_input(out, [("--data", data)])
        assert out.read_text() == "kept\n"
    check_output_not_input(tmp_path / "elsewhere.json", [("--data", data)])  # outside the folder: allowed


def test_a_utf32_list_is_told_by_its_mark_from_utf16_whose_mark_begins_it():
    import codecs

    raw = codecs.BOM_UTF32_LE + "Köln\nBern\n".encode("utf-32-le")
    assert read_list(raw, encoding="utf-32-le").ids == ["Köln", "Bern"]
    assert read_list(raw).ids == ["Köln", "Bern"]
    with pytest.raises(DpfedError, match="utf-32 byte-order mark; declare encoding=utf-32-le"):
        read_list(raw, encoding="utf-16-le")


def test_a_folder_given_as_a_list_is_said_to_be_a_folder(tmp_path):
    with pytest.raises(DataError, match=r"entity list .* is a folder; give a file") as info:
        read_list(tmp_path, what="entity list", param="entities")
    assert info.value.param == "entities"


def test_a_list_its_declared_encoding_cannot_decode_is_refused_naming_the_byte():
    with pytest.raises(DataError, match="is not valid utf-8: byte 1 cannot be decoded; declare the file's real"):
        read_list(b"K\xf6ln\nBern\n", encoding="utf-8")


def test_a_gzip_list_is_decompressed_no_further_than_the_size_limit():
    """A small gzip of a huge content (a 'zip bomb') is refused having inflated the limit, not the whole."""
    import tracemalloc

    from dpfed_core.data.inputs import read_bounded

    bomb = gzip.compress(b"\0" * (64 * 2**20))
    tracemalloc.start()
    try:
        with pytest.raises(DataError, match="is larger than 1 MB"):
            read_bounded(bomb, what="item list", param="items", limit=2**20)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, peak


def test_a_blank_between_commas_names_no_entity():
    from dpfed_core.data.inputs import split_names

    assert split_names("A, ,B,") == ["A", "B"]


def test_a_tab_separated_list_with_a_header_is_read_as_ids_and_names():
    lf = parse_list("id\tname\n1\tAspirin\n2\tHeparin\n")
    assert lf.ids == ["1", "2"] and lf.names == ["Aspirin", "Heparin"] and lf.header == "id\tname"


def test_the_audit_reads_a_list_parameter_of_an_audited_method_as_written(tmp_path, monkeypatch, capsys):
    from dpfed_core.cli.args import list_params

    assert parse_params(["values=1,2,3", "support=5"], list_params(["xin-pmd", "dp-prototypes"])) == \
        {"values": "1,2,3", "support": 5}
    monkeypatch.setenv("DPFED_STORE", str(tmp_path / "s.sqlite3"))
    audit = ["audit", "--data", "sample:clinic", "--entity", "hospital 01"]
    # Xin's values read as its numbers: what refuses the audit is the method, not the list
    assert main([*audit, "--methods", "xin-pmd,dp-prototypes", "--param", "values=1,2,3", "--param", "support=5"]) != 0
    assert "cannot audit 'xin-pmd'" in capsys.readouterr().err
    # a list for a method that declares none is still one malformed number
    assert main([*audit, "--methods", "dp-prototypes", "--param", "values=1,2,3"]) != 0
    assert "--param values=1,2,3: not a number" in capsys.readouterr().err
    assert not (tmp_path / "s.sqlite3").exists()
