"""A long table's rows as the loader keeps, merges, drops and numbers them: the same table written
another way (separator, line ends, byte-order mark, column order, read in chunks) is the same dataset;
repeated rows merge by their kind's rule and the notes count them right; every row an error names is
the file's own line; the item and entity lists keep every declared name and say what they miss."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpfed_core.data import tables
from dpfed_core.data.long_table import load_long_table
from dpfed_core.errors import ConfigError, DataError

COLUMNS = ("user", "item", "rating", "site")
RATINGS = dict(user_col="user", item_col="item", value_col="rating", entity_col="site", value_kind="ratings",
               value_max=5, entities_from_data=True)


def _rows() -> list[tuple[str, str, str, str]]:
    """Three sites of 12 users, each rating six of 15 items 1–5 (a fixed draw)."""
    rng = np.random.default_rng(7)
    out = []
    for e in range(3):
        for u in range(12):
            for i in rng.choice(15, size=6, replace=False):
                out.append((f"p{e * 12 + u}", f"d{i + 1}", str(int(rng.integers(1, 6))), f"h{e}"))
    return out


def _csv(rows, columns=COLUMNS, sep=",", eol="\n") -> bytes:
    return (sep.join(columns) + eol + "".join(sep.join(r) + eol for r in rows)).encode()


def _same(a, b) -> bool:
    return (list(a.user_ids) == list(b.user_ids) and list(a.item_ids) == list(b.item_ids)
            and list(np.asarray(a.entity_names)[a.entity_of_user]) == list(np.asarray(b.entity_names)[b.entity_of_user])
            and (a.X != b.X).nnz == 0 and a.notes == b.notes)


def test_the_same_table_is_the_same_dataset_whatever_its_separator_line_ends_mark_or_column_order():
    rows = _rows()
    clean = load_long_table(_csv(rows), filename="t.csv", **RATINGS)
    assert (clean.n_users, clean.n_entities, clean.X.nnz) == (36, 3, len(rows))
    order = (3, 1, 0, 2)
    variants = {
        "semicolons": _csv(rows, sep=";"), "tabs": _csv(rows, sep="\t"), "pipes": _csv(rows, sep="|"),
        "crlf": _csv(rows, eol="\r\n"), "bom": b"\xef\xbb\xbf" + _csv(rows),
        "reordered": _csv([tuple(r[k] for k in order) for r in rows], [COLUMNS[k] for k in order]),
    }
    for what, data in variants.items():
        assert _same(load_long_table(data, filename="t.csv", **RATINGS), clean), what


def test_a_table_read_in_chunks_is_the_table_read_whole(monkeypatch):
    """A large table is read a chunk of lines at a time, its ids coded as they come: a chunk of three
    lines gives the dataset of the rows read at once."""
    rows = _rows()
    whole = load_long_table(pd.DataFrame(rows, columns=COLUMNS), **RATINGS)
    monkeypatch.setattr(tables, "TEXT_CHUNK_ROWS", 3)
    chunked = load_long_table(_csv(rows), filename="t.csv", **RATINGS)
    assert list(chunked.user_ids) == list(whole.user_ids) and list(chunked.item_ids) == list(whole.item_ids)
    assert (chunked.X != whole.X).nnz == 0 and chunked.X.nnz == len(rows)


def test_an_error_names_the_files_own_line_with_a_header_without_one_and_after_blank_lines(tmp_path):
    rows = _rows()
    bad = [*rows[:5], (rows[5][0], rows[5][1], "x", rows[5][3]), *rows[6:]]
    with pytest.raises(DataError, match=r"t\.csv, data row 6 \(line 7\): column 'rating' holds 'x'"):
        load_long_table(_csv(bad), filename="t.csv", **RATINGS)
    with pytest.raises(DataError, match=r"t\.csv, data row 6 \(line 9\): column 'rating' holds 'x'"):
        load_long_table(b"\n\n" + _csv(bad), filename="t.csv", **RATINGS)
    bare = dict(RATINGS, user_col="column 1", item_col="column 2", value_col="column 3", entity_col="column 4")
    with pytest.raises(DataError, match=r"t\.csv, data row 6 \(line 6\): column 'column 3' holds 'x'"):
        load_long_table(_csv(bad).split(b"\n", 1)[1], filename="t.csv", header=False, **bare)


def test_a_row_with_one_empty_field_is_refused_not_dropped_and_drop_missing_counts_rows_not_cells():
    rows = _rows()
    holes = [("p0", "", "", "h0"), ("p1", "d3", "", "h0"), *rows]
    with pytest.raises(DataError, match=r"data row 1 \(line 2\): column 'rating' is empty\. "):
        load_long_table(_csv([("p1", "d3", "", "h0"), *rows]), filename="t.csv", **RATINGS)
    with pytest.raises(DataError, match=r"data row 1 \(line 2\): column 'item' is empty \(and in 1 more rows\)"):
        load_long_table(_csv([("p1", "", "3", "h0"), ("p2", "", "4", "h0"), *rows]), filename="t.csv", **RATINGS)
    ds = load_long_table(_csv(holes), filename="t.csv", drop_missing=True, **RATINGS)
    assert any(n.startswith("dropped 2 rows with an empty value") for n in ds.notes), ds.notes
    assert ds.X.nnz == len(rows)
    nan = load_long_table(_csv([("p0", "d1", "NaN", "h0"), *rows]), filename="t.csv", drop_missing=True, **RATINGS)
    assert any(n.startswith("dropped 1 row with an empty value (or a missing number such as NaN)") for n in nan.notes)
    assert nan.X.nnz == len(rows)


def test_repeated_ratings_keep_the_last_in_file_order_and_the_note_counts_the_repeats():
    rows = [r for r in _rows() if not (r[0] == "p0" and r[1] == "d1")]
    twice = [("p0", "d1", "2", "h0"), *rows, ("p0", "d1", "4", "h0"), ("p0", "d1", "5", "h0")]
    ds = load_long_table(_csv(twice), filename="t.csv", **RATINGS)
    assert ds.X[list(ds.user_ids).index("p0"), list(ds.item_ids).index("d1")] == 5
    assert "merged 2 repeated (user, item) rows: keep the last" in ds.notes
    mean = load_long_table(_csv(twice), filename="t.csv", **{**RATINGS, "duplicates": "mean"})
    assert mean.X[list(mean.user_ids).index("p0"), list(mean.item_ids).index("d1")] == pytest.approx(11 / 3)
    with pytest.raises(DataError, match=r"data row 1 \(line 2\): user 'p0' has item 'd1' more than once "
                                        r"\(2 repeated rows\)") as exc:
        load_long_table(_csv(twice), filename="t.csv", **{**RATINGS, "duplicates": "error"})
    assert exc.value.param == "duplicates"
    with pytest.raises(ConfigError, match="duplicates='sum' adds repeated ratings up") as exc:
        load_long_table(_csv(twice), filename="t.csv", **{**RATINGS, "duplicates": "sum"})
    assert exc.value.param == "duplicates"


def test_an_event_log_without_a_value_column_adds_its_events_up_and_checks_the_sums_against_the_bound():
    log = [("a", "x", "A"), ("a", "x", "A"), ("a", "x", "A"), ("b", "x", "A"), ("b", "y", "A"), ("b", "y", "A"),
           ("c", "x", "B"), ("c", "y", "B")]
    opts = dict(user_col="user", item_col="item", entity_col="site", entities_from_data=True)
    ds = load_long_table(_csv(log, ("user", "item", "site")), filename="log.csv", value_max=2, **opts)
    assert ds.value_kind == "counts"
    assert ds.X[list(ds.user_ids).index("a"), list(ds.item_ids).index("x")] == 3
    assert ds.X[list(ds.user_ids).index("b"), list(ds.item_ids).index("y")] == 2
    assert any(n.startswith("1 (user, item) count (20.00%) exceeds the declared public bound 2 once repeated rows "
                            "are added up") for n in ds.notes), ds.notes
    at_bound = load_long_table(_csv(log[1:], ("user", "item", "site")), filename="log.csv", value_max=2, **opts)
    assert not any("once repeated rows are added up" in n for n in at_bound.notes), at_bound.notes


def test_one_negative_value_among_positive_ones_is_refused():
    rows = _rows()
    bad = [*rows[:3], (rows[3][0], rows[3][1], "-1", rows[3][3]), *rows[4:]]
    with pytest.raises(DataError, match=r"data row 4 \(line 5\): column 'rating' holds a negative value '-1' "
                                        r"\(1 negative row\)") as exc:
        load_long_table(_csv(bad), filename="t.csv", **RATINGS)
    assert exc.value.param == "value_col"


def test_a_table_of_one_entity_is_refused_and_a_declared_list_missing_most_of_the_table_says_so():
    rows = _rows()
    with pytest.raises(DataError, match=r"only one entity \('h0'\) — federation needs at least two") as exc:
        load_long_table(_csv([r for r in rows if r[3] == "h0"]), filename="t.csv", **RATINGS)
    assert exc.value.param == "entity_col"
    declared = {**RATINGS, "entities_from_data": False}
    most = load_long_table(_csv(rows), filename="t.csv", entities=["h0", "h9"], **declared)
    assert any("not in the declared entity list" in n and "most of the table" in n for n in most.notes), most.notes
    few = load_long_table(_csv(rows), filename="t.csv", entities=["h0", "h1"], **declared)
    assert any("not in the declared entity list" in n and "most of the table" not in n for n in few.notes), few.notes


def test_the_catalogue_note_counts_the_declared_items_without_a_row():
    rows = [r for r in _rows() if r[1] in ("d1", "d2", "d3", "d4")]
    ds = load_long_table(_csv(rows), filename="t.csv", items=["d1", "d2", "d20", "d21", "d22"], **RATINGS)
    assert "3 of the 5 declared items have no row in the data (empty columns)" in ds.notes, ds.notes
    assert list(ds.item_ids) == ["d1", "d2", "d20", "d21", "d22", "d3", "d4"]
    full = load_long_table(_csv(rows), filename="t.csv", items=["d1", "d2", "d3", "d4"], **RATINGS)
    assert not any("declared items have no row" in n for n in full.notes), full.notes


def test_ids_are_in_numeric_order_only_when_every_one_is_a_number():
    rows = [("u1", "10", "3", "A"), ("u1", "9", "4", "A"), ("u2", "a", "5", "B"), ("u2", "10", "2", "B")]
    mixed = load_long_table(_csv(rows), filename="t.csv", **RATINGS)
    assert list(mixed.item_ids) == ["10", "9", "a"]
    numbers = load_long_table(_csv([r for r in rows if r[1] != "a"] + [("u2", "9", "1", "B")]), filename="t.csv",
                              **RATINGS)
    assert list(numbers.item_ids) == ["9", "10"]


def test_users_are_in_natural_order_within_their_entity_whatever_the_rows_order():
    rng = np.random.default_rng(3)
    rows = [(str(k), f"i{k % 5}", "3", "AB"[k % 2]) for k in range(200)]
    shuffled = [rows[k] for k in rng.permutation(len(rows))]
    ds = load_long_table(_csv(shuffled), filename="t.csv", **RATINGS)
    for e, name in enumerate(ds.entity_names):
        ids = list(ds.user_ids[ds.entity_of_user == e])
        assert ids == sorted(ids, key=int), name
    assert list(ds.entity_names) == ["A", "B"]


def test_an_item_outside_a_titled_catalogue_takes_the_datas_name():
    rows = [("u1", "1", "3", "A"), ("u1", "2", "4", "A"), ("u2", "3", "5", "B"), ("u2", "4", "2", "B")]
    data = _csv([(*r, f"title {r[1]}") for r in rows], (*COLUMNS, "title"))
    ds = load_long_table(data, filename="t.csv", item_name_col="title", items=(["1", "2"], ["One", "Two"]),
                         **RATINGS)
    assert list(ds.item_ids) == ["1", "2", "3", "4"]
    assert list(ds.item_names) == ["One", "Two", "title 3", "title 4"]


def test_entity_keys_take_the_first_character_or_the_declared_prefix():
    rows = [("u1", "x", "3", "N12"), ("u2", "x", "4", "N34"), ("u3", "y", "5", "S10"), ("u4", "y", "2", "S99")]
    opts = {**RATINGS, "entity_col": None, "entity_from": "site"}
    first = load_long_table(_csv(rows), filename="t.csv", entity_transform="first_char", **opts)
    assert list(first.entity_names) == ["N", "S"]
    two = load_long_table(_csv(rows), filename="t.csv", entity_transform="prefix:2", **opts)
    assert list(two.entity_names) == ["N1", "N3", "S1", "S9"]


def test_a_header_naming_one_of_its_own_values_is_still_a_header():
    """A column may hold a value written like its name (an item called 'item'); two such names are a first
    line of data."""
    rows = [("u1", "item", "3", "A"), ("u1", "x", "4", "A"), ("u2", "item", "5", "B"), ("u2", "y", "2", "B")]
    from dpfed_core.data import upload

    df, no_header = upload.read_upload(_csv(rows), "t.csv")
    assert not no_header and list(df.columns) == list(COLUMNS)
    ds = load_long_table(_csv(rows), filename="t.csv", **RATINGS)
    assert ds.n_users == 2 and "item" in list(ds.item_ids)


def test_an_upload_of_as_many_rows_as_the_limit_is_read_and_one_more_is_refused(monkeypatch):
    monkeypatch.setenv("DPFED_MAX_UPLOAD_ROWS", "6")
    rows = [("u1", "x", "3", "A"), ("u2", "x", "4", "A"), ("u3", "y", "5", "B"), ("u4", "y", "2", "B"),
            ("u5", "z", "1", "B"), ("u6", "z", "2", "A")]
    assert load_long_table(_csv(rows), filename="t.csv", **RATINGS).n_users == 6
    with pytest.raises(DataError, match="more than 6 rows"):
        load_long_table(_csv([*rows, ("u7", "z", "1", "B")]), filename="t.csv", **RATINGS)


def test_a_header_naming_a_column_twice_gives_its_places_counted_from_one():
    from dpfed_core.ui.upload import read_upload

    with pytest.raises(DataError, match=r"the header names 2 columns 'site' \(columns 4, 5\)"):
        read_upload(b"user,item,rating,site,site\nu1,x,3,A,A\nu2,y,4,B,B\n", "t.csv")


def test_an_output_is_written_whole_by_a_rename_and_a_failed_write_leaves_no_part_file(tmp_path, monkeypatch):
    import os

    from dpfed_core.data.atomic import atomic_write

    out = tmp_path / "r.json"
    atomic_write(out, '{"a": 1}')
    assert out.read_text() == '{"a": 1}' and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]

    def full_disk(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(ConfigError, match="No space left on device; nothing was written") as exc:
        atomic_write(out, '{"a": 2}')
    assert exc.value.param == "out"
    assert out.read_text() == '{"a": 1}' and sorted(p.name for p in tmp_path.iterdir()) == ["r.json"]


def test_catalogue_ids_that_write_the_datas_numbers_another_way_are_named_with_both_spellings():
    """Ids are exact strings: a catalogue of '01' … against data of '1' … shares none of them. The note (some
    items match) and the error (none does) name the pairs and say to write the ids alike."""
    rows = [("u1", "1", "3", "A"), ("u1", "2", "4", "A"), ("u2", "10", "5", "B"), ("u2", "2", "2", "B")]
    ds = load_long_table(_csv(rows), filename="t.csv", items=["01", "02", "10"], **RATINGS)
    said = next(n for n in ds.notes if n.startswith("kept 3 rows"))
    assert said.endswith(". 2 items of the data are numbers the catalogue writes another way ('1' in the data, '01' "
                         "in the catalogue; '2' in the data, '02' in the catalogue): ids are compared as written, so "
                         "write the items file's ids as the data's item column writes them"), said
    assert list(ds.item_ids) == ["01", "02", "10", "1", "2"]
    with pytest.raises(DataError, match=r"no row names an item of the declared catalogue .*\. 1 item of the data is a "
                                        r"number the catalogue writes another way \('1' in the data, '1\.0' in the "
                                        r"catalogue\)") as exc:
        load_long_table(_csv(rows[:1] + [("u2", "7", "5", "B")]), filename="t.csv", items=["1.0", "2.0"], **RATINGS)
    assert exc.value.param == "items"
    words = load_long_table(_csv(rows), filename="t.csv", items=["1", "2", "x"], **RATINGS)
    assert not any("written another way" in n or "another way" in n for n in words.notes), words.notes


def test_a_column_missing_by_its_case_is_named_with_its_flag_and_the_files_spelling():
    rows = [("u1", "x", "3", "A"), ("u2", "y", "4", "B")]
    with pytest.raises(DataError, match=r"t\.csv has no column 'rating' \(value column, value_col\) — did you mean "
                                        r"'Rating'\? Columns found: 'user', 'item', 'Rating', 'site'") as exc:
        load_long_table(_csv(rows, ("user", "item", "Rating", "site")), filename="t.csv", **RATINGS)
    assert exc.value.param == "value_col"


def test_a_long_table_of_three_columns_is_offered_for_mapping_and_two_are_refused():
    from dpfed_core.data import upload

    df, no_header = upload.read_upload(b"user,item,site\nu1,x,A\nu2,y,B\n", "t.csv")
    assert list(df.columns) == ["user", "item", "site"] and not no_header and len(df) == 2
    with pytest.raises(DataError, match=r"t\.csv has 2 column\(s\) \(user, item\); a long table needs") as exc:
        upload.read_upload(b"user,item\nu1,x\n", "t.csv")
    assert exc.value.param == "sep"


def test_users_without_an_attribute_row_are_counted_once_whatever_their_rows():
    from dpfed_core.data import upload

    rows = pd.DataFrame({"user": ["1", "1", "1", "2", "3", "3"], "item": list("abcabc")})
    attrs = pd.DataFrame({"id": ["2"], "zip": ["12345"]})
    with pytest.raises(DataError, match=r"2 user\(s\) of the interaction table have no row in the user-attribute "
                                        r"table \(first: '1'\)") as exc:
        upload.join_user_attributes(rows, "user", attrs, "id")
    assert exc.value.param == "attr_user_col"
