"""Upload parsing out of the UI and the uploads: a header-less ``u.data`` is
guessed as user, item, rating, timestamp; a second, user-attribute table is joined on the user id so
that MovieLens can be federated by ZIP or occupation from the browser."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpfed_core.data import upload
from dpfed_core.data.long_table import load_long_table
from dpfed_core.errors import DataError

# a u.data-like, header-less, tab-separated log: user, item, rating, Unix time
U_DATA = "\n".join(f"{u}\t{i}\t{r}\t{881250949 + 17 * k}" for k, (u, i, r) in enumerate(
    [(1, 10, 5), (1, 11, 3), (2, 10, 4), (2, 12, 1), (3, 11, 2), (3, 12, 5), (4, 10, 3), (4, 13, 4)])) + "\n"
# a u.user-like, header-less, |-separated attribute table: user, age, gender, occupation, ZIP
U_USER = "1|24|M|technician|85711\n2|53|F|other|94043\n3|23|M|writer|32067\n4|33|F|other|15213\n"


def test_headerless_tab_separated_udata_is_guessed_user_item_rating_timestamp():
    df, no_header = upload.read_upload(U_DATA.encode(), "ratings.tsv")  # a name of no known format
    assert no_header and list(df.columns) == ["column 1", "column 2", "column 3", "column 4"]
    assert len(df) == 8 and df.iloc[0].tolist() == ["1", "10", "5", "881250949"]  # first line kept as data
    g = upload.guess_mapping(list(df.columns), df, no_header)
    assert (g["user"], g["item"], g["value"]) == ("column 1", "column 2", "column 3")
    assert g["entity"] is None  # the timestamp is never the entity (nor the value)
    assert upload.is_timestamp_column(df["column 4"]) and not upload.is_timestamp_column(df["column 3"])


def test_named_columns_are_guessed_by_name_and_distinct():
    g = upload.guess_mapping(["patientunitstayid", "hospitalid", "drugname", "count"])
    assert g == {"user": "patientunitstayid", "entity": "hospitalid", "item": "drugname", "value": "count",
                 "name": None}


def test_no_column_named_like_an_item_leaves_the_item_to_choose():
    g = upload.guess_mapping(["user", "site"] + [f"i{j}" for j in range(1, 201)])
    assert (g["user"], g["entity"], g["item"], g["value"]) == ("user", "site", None, None)
    assert upload.mapping_problems("user", None, "site", None, None)[0].startswith("Choose “Item”")


@pytest.mark.parametrize("stem", ["item", "movie_", "Item ", "product-"])
def test_numbered_columns_of_one_stem_are_a_wide_table_and_never_the_item_guess(stem):
    """item1 … item200 (or movie_1 …) name a wide table's items: no column is proposed as the Item even
    though the names contain "item", and the mapper's message says the table is not read and what to do."""
    cols = ["user", "site"] + [f"{stem}{j}" for j in range(1, 201)]
    g = upload.guess_mapping(cols)
    assert (g["user"], g["entity"], g["item"], g["value"], g["name"]) == ("user", "site", None, None, None)
    wide = upload.wide_item_columns(cols)
    assert wide == cols[2:]
    (msg,) = upload.mapping_problems("user", None, "site", None, None, wide=wide)
    assert msg == (f"Choose “Item”: the 200 columns {stem}1 … {stem}200 are one column per item (a wide table), which "
                   "is not read: convert it to a long table with one row per user–item interaction — columns user, "
                   "item[, rating] (and the entity) — and upload that.")
    # choosing one of those columns by hand is the same mistake
    assert upload.mapping_problems("user", f"{stem}7", "site", None, None, wide=wide) == [msg]
    # a long table with an item column and one or two numbered columns beside it is no wide table
    long = ["user", "site", "item", "rating", "code1", "code2"]
    assert upload.wide_item_columns(long) == [] and upload.guess_mapping(long)["item"] == "item"
    # a header-less table's "column 1" … are positions
    assert upload.wide_item_columns([f"column {j}" for j in range(1, 5)], no_header=True) == []


def test_user_attributes_join_and_federate_by_zip_and_occupation():
    df, _ = upload.read_upload(U_DATA.encode(), "ratings.tsv")
    attrs, attrs_no_header = upload.read_upload(U_USER.encode(), "users.txt", 2, "user-attribute table")
    assert attrs_no_header and upload.guess_attribute_user(list(attrs.columns), True) == "column 1"
    joined = upload.join_user_attributes(df, "column 1", attrs, "column 1")
    occ, zipc = upload.attribute_column_name("column 4"), upload.attribute_column_name("column 5")
    assert joined[occ].tolist() == ["technician"] * 2 + ["other"] * 2 + ["writer"] * 2 + ["other"] * 2
    assert list(df.columns) == ["column 1", "column 2", "column 3", "column 4"]  # the upload is not changed
    ds = load_long_table(joined, user_col="column 1", item_col="column 2", value_col="column 3",
                         entity_col=occ, value_kind="ratings", value_max=5, entities_from_data=True)
    assert sorted(ds.entity_names) == ["other", "technician", "writer"] and ds.n_users == 4
    assert ds.X.nnz == 8 and float(ds.X.sum()) == 27.0
    by_zip = load_long_table(joined, user_col="column 1", item_col="column 2", value_col="column 3",
                             entity_from=zipc, entity_transform="first_digit", value_kind="ratings", value_max=5,
                             entities_from_data=True)
    assert sorted(by_zip.entity_names) == ["1", "3", "8", "9"]
    np.testing.assert_array_equal(np.bincount(by_zip.entity_of_user), [1, 1, 1, 1])


def test_a_header_repeated_inside_a_table_joined_to_user_attributes_is_skipped_as_without_them():
    """Two exports joined one after another repeat 'user,item,rating' mid-file: read with a user-attribute
    table the line is skipped before the join (joined, it was a user 'user' no attribute row has), with the
    note of a table read alone, and later errors still name the file's lines."""
    rows = [ln.split("\t")[:3] for ln in U_DATA.splitlines()]
    lines = ["user,item,rating", *(",".join(r) for r in rows)]
    text = "\n".join([*lines[:5], " user , item,rating", *lines[5:]]) + "\n"
    attrs, _ = upload.read_upload(b"user,age,gender,occupation,zip\n" + U_USER.replace("|", ",").encode(), "users.csv", 2)
    opts = dict(user_col="user", item_col="item", value_col="rating", entity_col="attribute: occupation",
                value_kind="ratings", value_max=5, entities_from_data=True)
    ds = load_long_table(text.encode(), filename="joined.csv", user_attributes=(attrs, "user"), **opts)
    plain = upload.join_user_attributes(upload.read_upload(("\n".join(lines) + "\n").encode(), "t.csv")[0],
                                        "user", attrs, "user")
    want = load_long_table(plain, **opts)
    assert list(ds.user_ids) == list(want.user_ids) and list(ds.entity_names) == list(want.entity_names)
    assert (ds.X != want.X).nnz == 0 and ds.n_users == 4
    assert ("skipped 1 line repeating the header (line 6): files joined one after another; a header is no data "
            "row") in ds.notes, ds.notes
    bad = text.replace("3,12,5", "3,12,x").encode()
    with pytest.raises(DataError, match=r"joined\.csv, data row 7 \(line 8\): column 'rating' holds 'x'"):
        load_long_table(bad, filename="joined.csv", user_attributes=(attrs, "user"), **opts)


def test_attribute_table_errors_name_the_control():
    df, _ = upload.read_upload(U_DATA.encode(), "ratings.tsv")
    dup, _ = upload.read_upload((U_USER + "4|40|M|other|10001\n").encode(), "users.txt", 2)
    with pytest.raises(DataError, match="repeated user id.*User id in the attribute table"):
        upload.join_user_attributes(df, "column 1", dup, "column 1")
    short, _ = upload.read_upload(U_USER.replace("4|33|F|other|15213\n", "").encode(), "users.txt", 2)
    with pytest.raises(DataError, match="1 user.*no row in the user-attribute table.*User attributes"):
        upload.join_user_attributes(df, "column 1", short, "column 1")
    with pytest.raises(DataError, match="not a column of the user-attribute table"):
        upload.join_user_attributes(df, "column 1", short, "zip")


def test_mapping_problems_in_the_page_words():
    assert upload.mapping_problems("u", "i", "h", "r", None) == []
    probs = upload.mapping_problems("u", "u", None, "u", None)
    assert any("“User” and “Item” are both" in p for p in probs)
    assert any("Choose “Entity from column”" in p for p in probs)
    with pytest.raises(DataError, match="2 column"):
        upload.read_upload(b"a,b\n1,2\n", "two.csv")


def test_known_movielens_files_get_their_documented_column_names():
    df, no_header = upload.read_upload(U_DATA.encode(), "u.data")
    assert no_header and list(df.columns) == ["user id", "item id", "rating", "timestamp"]
    assert df.iloc[0].tolist() == ["1", "10", "5", "881250949"]  # the first line is still a data row
    g = upload.guess_mapping(list(df.columns), df, no_header)
    assert (g["user"], g["item"], g["value"], g["entity"]) == ("user id", "item id", "rating", None)
    assert upload.known_format("u1.base", 4)[1] == list(df.columns)  # the 100K splits: u.data's columns
    users, _ = upload.read_upload(U_USER.encode(), "u.user", 2, "user-attribute table")
    assert list(users.columns) == ["user id", "age", "gender", "occupation", "zip code"]
    assert upload.guess_attribute_user(list(users.columns), True) == "user id"
    joined = upload.join_user_attributes(df, "user id", users, "user id")
    assert joined[upload.attribute_column_name("occupation")].tolist()[:2] == ["technician"] * 2
    item_line = "1|Toy Story (1995)|01-Jan-1995||http://x|0|0|0|1|1|1|0|0|0|0|0|0|0|0|0|0|0|0|0\n"
    items, _ = upload.read_upload((item_line * 3).encode(), "u.item", 2)
    assert list(items.columns)[:2] == ["movie id", "movie title"] and len(items.columns) == 24
    # the name alone is not enough: a file called u.user with other columns keeps generic names
    assert upload.known_format("u.user", 3) is None and upload.known_format("notes.txt", 4) is None
    # the browser's file filters accept these files' extensions
    assert {"data", "base", "test"} <= set(upload.LONG_TABLE_TYPES) and "user" in upload.ATTRIBUTE_TYPES
    assert "occupation" in upload.ENTITY_LIST_TYPES


def test_a_column_named_exactly_like_a_role_is_preferred_to_one_that_only_contains_it():
    """User is the column named ``user``, not an earlier ``user_name`` that merely contains the word."""
    guess = upload.guess_mapping(["user_name", "user", "item", "rating", "site"])
    assert guess["user"] == "user"
    assert upload.guess_column(["user_name", "user"], "user") == "user"


def test_a_known_header_less_file_keeps_its_first_line_even_when_it_reads_like_a_header():
    """A ``u.user`` whose first row has few numbers (a letter ZIP code) is still MovieLens' header-less
    format: its first line is a user, and the columns get their documented names."""
    df, no_header = upload.read_upload(b"1|24|M|technician|T8H1N\n2|53|F|other|94043\n", "u.user", min_columns=2)
    assert no_header
    assert list(df.columns) == ["user id", "age", "gender", "occupation", "zip code"]
    assert len(df) == 2 and str(df.iloc[0, 4]) == "T8H1N"


def test_a_gzipped_known_file_is_its_format():
    """``u.data.gz`` is u.data compressed: the same documented columns."""
    assert upload.known_format("u.data.gz", 4) == upload.known_format("u.data", 4)
    assert upload.headerless_names("U.DATA.GZ", 4) == ["user id", "item id", "rating", "timestamp"]


def test_a_header_with_fewer_than_half_numbers_is_a_header():
    """Five names of which two are numbers (years) are a header; three of five numbers are a data row."""
    assert not upload.headerless(["user", "item", "1995", "2000", "site"])
    assert upload.headerless(["196", "242", "3", "x", "y"])


def _guess_header_less(text: bytes, filename: str = "visits.csv") -> dict:
    df, no_header = upload.read_upload(text, filename)
    assert no_header
    return upload.guess_mapping(list(df.columns), df, no_header)


def test_a_header_less_text_column_after_user_and_item_is_the_entity_not_the_value():
    """A third column of words (a hospital's name) is no value: the guess makes it the entity; a fourth
    column after a numeric value is the entity too."""
    g = _guess_header_less(b"1,10,General\n2,11,St Mary\n3,12,General\n")
    assert (g["user"], g["item"], g["value"], g["entity"]) == ("column 1", "column 2", None, "column 3")
    g = _guess_header_less(b"1,10,5,General\n2,11,3,St Mary\n3,12,4,General\n")
    assert (g["user"], g["item"], g["value"], g["entity"]) == ("column 1", "column 2", "column 3", "column 4")


def test_a_rating_written_nan_is_a_missing_rating_and_the_column_still_the_value():
    """numpy's savetxt writes a missing number as ``nan``: the column of ratings stays the value, and a
    column of Unix times with one stays a timestamp."""
    g = _guess_header_less(b"1,10,nan\n2,11,4\n3,12,5\n")
    assert (g["value"], g["entity"]) == ("column 3", None)
    assert upload.is_timestamp_column(pd.Series(["881250949", "nan", "881250983"]))


def test_a_column_is_a_timestamp_only_when_every_value_is_a_whole_unix_time():
    """One nine-digit user id among short ones, or large amounts with cents, are no Unix times: the
    column keeps its place in the guess."""
    g = _guess_header_less(b"5,10,3\n123456789,11,4\n7,12,5\n")
    assert (g["user"], g["item"], g["value"]) == ("column 1", "column 2", "column 3")
    assert not upload.is_timestamp_column(pd.Series(["5", "123456789", "7"]))
    g = _guess_header_less(b"1,10,250000000.5\n2,11,312000000.25\n3,12,198000000.75\n")
    assert (g["user"], g["item"], g["value"]) == ("column 1", "column 2", "column 3")
    assert not upload.is_timestamp_column(pd.Series(["250000000.5", "312000000.25"]))


def test_a_u_data_file_never_proposes_its_fourth_column_whatever_it_holds():
    """u.data's fourth column is its timestamp by the format's definition, even when its times are small
    (seconds from a study's start): never proposed as the entity."""
    g = _guess_header_less(b"1\t10\t5\t17\n1\t11\t3\t34\n2\t10\t4\t51\n", "u.data")
    assert g == {"user": "user id", "item": "item id", "value": "rating", "name": None, "entity": None}


def test_a_wide_table_of_three_numbered_columns_is_named_first_to_last_with_its_count():
    wide = upload.wide_item_columns(["user", "site", "item1", "item2", "item3"])
    assert wide == ["item1", "item2", "item3"]
    assert upload.wide_table_text(wide).startswith("the 3 columns item1 … item3 are one column per item")
    assert upload.wide_table_text(["a1", "a2"]).startswith("the 2 columns a1 and a2 are one column per item")


def test_numbered_columns_written_in_mixed_case_are_one_wide_table():
    cols = ["user", "site", "Item1", "item2", "ITEM3"]
    assert upload.wide_item_columns(cols) == cols[2:]


def test_too_few_columns_are_refused_with_what_that_upload_needs_and_the_separator_to_check():
    with pytest.raises(DataError) as long:
        upload.read_upload(b"a,b\n1,2\n", "two.csv")
    assert ("two.csv has 2 column(s) (a, b); a long table needs at least a user, an item and an entity column"
            in str(long.value)) and long.value.param == "sep"
    with pytest.raises(DataError) as attrs:
        upload.read_upload(b"user\n1\n2\n", "users.csv", 2, "user-attribute table")
    assert ("users.csv has 1 column(s) (user); a user-attribute table needs a user id and at least one attribute "
            "column") in str(attrs.value)


def test_a_column_whose_name_contains_a_roles_word_is_proposed_for_it():
    g = upload.guess_mapping(["member", "hospital_code", "drug_name", "dose_count"])
    assert g == {"user": "member", "entity": "hospital_code", "item": "drug_name", "value": "dose_count", "name": None}


@pytest.mark.parametrize("word", ["entity", "hospitalid", "hospital", "region", "bank", "site", "zip", "clinic"])
def test_each_entity_word_names_the_entity_column(word):
    assert upload.guess_mapping(["user", "item", "rating", word])["entity"] == word


def test_value_and_item_are_proposed_only_by_name_never_as_the_first_free_column():
    """An event log has no value column and a table without an item-like name leaves the Item to choose:
    neither takes whatever column is left."""
    g = upload.guess_mapping(["user", "site", "item", "title"])
    assert (g["value"], g["name"]) == (None, "title")
    g = upload.guess_mapping(["user", "site", "rating", "notes"])
    assert (g["item"], g["value"]) == (None, "rating")


def test_the_value_or_the_item_name_cannot_be_the_item_or_the_user_column():
    (msg,) = upload.mapping_problems("u", "i", "h", "i", None)
    assert msg.startswith("“Value” 'i' is also the user, item or entity column")
    (msg,) = upload.mapping_problems("u", "i", "h", None, "u")
    assert msg.startswith("“Item name” 'u' is the user or entity column")


def test_an_attribute_table_without_a_user_id_name_is_joined_on_its_first_column():
    assert upload.guess_attribute_user(["member", "age", "zip"], False) == "member"
    assert upload.guess_attribute_user(["age", "patient_id", "zip"], False) == "patient_id"


def test_a_user_id_repeated_three_times_in_the_attribute_table_is_one_repeated_id():
    df, _ = upload.read_upload(U_DATA.encode(), "ratings.tsv")
    dup, _ = upload.read_upload((U_USER + "4|40|M|other|10001\n4|41|M|other|10002\n").encode(), "users.txt", 2)
    with pytest.raises(DataError, match=r"has 1 repeated user id\(s\) in 'column 1' \(first: '4'\)"):
        upload.join_user_attributes(df, "column 1", dup, "column 1")


def test_a_user_column_missing_from_the_interactions_is_named():
    df, _ = upload.read_upload(U_DATA.encode(), "ratings.tsv")
    attrs, _ = upload.read_upload(U_USER.encode(), "users.txt", 2)
    with pytest.raises(DataError, match="the user column 'user' is not in the interaction table") as err:
        upload.join_user_attributes(df, "user", attrs, "column 1")
    assert err.value.param == "user_col"


def test_the_bound_rule_states_the_declared_maximum_as_given():
    assert "ratings above the declared maximum (4.5) are refused" in upload.bound_rule_text(4.5)


def test_the_entity_cannot_be_the_user_or_the_item_column():
    assert upload.mapping_problems("u", "i", "u", None, None) == [
        "“Entity from column” is the user column 'u': every user would be their own entity. Choose the hospital / "
        "region / site column."]
    assert upload.mapping_problems("u", "i", "i", None, None) == [
        "“Entity from column” is the item column 'i': choose the column of the data holder (hospital, region, site)."]


def test_user_ids_are_joined_as_they_display_whatever_their_unicode_form():
    """'Zoë' written with a combining diaeresis in the interactions and as one character in the attribute
    table is one user: the join never loses them as a user without attributes."""
    df = pd.DataFrame({"user": ["Zoe\u0308", "Zoe\u0308", "Ann"], "item": ["i1", "i2", "i1"]})
    attrs = pd.DataFrame({"user": ["Zo\u00eb", "Ann"], "site": ["A", "B"]})
    joined = upload.join_user_attributes(df, "user", attrs, "user")
    assert joined[upload.attribute_column_name("site")].tolist() == ["A", "A", "B"]


# a header-less log whose ids are words: its first line is user p1's row in entity h0, not a header
WORD_LOG = "p1,d1,2,h0\np1,d2,4,h0\np2,d1,5,h0\np3,d3,1,h1\np4,d2,3,h1\n"


def test_a_first_line_of_words_that_are_values_below_is_data_on_both_front_ends(tmp_path):
    """``p1,d1,2,h0`` reads like a header (no column of numbers), but p1, d1 and h0 are values of their
    columns below: the Data page keeps it as a data row (columns 'column 1' …), and the CLI refuses it as a
    header naming --no-header (a header is no value of its own column), whether its names were given as
    columns or others were asked for; a header repeated below (files joined) is no such value."""
    from dpfed_core.data.loaders import load_data

    df, no_header = upload.read_upload(WORD_LOG.encode(), "log.csv")
    assert no_header and list(df.columns) == ["column 1", "column 2", "column 3", "column 4"]
    assert len(df) == 5 and df.iloc[0].tolist() == ["p1", "d1", "2", "h0"]
    path = tmp_path / "log.csv"
    path.write_text(WORD_LOG)
    as_named = dict(user_col="p1", item_col="d1", value_col="2", value_kind="ratings", entity_col="h0",
                    entities_from_data=True)
    with pytest.raises(DataError, match=r"log.csv: the header's names 'p1', 'd1', 'h0' are values of their own "
                                        r"columns in the rows below, so the first line is data.*give --no-header") as exc:
        load_data(path, **as_named)
    assert exc.value.param == "no_header"
    with pytest.raises(DataError, match=r"has no column 'user'.*Its first line looks like data, not a header: give "
                                        r"--no-header"):
        load_data(path, **{**as_named, "user_col": "user", "item_col": "item"})
    bare = load_data(path, no_header=True, **{**as_named, "user_col": "column 1", "item_col": "column 2",
                                              "value_col": "column 3", "entity_col": "column 4"})
    assert (bare.n_users, bare.n_items, bare.X.nnz, bare.X.sum()) == (4, 3, 5, 15.0)
    joined = tmp_path / "joined.csv"  # a header, and the same header again where a second file began
    joined.write_text("user,item,rating,site\nu1,a,5,A\nu2,b,4,B\nuser,item,rating,site\nu3,a,3,B\n")
    assert load_data(joined, user_col="user", item_col="item", value_col="rating", entity_col="site",
                     entities_from_data=True).n_users == 3
    df, no_header = upload.read_upload(joined.read_bytes(), "joined.csv")
    assert not no_header and list(df.columns) == ["user", "item", "rating", "site"]
