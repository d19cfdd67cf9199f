"""Intake rules the loaders' other tests leave open: what a run sees of a table, a list or an upload, and
the one error a bad option gets (naming the option that fixes it)."""
from __future__ import annotations

import io
import re

import pandas as pd
import pytest

from dpfed_core.data import upload
from dpfed_core.data.inputs import parse_list, read_bounded, read_list
from dpfed_core.data.loaders import load_data
from dpfed_core.data.long_table import load_long_table
from dpfed_core.errors import ConfigError, DataError

from test_loaders import OPTS, _table as _ratings_table  # noqa: E402  (the loaders' small ratings table)


def _table(entities=("A", "B", "C", "D")) -> pd.DataFrame:
    return _ratings_table(2, entities)


def test_the_value_kind_is_read_off_the_column_name_whatever_its_case():
    df = _table().rename(columns={"rating": "Rating"})
    ds = load_long_table(df, **{**OPTS, "value_col": "Rating"})
    assert ds.value_kind == "ratings" and ds.value_max == 5
    assert any("values read as ratings" in n and "'Rating'" in n for n in ds.notes)


def test_a_value_bound_of_zero_is_refused_naming_value_max():
    with pytest.raises(ConfigError, match="value_max must be a positive number") as exc:
        load_long_table(_table(), **OPTS, value_max=0)
    assert exc.value.param == "value_max"


def test_every_excluded_entity_is_left_out_as_written_around_spaces():
    ds = load_long_table(_table(), **OPTS, exclude_entities=[" C", "D "])
    assert ds.entity_names == ["A", "B"] and ds.n_users == 4
    assert any("left out 2 declared entities: C, D" in n for n in ds.notes)


def test_an_items_readable_name_is_the_first_seen_for_it():
    df = _table(("A", "B"))
    df["title"] = df["item"].map({1: "One", 2: "Two", 3: "Three"})
    df.loc[len(df) - 1, "title"] = "Three (renamed)"  # the last row of item 3 names it otherwise
    ds = load_long_table(df, **OPTS, item_name_col="title")
    assert dict(zip(ds.item_ids, ds.item_names)) == {"1": "One", "2": "Two", "3": "Three"}


def test_the_value_column_cannot_also_be_the_user_column():
    with pytest.raises(ConfigError, match="value_col and user_col both name the column 'user'") as exc:
        load_long_table(_table(), **{**OPTS, "value_col": "user"}, value_kind="counts", value_max=5)
    assert exc.value.param == "value_col"
    # named for two roles is said first, not "say what the values of column 'user' are"
    with pytest.raises(ConfigError, match="value_col and user_col both name the column 'user'"):
        load_long_table(_table(), **{**OPTS, "value_col": "user"})


def test_a_csv_list_line_without_a_name_is_named_by_its_id():
    lf = parse_list("id,name\n1,\n2,Two\n")
    assert lf.ids == ["1", "2"] and lf.names == ["1", "Two"]


def test_a_byte_order_mark_is_not_part_of_the_first_name():
    lf = read_list("\ufeffaspirin\nheparin\n".encode("utf-8"), what="item list", param="items")
    assert lf.ids == ["aspirin", "heparin"]


def test_a_file_one_byte_beyond_the_limit_is_refused_not_cut(tmp_path):
    f = tmp_path / "list.txt"
    f.write_bytes(b"a\nb\nc\nd\nef\n")  # 12 bytes
    assert read_bounded(f, what="item list", param="items", limit=12) == f.read_bytes()
    with pytest.raises(DataError, match="larger than") as exc:
        read_bounded(f, what="item list", param="items", limit=10)
    assert exc.value.param == "items"


def test_a_table_file_without_its_item_column_asks_for_the_columns(tmp_path):
    p = tmp_path / "t.csv"
    _table().to_csv(p, index=False)
    before = p.read_bytes()
    with pytest.raises(ConfigError, match="say which columns hold the user, the item") as exc:
        load_data(str(p), user_col="user", entity_col="site", value_col="rating")
    assert exc.value.param == "user_col" and p.read_bytes() == before


def test_the_item_name_column_cannot_be_the_entity_column():
    probs = upload.mapping_problems("u", "i", "h", "r", "h")
    assert probs == ["“Item name” 'h' is the user or entity column; choose the item's title / name column or (none)."]


def test_attribute_ids_are_matched_without_their_outer_spaces():
    inter = pd.DataFrame({"user": ["1", "2", "1"], "item": ["x", "y", "y"]})
    attrs = pd.DataFrame({"uid": [" 1", "2 "], "zip": ["85711", "94043"]})
    joined = upload.join_user_attributes(inter, "user", attrs, "uid")
    assert joined["attribute: zip"].tolist() == ["85711", "94043", "85711"]
    # an id written in another Unicode form in one of the two files is the same user
    inter = pd.DataFrame({"user": ["Jos\u00e9", "Ana", "Jos\u00e9"], "item": ["x", "y", "y"]})
    attrs = pd.DataFrame({"uid": ["Jose\u0301", "Ana\u200b"], "zip": ["85711", "94043"]})
    joined = upload.join_user_attributes(inter, "user", attrs, "uid")
    assert joined["attribute: zip"].tolist() == ["85711", "94043", "85711"]


def test_a_two_column_header_with_one_number_is_a_header():
    assert not upload.headerless(["user", "1995"])
    assert upload.headerless(["196", "242"])




def test_an_implicit_zero_is_no_interaction_and_any_positive_value_is_one():
    df = _table(("A", "B"))
    df["rating"] = [0, 2, 1] * (len(df) // 3)
    ds = load_long_table(df, **OPTS, value_kind="implicit")
    assert ds.X.nnz == 2 * len(df) // 3 and set(ds.X.data) == {1.0}
    assert any(f"dropped {len(df) // 3} of {len(df)} rows with value 0" in n for n in ds.notes)
    # the values above 1 are said to be read as interactions, not "kept as is and clipped"
    read_as_one = [n for n in ds.notes if "neither 0 nor 1" in n]
    assert len(read_as_one) == 1 and f"{len(df) // 3} values" in read_as_one[0] and "read as 1" in read_as_one[0]
    assert not any("kept as is" in n for n in ds.notes)


def test_a_movielens_rating_of_a_movie_missing_from_its_movie_file_is_kept_as_its_entitys_own(tmp_path):
    """The movie file is the declared catalogue, as an items file is for a long table: a rating of a
    movie it does not list is kept as its entity's own item (never shared), said in a note — not an
    error naming --items, which a MovieLens directory does not take."""
    from dpfed_core.data.movielens import load_movielens

    (tmp_path / "ratings.dat").write_text("".join(f"{u}::{i}::4::978300760\n" for u in range(1, 5) for i in (1, 3)))
    (tmp_path / "users.dat").write_text("".join(f"{u}::M::25::1::{u}2345\n" for u in range(1, 5)))
    (tmp_path / "movies.dat").write_text("1::Toy Story (1995)::Animation\n2::Heat (1995)::Action\n")
    ds = load_movielens(tmp_path)
    assert list(ds.item_ids) == ["1", "2", "3"] and ds.item_source == "declared" and ds.n_declared == 2
    assert ds.X[:, 2].nnz == 4  # every rating of movie 3 kept
    (kept,) = [n for n in ds.notes if n.startswith("kept 4 rows")]
    assert "'3'" in kept and "never shared" in kept


def test_numeric_ids_are_in_numeric_order():
    df = pd.DataFrame({"user": ["10", "2", "1", "30", "3", "20"], "item": ["10", "9", "100", "10", "9", "100"],
                       "site": ["A", "A", "A", "B", "B", "B"]})
    ds = load_long_table(df, user_col="user", item_col="item", entity_col="site", value_kind="implicit")
    assert list(ds.user_ids) == ["1", "2", "10", "3", "20", "30"] and list(ds.item_ids) == ["9", "10", "100"]


def test_a_lone_word_that_may_be_a_name_is_a_name_not_a_header():
    lf = parse_list("value\naspirin\n")
    assert lf.header is None and lf.ids == ["value", "aspirin"]


def test_a_lists_first_line_naming_the_column_the_list_is_for_is_its_header():
    """`hospital` alone may be a hospital's name, but an entity list given with --entity-col hospital
    that opens with `hospital` is headed by it: the column's name is the user's own flag, a public input,
    so no phantom entity joins the federation."""
    assert parse_list("hospital\nH1\n").ids == ["hospital", "H1"]
    lf = parse_list(" Hospital \nH1\nH2\n", column="hospital")
    assert lf.header == "Hospital" and lf.ids == ["H1", "H2"]
    assert parse_list("hospital\nH1\n", column="site").ids == ["hospital", "H1"]
    data = b"stay,drug,hospital\ns1,a,H1\ns2,b,H1\ns3,a,H2\ns4,b,H2\n"
    ds = load_long_table(io.BytesIO(data), filename="t.csv", user_col="stay", item_col="drug", entity_col="hospital",
                         value_kind="implicit", entities=b"hospital\nH1\nH2\n", items=b"drug\na\nb\n")
    assert list(ds.entity_names) == ["H1", "H2"] and sorted(ds.item_names[:ds.n_items]) == ["a", "b"]


def test_a_declared_csv_list_keeps_a_first_row_with_one_header_like_field():
    lf = parse_list("42,drug\n43,lab test\n", csv_sep=",")
    assert lf.header is None and lf.ids == ["42", "43"] and lf.names == ["drug", "lab test"]


def test_a_utf8_list_with_one_stray_byte_asks_for_its_encoding():
    raw = "café\nthé\n".encode("utf-8") + b"bad\xff\n"
    with pytest.raises(DataError, match="byte 14 is not valid UTF-8.*declare the encoding") as exc:
        read_list(raw, what="item list", param="items")
    assert exc.value.param == "encoding"
    assert read_list(raw, what="item list", param="items", encoding="latin-1").ids[2] == "bad\xff"


def test_ids_of_a_text_file_lose_only_their_outer_spaces():
    data = b"user,item,site\n u1 ,x ,A\nu1,y,A\nu2, x,B\nu 3,y,B\n"
    ds = load_long_table(io.BytesIO(data), filename="t.csv", user_col="user", item_col="item", entity_col="site",
                         value_kind="implicit")
    assert list(ds.user_ids) == ["u1", "u 3", "u2"] and list(ds.item_ids) == ["x", "y"] and ds.X.nnz == 4


def test_a_field_of_spaces_is_empty_and_named_with_the_flag_that_skips_it():
    data = b"user,item,site\nu1,x,A\n   ,y,A\nu2,x,B\nu3,y,B\n"
    kw = dict(filename="t.csv", user_col="user", item_col="item", entity_col="site", value_kind="implicit")
    with pytest.raises(DataError, match=r"data row 2 \(line 3\): column 'user' is empty.*drop_missing") as exc:
        load_long_table(io.BytesIO(data), **kw)
    assert exc.value.param == "drop_missing"
    assert "Every row needs a value in its user column;" in str(exc.value)
    ds = load_long_table(io.BytesIO(data), **kw, drop_missing=True)
    assert list(ds.user_ids) == ["u1", "u2", "u3"] and ds.X.nnz == 3
    # a table given as a frame (an upload joined in memory, Parquet) keeps the spaces the CSV reader drops
    frame = pd.DataFrame({"user": ["u1", "   ", "u2", "u3"], "item": ["x", "y", "x", "y"], "site": list("AABB")})
    with pytest.raises(DataError, match=r"column 'user' is empty.*drop_missing"):
        load_long_table(frame, **kw)


def test_an_entity_lists_unrecognised_header_line_is_named_in_the_note_of_entities_without_users():
    data = b"user,item,office\nu1,x,A\nu2,y,A\nu3,x,B\nu4,y,B\n"
    kw = dict(filename="t.csv", user_col="user", item_col="item", entity_col="office", value_kind="implicit")
    ds = load_long_table(io.BytesIO(data), **kw, entities=["branch", "A", "B"])
    note = next(n for n in ds.notes if "have no user" in n)
    assert "the list's first line 'branch' is one of them: if it is a header, remove it" in note
    # an entity with no user that is not the first line is no header: no such hint
    ds = load_long_table(io.BytesIO(data), **kw, entities=["A", "B", "C"])
    assert "first line" not in next(n for n in ds.notes if "have no user" in n)


def test_a_missing_number_in_the_value_column_is_missing_and_an_id_spelt_na_is_an_id():
    data = b"user,item,value,site\nu1,x,3,A\nu2,y,NaN,A\nNA,x,2,B\nu3,y, null ,B\nu4,x,4,B\n"
    kw = dict(filename="t.csv", user_col="user", item_col="item", value_col="value", entity_col="site",
              value_kind="ratings", value_max=5.0)
    with pytest.raises(DataError, match=r"data row 2 \(line 3\): column 'value' holds 'NaN', a missing number "
                                        r"\(and in 1 more rows\).*drop_missing") as exc:
        load_long_table(io.BytesIO(data), **kw)
    assert exc.value.param == "drop_missing"
    ds = load_long_table(io.BytesIO(data), **kw, drop_missing=True)
    assert list(ds.user_ids) == ["u1", "NA", "u4"] and ds.X.nnz == 3
    assert any("dropped 2 rows" in n and "missing number" in n for n in ds.notes), ds.notes


def test_a_cell_is_missing_by_its_own_value_whether_told_once_per_value_or_per_row():
    """The missing-cell rule is decided once per distinct value and read back by each row: every row gets
    the answer of the rule applied to it alone, in a column of objects, of text or of categories."""
    import re

    import numpy as np

    from dpfed_core.data.long_table import MISSING_NUMBER_WORDS
    from dpfed_core.data.tables import _ONLY_INVISIBLE, _is_missing

    texts = ["u1", "", " ", "\u200b", " \ufeff\u200b ", "\u200b x", "Zürich", "\u00a0", "NA", "nan", " NaN ", "u1"]
    rows = [*texts, None, np.nan, 1, 1.0, True, 0, "0"] * 40

    def alone(v, words) -> bool:
        if v is None or (isinstance(v, float) and np.isnan(v)):
            return True
        t = str(v).strip()
        return t == "" or re.fullmatch(_ONLY_INVISIBLE, t) is not None or t.lower() in words

    text_rows = [*texts, None] * 40
    for words in (frozenset(), MISSING_NUMBER_WORDS):
        for values, dtypes in ((rows, (object, "category")), (text_rows, (object, "str", "category"))):
            want = [alone(v, words) for v in values]
            for dtype in dtypes:
                got = _is_missing(pd.Series(values, dtype=dtype, index=range(5, 5 + len(values))), words)
                assert got.tolist() == want and list(got.index) == list(range(5, 5 + len(values))), (dtype, words)


def test_whole_number_ids_of_a_parquet_float_column_match_the_declared_list(tmp_path):
    p = tmp_path / "t.parquet"
    pd.DataFrame({"user": [1.0, 2.0, 3.0, 4.0], "item": [10.0, 20.0, 10.0, 20.0],
                  "site": ["A", "A", "B", "B"]}).to_parquet(p)
    ds = load_long_table(p, user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                         items=["10", "20"])
    assert list(ds.user_ids) == ["1", "2", "3", "4"] and list(ds.item_ids) == ["10", "20"] and ds.X.nnz == 4
    # one fractional id in the column renames none of the others
    pd.DataFrame({"user": [1.0, 2.0, 3.0, 4.0], "item": [10.0, 20.0, 10.0, 0.5],
                  "site": ["A", "A", "B", "B"]}).to_parquet(p)
    ds = load_long_table(p, user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                         items=["10", "20"])
    assert list(ds.item_ids) == ["10", "20", "0.5"] and ds.n_declared == 2 and ds.X.nnz == 4


def test_a_parquet_column_pandas_stored_as_its_index_is_a_column_on_both_front_ends(tmp_path):
    """A frame written after set_index('user') keeps 'user' as a column of the file; the reader restores
    it as the index, which must not make the column the user names missing (path and upload alike)."""
    df = pd.DataFrame({"user": ["u1", "u2", "u3", "u4"], "item": ["a", "b", "a", "b"],
                       "site": ["A", "A", "B", "B"]})
    opts = dict(user_col="user", item_col="item", entity_col="site", value_kind="implicit", entities_from_data=True)
    for index in (["user"], ["user", "site"]):
        p = tmp_path / "t.parquet"
        df.set_index(index).to_parquet(p)
        for ds in (load_long_table(p, **opts), load_long_table(p.read_bytes(), filename="t.parquet", **opts)):
            assert list(ds.user_ids) == ["u1", "u2", "u3", "u4"] and list(ds.item_ids) == ["a", "b"]
            assert list(ds.entity_names) == ["A", "B"] and ds.X.nnz == 4
        cols = upload.upload_columns(p.read_bytes(), "t.parquet", min_columns=3)
        assert set(cols.columns) == {"user", "item", "site"}


def test_a_header_name_written_another_way_that_displays_the_same_is_the_column_named(tmp_path):
    """A header's 'Hôpital' with a decomposed accent, or 'user ' with a trailing space, cannot be typed as the
    file writes it: the name as it displays finds it (text and Parquet, path and upload), and a name two
    columns share that way is still refused as missing."""
    site = "Ho\u0302pital"
    text = f"user ,item,{site}\nu1,a,A\nu2,b,A\nu3,a,B\nu4,b,B\n"
    opts = dict(user_col="user", item_col="item", entity_col="H\u00f4pital", value_kind="implicit",
                entities_from_data=True)
    (tmp_path / "t.csv").write_text(text, encoding="utf-8")
    pd.read_csv(io.StringIO(text), dtype=str).to_parquet(tmp_path / "t.parquet")
    for name in ("t.csv", "t.parquet"):
        p = tmp_path / name
        for ds in (load_long_table(p, **opts), load_long_table(p.read_bytes(), filename=name, **opts)):
            assert list(ds.user_ids) == ["u1", "u2", "u3", "u4"] and list(ds.entity_names) == ["A", "B"]
            assert ds.X.nnz == 4
    (tmp_path / "two.csv").write_text(f"user ,user\u200b,item,{site}\nu1,x,a,A\nu2,x,b,B\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"has no column 'user' \(user column, user_col\)"):
        load_long_table(tmp_path / "two.csv", **opts)


def test_fields_in_quotes_after_a_comma_and_a_space_are_read_without_their_quotes(tmp_path):
    """'"u1", "Zürich, Nord", 4': each field after ', ' is in quotes, so its quotes (and the comma they hold)
    are no part of the id, the column name or the number, as in a file written without the spaces."""
    text = ('"user", "item", "rating", "site"\n"u1", "a", 4, "Zürich, Nord"\n"u2", "b", 5, "Zürich, Nord"\n'
            '"u3", "a", 3, "Bern"\n"u4", "b", 2, "Bern"\n')
    (tmp_path / "t.csv").write_text(text, encoding="utf-8")
    tight = tmp_path / "tight.csv"
    tight.write_text(text.replace(", ", ","), encoding="utf-8")
    opts = dict(user_col="user", item_col="item", value_col="rating", entity_col="site", entities_from_data=True)
    ds, want = load_long_table(tmp_path / "t.csv", **opts), load_long_table(tight, **opts)
    assert list(ds.entity_names) == ["Bern", "Zürich, Nord"] and list(ds.item_ids) == ["a", "b"]
    assert list(ds.user_ids) == list(want.user_ids) and (ds.X != want.X).nnz == 0 and ds.X.sum() == 14


def test_parquet_columns_of_other_types_are_read_or_named_with_the_flag_that_fixes_them(tmp_path):
    """Parquet types a CSV cannot hold: whole floats beyond int64 keep their own text (never one wrapped
    id for all), booleans are 0/1 values, and a column of lists, records or bytes that are no text, or a
    name given to two columns, is one error naming the column and what to do — never a reader's error."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    p = tmp_path / "t.parquet"
    opts = dict(user_col="user", item_col="item", value_col="seen", entity_col="site", value_kind="implicit",
                entities_from_data=True)
    base = dict(user=pa.array([1e20, 2e20, 3e20, 4e20]), item=pa.array(["a", "b", "a", "b"]),
                seen=pa.array([True, True, False, True]), site=pa.array(["A", "A", "B", "B"]))
    pq.write_table(pa.table(base), p)
    ds = load_long_table(p, **opts)
    assert list(ds.user_ids) == ["1e+20", "2e+20", "4e+20"] and ds.X.nnz == 3
    assert any("dropped 1 of 4 rows with value 0" in n for n in ds.notes), ds.notes
    for item, held in (([["a"], ["b"], ["a"], ["b"]], "a list"), ([{"k": 1}] * 4, "a mapping (a nested record)"),
                       ([b"\xff\xfea", b"b", b"a", b"b"], "bytes that are not UTF-8 text (b'\\xff\\xfea')")):
        pq.write_table(pa.table({**base, "item": pa.array(item)}), p)
        for src, name in ((p, str(p)), (p.read_bytes(), "t.parquet")):
            with pytest.raises(DataError) as e:
                load_long_table(src, filename=None if src is p else name, **opts)
            assert str(e.value) == (f"{name}, row with index 0: column 'item' holds {held}, not one value a row as the "
                                    "item column needs: take it from another column (item_col), or write the column "
                                    "as plain text or numbers") and e.value.param == "item_col"
    pq.write_table(pa.table(list(base.values()) + [base["site"]], names=[*base, "site"]), p)
    with pytest.raises(DataError) as e:
        load_long_table(p, **opts)
    assert str(e.value) == (f"{p} names 2 columns 'site' (columns 4, 5), so which one is meant is ambiguous and the "
                            "file cannot be read by column name; give each column its own name and write the file "
                            "again")


def test_rows_of_items_outside_a_declared_catalogue_stay_their_entities_own_after_the_catalogue():
    """The catalogue decides what is shared, not what a site knows: the declared items are the first
    columns in the catalogue's order, the data's other items follow (natural order, named by the data),
    no row is dropped, and the note says how much of the table that is and that it is never shared."""
    df = pd.DataFrame({"user": ["u1", "u1", "u2", "u2", "u3", "u3", "u4", "u4", "u4"],
                       "item": ["a", "b", "a", "z", "b", "a", "a", "b", "10"],
                       "name": ["A", "B", "A", "Zed", "B", "A", "A", "B", "Ten"],
                       "site": ["A", "A", "A", "A", "B", "B", "B", "B", "B"]})
    ds = load_long_table(df, user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                         item_name_col="name", items=["b", "a", "c"])
    assert list(ds.item_ids) == ["b", "a", "c", "10", "z"] and ds.X.nnz == 9
    assert ds.n_declared == 3 and list(ds.shared_columns) == [0, 1, 2] and ds.item_source == "declared"
    assert list(ds.item_names[3:]) == ["Ten", "Zed"]
    (note,) = [n for n in ds.notes if "not in the declared item catalogue" in n]
    assert note.startswith("kept 2 rows (22 % of the table) of 2 items not in the declared item catalogue "
                           "('z', '10') as their entities' own items: never shared (every message is shaped by "
                           "the declared catalogue)")
    assert any(n.startswith("1 of the 3 declared items have no row") for n in ds.notes)
    assert ds.items_phrase() == "5 items (3 declared and shared, 2 the entities' own)"
    # a catalogue that covers the data: every column declared, nothing outside
    whole = load_long_table(df, user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                            items=["a", "b", "z", "10"])
    assert whole.n_declared is None and whole.shared_columns is None and whole.items_phrase() == "4 items"


def test_item_names_longer_than_their_ids_are_kept_whole_with_a_declared_catalogue():
    df = pd.DataFrame({"user": ["1", "2", "3", "4"], "item": ["1", "2", "1", "2"],
                       "name": ["aspirin", "heparin", "aspirin", "heparin"], "site": ["A", "A", "B", "B"]})
    ds = load_long_table(df, user_col="user", item_col="item", item_name_col="name", entity_col="site",
                         value_kind="implicit", items=["1", "2"])
    assert list(ds.item_names) == ["aspirin", "heparin"]


def test_a_share_under_one_percent_is_not_rounded_to_zero():
    from dpfed_core.data.long_table import _share

    assert (_share(1, 8), _share(1, 1000), _share(0, 5), _share(5, 5)) == ("12 %", "< 1 %", "0 %", "100 %")


def test_a_catalogue_that_names_no_item_of_the_data_shows_both_sides_and_the_likely_mix_up():
    """Nothing in common: the error quotes the catalogue's first ids and the data's first items; a table
    of ids and titles (u.item) against data that names its items says the item column must hold the ids."""
    df = pd.DataFrame({"user": ["u1", "u1", "u2", "u2"], "item": ["apple", "pear", "apple", "fig"],
                       "site": ["A", "A", "B", "B"]})
    kw = dict(user_col="user", item_col="item", entity_col="site", value_kind="implicit")
    with pytest.raises(DataError) as exc:
        load_long_table(df, **kw, items=(["1", "2", "3", "4"], ["apple", "pear", "fig", "kiwi"]))
    msg = str(exc.value)
    assert exc.value.param == "items"
    assert "its ids: '1', '2', '3' …; the data's items: 'apple', 'pear', 'fig')" in msg
    assert "read as a table of ids and titles ('apple', 'pear', 'fig' … are its titles)" in msg
    with pytest.raises(DataError) as exc:
        load_long_table(df, **kw, items=["x", "y"])
    assert "(its ids: 'x', 'y'; the data's items: 'apple', 'pear', 'fig'); check the items file" in str(exc.value)
    with pytest.raises(DataError) as exc:  # u.item-like lines whose ids are not whole numbers: taken whole
        load_long_table(df, **kw, items=[f"m{j}|Film {j} (1995)|01-Jan-1995||http://x|0|1" for j in range(3)])
    assert "an `id|title|…` table is read as ids and titles only when every line's first field is a " \
           "whole-number id" in str(exc.value)


def test_a_header_less_table_without_its_columns_named_is_told_its_first_line_is_data(tmp_path):
    from dpfed_core.data.loaders import load_data
    from dpfed_core.errors import ConfigError

    path = tmp_path / "u.data"
    path.write_text("196\t242\t3\t881250949\n186\t302\t3\t891717742\n")
    with pytest.raises(ConfigError, match="first line looks like data, not a header: give --no-header") as exc:
        load_data(path)
    assert exc.value.param == "user_col"
    named = tmp_path / "t.csv"
    named.write_text("user,item\n1,2\n")
    with pytest.raises(ConfigError) as exc:
        load_data(named)
    assert "first line" not in str(exc.value)


def test_the_cli_reads_a_header_less_file_as_the_data_page_does_its_first_line_as_written(tmp_path, capsys):
    """``--no-header`` names the columns as the Data page does, keeps every cell of the first line as
    written (as a header, a repeated cell became '1.1', a blank one 'Unnamed: 1'), and numbers lines
    from the first."""
    from dpfed_core.cli.main import main
    from dpfed_core.data.loaders import load_data
    from dpfed_core.data.upload import read_upload

    body = "1,1,5,A\n1,2,3,A\n2,1,4,B\n3,2,,B\n"
    bare, named = tmp_path / "t.csv", tmp_path / "named.csv"
    bare.write_text(body)
    named.write_text("column 1,column 2,column 3,column 4\n" + body)
    cols = dict(user_col="column 1", item_col="column 2", value_col="column 3", entity_col="column 4",
                value_kind="ratings", entities_from_data=True, drop_missing=True)
    got, want = load_data(bare, no_header=True, **cols), load_data(named, **cols)
    assert got.X.shape == want.X.shape == (2, 2) and (got.X != want.X).nnz == 0  # user 3: its one row dropped
    assert list(got.item_ids) == list(want.item_ids) == ["1", "2"]  # the first line's '1' twice, as written
    page, first_is_data = read_upload(body.encode(), "t.csv")
    assert first_is_data and page.iloc[0].tolist() == ["1", "1", "5", "A"]
    with pytest.raises(DataError, match=r"data row 4 \(line 4\): column 'column 3'"):  # no header line before it
        load_data(bare, no_header=True, **{**cols, "drop_missing": False})
    argv = ["run", "--data", str(bare), "--no-header", "--user-col", "column 1", "--item-col", "column 2",
            "--value-col", "column 3", "--entity-col", "column 4", "--value-kind", "ratings",
            "--entities-from-data", "--drop-missing", "--method", "popularity", "--rank", "1", "--dry-run"]
    assert main(argv) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main([a for a in argv if a != "--no-header"]) == 2  # the first line read as a header
    assert "no column 'column 1'" in capsys.readouterr().err.replace('"', "'")


def test_a_row_after_a_quoted_field_holding_a_line_break_is_named_by_its_own_line(tmp_path):
    """A quoted field may hold a line break: the record then spans two lines, and the rows after it
    are on a later line than their record number says."""
    import gzip

    from dpfed_core.data.loaders import load_data

    cols = dict(user_col="user", item_col="item", value_col="rating", entity_col="site", entities_from_data=True)
    body = 'u1,"Aspirin\n81 mg",5,A\nu2,c,4,A\n\nu3,d,x,A\n'
    plain, packed = tmp_path / "t.csv", tmp_path / "t.csv.gz"
    plain.write_text("user,item,rating,site\n" + body)
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    for path in (plain, packed):
        with pytest.raises(DataError, match=r"data row 4 \(line 6\): column 'rating' holds 'x'"):
            load_data(path, **cols)
    bare = tmp_path / "bare.csv"
    bare.write_text(body)
    with pytest.raises(DataError, match=r"data row 4 \(line 5\): column 'column 3' holds 'x'"):
        load_data(bare, no_header=True, **{**cols, "user_col": "column 1", "item_col": "column 2",
                                             "value_col": "column 3", "entity_col": "column 4",
                                             "value_kind": "ratings"})
    plain.write_text("user,item,rating,site\nu1,a,5,A\n\nu3,d,x,A\n")  # no break inside a field
    with pytest.raises(DataError, match=r"data row 3 \(line 4\)"):
        load_data(plain, **cols)


def test_a_header_less_reading_that_does_not_fit_the_file_says_which_way_to_turn(tmp_path):
    """A header read as data, data read as a header, a Parquet file given --no-header: each error says
    which reading to use."""
    import pandas as pd

    from dpfed_core.data.loaders import load_data

    named = tmp_path / "t.csv"
    named.write_text("user,item,rating,site\nu1,a,5,A\nu2,b,4,A\n")
    bare = dict(user_col="column 1", item_col="column 2", value_col="column 3", entity_col="column 4",
                value_kind="ratings", entities_from_data=True)
    with pytest.raises(DataError, match=r"line 1\): column 'column 3' holds 'rating' .* first line looks like a "
                                        r"header, and this file was read without one: leave out --no-header"):
        load_data(named, no_header=True, **bare)
    data_first = tmp_path / "d.csv"
    data_first.write_text("1,10,5,A\n2,11,4,A\n")
    with pytest.raises(DataError, match=r"has no column 'column 1' .* Its first line looks like data, not a "
                                        r"header: give --no-header") as exc:
        load_data(data_first, **bare)
    assert "?." not in str(exc.value)
    implicit = tmp_path / "i.csv"  # no value column to trip on: the id columns name the header
    implicit.write_text("user,item,site\n1,10,A\n2,11,A\n3,10,B\n")
    ids = dict(user_col="column 1", item_col="column 2", entity_col="column 3", value_kind="implicit",
               entities_from_data=True)
    with pytest.raises(DataError, match=r"line 1\) holds 'user', 'item' where the rest of their columns hold "
                                        r"numbers: the first line looks like a header.*leave out --no-header"):
        load_data(implicit, no_header=True, **ids)
    words = tmp_path / "w.csv"  # ids that are words throughout: nothing to tell a header by, read as written
    words.write_text("ann,tea,A\nbob,tea,A\ncid,jam,B\n")
    assert load_data(words, no_header=True, **ids).n_users == 3
    short_first = tmp_path / "s.csv"  # sized by its first line, the file's longer line is the one named
    short_first.write_text("1,10,A\n2,11,A,4\n")
    with pytest.raises(DataError, match=r"Expected 3 fields in line 2, saw 4\). Every line must have as many "
                                        r"fields as the first data line"):
        load_data(short_first, no_header=True, **bare)
    pq = tmp_path / "t.parquet"
    pd.read_csv(named).to_parquet(pq)
    with pytest.raises(DataError, match="Parquet file, which names its columns itself") as exc:
        load_data(pq, no_header=True, **bare)
    assert exc.value.param == "no_header"


@pytest.mark.parametrize("lead", ["sep=,\n", "\n\n", "\nsep=,\n"])
def test_a_header_read_as_data_is_named_after_a_sep_line_or_blank_lines(tmp_path, lead):
    """Lines skipped before the first row (an export's ``sep=`` line, blank lines) do not hide that the
    first row read header-less is the header: the value check and the ids' check both say so, and the
    line they name is the header's own."""
    from dpfed_core.data.loaders import load_data

    line = lead.count("\n") + 1
    named = tmp_path / "t.csv"
    named.write_text(lead + "user,item,rating,site\nu1,a,5,A\nu2,b,4,A\n")
    bare = dict(user_col="column 1", item_col="column 2", value_col="column 3", entity_col="column 4",
                value_kind="ratings", entities_from_data=True)
    with pytest.raises(DataError, match=rf"line {line}\): column 'column 3' holds 'rating' .* first line looks like a "
                                        r"header, and this file was read without one: leave out --no-header") as exc:
        load_data(named, no_header=True, **bare)
    implicit = tmp_path / "i.csv"
    implicit.write_text(lead + "user,item,site\n1,10,A\n2,11,A\n3,10,B\n")
    ids = dict(user_col="column 1", item_col="column 2", entity_col="column 3", value_kind="implicit",
               entities_from_data=True)
    with pytest.raises(DataError, match=rf"line {line}\) holds 'user', 'item' where the rest of their columns hold "
                                        r"numbers: the first line looks like a header.*leave out --no-header") as exc:
        load_data(implicit, no_header=True, **ids)
    assert exc.value.param == "no_header"


def test_a_workbook_or_an_archive_given_as_a_list_is_named_as_such(tmp_path):
    import zipfile

    from dpfed_core.data.inputs import decode_text

    book = tmp_path / "formulary.xlsx"
    with zipfile.ZipFile(book, "w") as z:
        z.writestr("xl/workbook.xml", "<workbook/>")
        z.writestr("xl/worksheets/sheet1.xml", "<sheet/>")
    old = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600
    for raw in (book.read_bytes(), old):
        with pytest.raises(DataError, match="--items: is an Excel workbook, not a text list: save the sheet as CSV"):
            decode_text(raw, what="--items:", param="items")
    archive = tmp_path / "lists.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("items.txt", "a\nb\n")
    with pytest.raises(DataError, match="is a ZIP archive, not a text list: unzip it"):
        decode_text(archive.read_bytes(), what="--items:", param="items")


def test_a_column_named_in_another_case_is_suggested_before_a_look_alike():
    from dpfed_core.data.long_table import load_long_table

    df = pd.DataFrame({"User": ["a", "b"], "Item": ["x", "y"], "Site": ["A", "B"]})
    with pytest.raises(DataError, match=r"no column 'item' .* did you mean 'Item'\?"):
        load_long_table(df, user_col="User", item_col="item", entity_col="Site", value_kind="implicit",
                        entities_from_data=True)


def test_an_infinite_value_is_quoted_as_written_and_names_the_value_column():
    from dpfed_core.data.long_table import load_long_table

    df = pd.DataFrame({"u": ["a", "b", "c"], "i": ["x", "y", "z"], "v": [1.0, float("inf"), 2.0], "e": ["A", "B", "A"]})
    with pytest.raises(DataError, match=r"infinite value inf; .*\(value_col\)") as err:
        load_long_table(df, user_col="u", item_col="i", value_col="v", entity_col="e", value_max=5,
                        value_kind="ratings", entities_from_data=True)
    assert "np.float64" not in str(err.value) and err.value.param == "value_col"


def test_an_option_a_source_does_not_take_is_named_with_the_flags_it_does(tmp_path, capsys):
    """The CLI names the options a source takes by their flags and leaves out the loader's
    Python-only parameters (a sample's folder), which no flag sets."""
    from dpfed_core.cli import main
    from dpfed_core.data.loaders import load_data
    from dpfed_core.errors import OptionError

    assert main(["run", "--data", "sample:clinic", "--no-header", "--simulation", "--dry-run"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err == ("error: option --no-header does not apply to sample data: leave it out; accepted: --entities, "
                   "--exclude-entities, --federation, --item-features, --items"), err
    with pytest.raises(OptionError, match=r"options no_header, sep do not apply to sample data: leave them out; "
                                          r"accepted: .*items, sample_dir") as exc:
        load_data("sample:clinic", no_header=True, sep=",")
    assert exc.value.param == "no_header"


def test_a_choice_a_transform_and_a_release_limit_are_refused_in_the_words_of_the_flags(tmp_path, capsys):
    from dpfed_core.cli import main
    from dpfed_core.data.long_table import derive_entity
    from dpfed_core.errors import ConfigError

    assert main(["run", "--data", "sample:clinic", "--param", "round2_default=xx", "--simulation", "--dry-run"]) == 2
    assert "parameter round2_default must be one of shrunk, alone, got 'xx'" in capsys.readouterr().err
    with pytest.raises(ConfigError, match=r"unknown entity transform 'prefix:0' \(entity_transform\); accepted: "
                                          r"\"first_char\", .* or none \(the value itself\)") as exc:
        derive_entity(pd.Series(["10"]), "prefix:0")
    assert exc.value.param == "entity_transform"
    assert main(["budget", "releases", "--data", "sample:clinic", "--limit", "0", "--store", str(tmp_path / "s")]) == 2
    assert "--limit: expected a whole number ≥ 1, got '0'" in capsys.readouterr().err
    # a name or a parameter given twice is a mistyped list, never run twice or overridden without a word
    assert main(["run", "--data", "sample:clinic", "--compare", "local,local", "--simulation", "--dry-run"]) == 2
    assert "'local' given more than once in 'local,local'" in capsys.readouterr().err
    assert main(["run", "--data", "sample:clinic", "--param", "max_items=20", "--param", "max_items=30",
                 "--simulation", "--dry-run"]) == 2
    assert "--param max_items is given more than once" in capsys.readouterr().err


def test_ids_of_a_dataframe_lose_only_their_outer_spaces():
    # columns of Python objects (a frame built by hand, or mixing numbers with text), not pandas' text type
    frame = pd.DataFrame({"user": pd.Series([" u1", "u1 ", "u2", "u 3"], dtype=object),
                          "item": pd.Series(["i1", "i2", " i1", "i2"], dtype=object), "site": ["A", "A", "B", "B"]})
    ds = load_long_table(frame, user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                         entities_from_data=True)
    assert sorted(ds.user_ids) == ["u 3", "u1", "u2"] and ds.n_items == 2 and ds.X.nnz == 4


def test_a_missing_row_gets_the_missing_mark_never_another_values_answer():
    from dpfed_core.data.tables import per_value

    s = pd.Series(["a", None, "b", "a"])
    for column in (s, s.astype("category")):
        assert per_value(column, lambda v: v.str.upper().to_numpy(object), missing="?").tolist() == ["A", "?", "B", "A"]


def test_a_missing_column_is_named_with_the_option_that_names_it():
    data = b"user,item,site\nu1,i1,A\nu2,i2,B\n"
    kw = dict(filename="t.csv", user_col="user", item_col="item", entity_col="site", value_kind="implicit")
    for option, name in (("user_col", "usr"), ("item_col", "Item"), ("entity_col", "hospital")):
        with pytest.raises(DataError, match=f"t.csv has no column '{name}'") as err:
            load_long_table(io.BytesIO(data), **{**kw, option: name})
        assert err.value.param == option


def test_the_encoding_is_decided_on_the_whole_file_not_on_its_first_block(tmp_path):
    """A stray byte in the first 4 MiB and UTF-8 accents only after them: UTF-8 text with a damaged byte, an
    error naming it, never a single-byte reading that garbles every accent."""
    from dpfed_core.data.tables import read_table

    pad = "x" * 90
    head = "user,item,site\nu1,caf\xe9,A\n".encode("latin-1")
    body = "".join(f"u{k},i{k % 50}{pad},A\n" for k in range(50_000)).encode()  # ~5 MB of ASCII
    path = tmp_path / "t.csv"
    path.write_bytes(head + body + "u9,Zürich,B\n".encode("utf-8"))
    with pytest.raises(DataError, match=r"is UTF-8 text with an invalid byte near byte 21") as err:
        read_table(path)
    assert err.value.param == "encoding"


@pytest.mark.parametrize("lead, sep", [("sep=;\n", ";"), ("\n\n", ",")])
def test_a_header_less_file_after_a_separator_hint_or_blank_lines_keeps_its_first_row(tmp_path, lead, sep):
    """--no-header on a file that opens with a spreadsheet's 'sep=;' line or blank lines: the first data
    row is a row (not lost, not a header), the hinted separator splits the fields, and a line with an
    extra field is named by its line in the file and measured against the first data line — not the
    hint or a blank line, which have one field."""
    rows = ["1", "10", "2", "h0"], ["2", "20", "3", "h1"], ["3", "10", "1", "h0"]
    good = tmp_path / "g.csv"
    good.write_text(lead + "".join(sep.join(r) + "\n" for r in rows))
    cols = dict(user_col="column 1", item_col="column 2", value_col="column 3", entity_col="column 4",
                value_kind="counts", value_max=5, entities_from_data=True)
    ds = load_data(good, no_header=True, **cols)
    assert ds.n_users == 3 and ds.n_items == 2 and float(ds.X.sum()) == 6.0
    assert sorted(ds.entity_names) == ["h0", "h1"]
    bad = tmp_path / "b.csv"
    bad.write_text(lead + "".join(sep.join(r) + "\n" for r in rows) + sep.join(["4", "30", "2", "h1", "9"]) + "\n")
    line = lead.count("\n") + len(rows) + 1
    with pytest.raises(DataError, match=rf"Expected 4 fields in line {line}, saw 5\). Every line must have as many "
                                        r"fields as the first data line \(separator '" + re.escape(sep)):
        load_data(bad, no_header=True, **cols)


def test_a_header_of_words_read_without_one_is_refused_where_ids_are_words_too(tmp_path):
    """An event log whose ids are words has no column of numbers to tell its header by: read with
    --no-header, the header was a user 'user' holding an item 'item' in a made-up entity 'site'. A first
    row whose user, item and entity each appear in no other row is that header; the same file read with
    its header loads, and a first row sharing any of them with another row is data."""
    text = "user,item,site\nann,tea,A\nbob,tea,A\ncid,jam,B\ndan,jam,B\n"
    path = tmp_path / "log.csv"
    path.write_text(text)
    ids = dict(user_col="column 1", item_col="column 2", entity_col="column 3", value_kind="implicit",
               entities_from_data=True)
    with pytest.raises(DataError, match=r"data row 1 \(line 1\) holds 'user', 'item', 'site', each in no other row "
                                        r".*first line looks like a header.*leave out --no-header") as exc:
        load_data(path, no_header=True, **ids)
    assert exc.value.param == "no_header"
    named = load_data(path, user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                      entities_from_data=True)
    assert (named.n_users, named.n_items, named.n_entities) == (4, 2, 2)
    data_first = tmp_path / "data.csv"  # the first row's entity has other rows: data, kept
    data_first.write_text("eve,rum,A\n" + text.split("\n", 1)[1])
    ds = load_data(data_first, no_header=True, **ids)
    assert (ds.n_users, ds.n_items, ds.n_entities) == (5, 3, 2)
