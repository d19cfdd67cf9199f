"""How an uploaded long table is read and turned into a dataset: the values, ids, entities and catalogue a
table's rows give, and the one error or note each odd but legitimate input gets."""
from __future__ import annotations

import numpy as np
import pytest

from dpfed_core.data.long_table import load_long_table
from dpfed_core.errors import ConfigError, DataError

OPTS = dict(user_col="user", item_col="item", entity_col="site", entities_from_data=True)


def test_an_event_log_whose_repeated_events_add_up_above_the_bound_is_noted_as_the_eicu_loader_notes_it():
    """The bound is a (user, item) count's: ten rows of one event each are a count of 10, above a declared 3,
    which the DP mechanisms clip. Checked per row only, every row was 1 and nothing was said."""
    log = b"user,item,site\n" + b"1,a,A\n" * 10 + b"2,b,A\n3,a,B\n4,b,B\n"
    ds = load_long_table(log, filename="t.csv", value_max=3, **OPTS)
    assert ds.X.toarray()[list(ds.user_ids).index("1")].tolist() == [10.0, 0.0]  # kept as is, never clipped here
    assert any(n.startswith("1 (user, item) count (25.00%) exceeds the declared public bound 3 once repeated rows "
                            "are added up") and "clipped" in n for n in ds.notes), ds.notes
    with pytest.raises(DataError, match=r"data row 1 \(line 2\): user '1' has a count of 10 for item 'a'") as e:
        load_long_table(log, filename="t.csv", value_max=3, over_max="error", **OPTS)
    assert e.value.param == "value_max"
    within = load_long_table(log, filename="t.csv", value_max=10, **OPTS)
    assert not any("exceed" in n for n in within.notes), within.notes


def test_an_option_load_long_table_does_not_take_is_refused_by_name_not_ignored():
    """A typo of a keyword (``value_maximum`` for ``value_max``) called from Python would otherwise build the
    dataset without the bound the caller meant to declare."""
    table = b"user,item,rating,site\n1,a,5,A\n2,b,4,B\n"
    with pytest.raises(ConfigError, match=r"unknown option\(s\) value_maximum of load_long_table"):
        load_long_table(table, filename="t.csv", value_col="rating", value_maximum=4, **OPTS)
    with pytest.raises(ConfigError, match="min_item_users is no longer an option") as e:
        load_long_table(table, filename="t.csv", value_col="rating", min_item_users=2, **OPTS)
    assert e.value.param == "min_item_users"


def _rows(n_users: int = 12) -> bytes:
    lines = [f"{u},{i},{(u + i) % 5 + 1},{'AB'[u % 2]}" for u in range(n_users) for i in range(u % 3, u % 3 + 4)]
    return ("user,item,rating,site\n" + "\n".join(lines) + "\n").encode()


def test_ids_repeated_across_the_chunks_a_large_table_is_read_in_are_one_id_each(monkeypatch):
    """A large table is read in chunks, each chunk's ids coded against the ones seen before: the same user or
    item in two chunks is one row or column of the matrix, as in a table read whole."""
    from dpfed_core.data import tables

    whole = load_long_table(_rows(), filename="t.csv", value_col="rating", **OPTS)
    monkeypatch.setattr(tables, "TEXT_CHUNK_ROWS", 5)  # 48 rows: ten chunks, every id in several
    chunked = load_long_table(_rows(), filename="t.csv", value_col="rating", **OPTS)
    assert list(chunked.user_ids) == list(whole.user_ids) and list(chunked.item_ids) == list(whole.item_ids)
    assert chunked.entity_names == whole.entity_names and (chunked.X != whole.X).nnz == 0


def test_the_data_pages_item_list_takes_a_first_line_naming_the_item_column_as_its_header():
    """'drug' is a plausible drug name nowhere else, but on the first line of the list given for the item
    column 'drug' it is the list's header: read as an item it would be an empty declared column."""
    from dpfed_core.data.long_table import read_item_list

    ids, names = read_item_list(b"drug\naspirin\nheparin\n", filename="formulary.txt", column="drug")
    assert ids == ["aspirin", "heparin"] and names is None
    assert read_item_list(b"drug\naspirin\n", filename="formulary.txt")[0] == ["drug", "aspirin"]


def test_a_declared_encoding_reads_the_item_and_entity_lists_as_it_reads_the_table():
    """A UTF-16 export without a byte-order mark cannot be told from its bytes alone: the declared encoding
    is the table's and its lists' (a list read otherwise names no item and no entity of the table)."""
    table = "user,item,rating,site\n1,café,5,Zürich\n2,thé,4,Zürich\n3,café,3,Genève\n".encode("utf-16-le")
    ds = load_long_table(table, filename="t.csv", user_col="user", item_col="item", value_col="rating",
                         entity_col="site", encoding="utf-16-le", items="thé\ncafé\n".encode("utf-16-le"),
                         entities="Genève\nZürich\n".encode("utf-16-le"))
    assert list(ds.item_ids) == ["thé", "café"] and ds.item_source == "declared" and ds.n_declared is None
    assert ds.entity_names == ["Genève", "Zürich"] and ds.entity_source == "declared"
    assert ds.X.nnz == 3


def _parts():
    import scipy.sparse as sp

    X = sp.csr_matrix(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0], [4.0, 0.0, 0.0]]))
    return X, dict(entity_of_user=np.array([0, 0, 1]), entity_names=["A", "B"], user_ids=np.array(["u1", "u2", "u3"]),
                   item_names=np.array(["a", "b", "c"]), item_ids=np.array(["a", "b", "c"]), value_kind="ratings",
                   value_max=5.0)


def test_a_dataset_refuses_rows_out_of_entity_order_and_a_declared_count_without_a_declared_catalogue():
    """Each entity's rows are one slice of the matrix: rows out of entity order would hand an entity another
    entity's users. A count of declared items is only meaningful for a declared catalogue."""
    from dpfed_core.data.dataset import FederatedDataset

    X, parts = _parts()
    ds = FederatedDataset(X, **parts)
    assert [(s.start, s.stop) for s in ds.entity_slices()] == [(0, 2), (2, 3)]
    with pytest.raises(DataError, match="rows of X must be sorted by entity"):
        FederatedDataset(X, **{**parts, "entity_of_user": np.array([1, 0, 0])})
    with pytest.raises(DataError, match="n_declared=2 needs a declared catalogue"):
        FederatedDataset(X, **parts, n_declared=2)
    with pytest.raises(DataError, match="n_declared=4 needs a declared catalogue .* of at most the 3 columns"):
        FederatedDataset(X, **parts, item_source="declared", n_declared=4)
    assert FederatedDataset(X, **parts, item_source="declared", n_declared=2).shared_columns.tolist() == [0, 1]


def test_an_entity_is_found_by_name_or_index_and_one_outside_the_federation_is_named():
    from dpfed_core.data.dataset import FederatedDataset

    X, parts = _parts()
    ds = FederatedDataset(X, **parts)
    assert ds.entity_index("B") == 1 and ds.entity_index(np.int64(0)) == 0
    for bad, said in ((2, "entity index 2 out of range 0..1"), (-1, "entity index -1 out of range 0..1"),
                      ("C", "unknown entity 'C'; the entities are: A, B")):
        with pytest.raises(ConfigError, match=said):
            ds.entity_index(bad)


def test_a_stored_zero_is_no_interaction():
    """A matrix handed over with explicit zeros (a 0 written into a sparse matrix) counts them as no rating:
    the summary's interactions and items used are those of the nonzero values only."""
    import scipy.sparse as sp

    from dpfed_core.data.dataset import FederatedDataset

    X = sp.csr_matrix((np.array([5.0, 0.0, 3.0]), (np.array([0, 0, 1]), np.array([0, 1, 1]))), shape=(2, 2))
    assert X.nnz == 3
    ds = FederatedDataset.from_parts(X, np.array(["A", "B"]), value_kind="ratings")
    assert ds.X.nnz == 2
    assert [(r["interactions"], r["items_used"]) for r in ds.summary()] == [(1, 1), (1, 1)]


def test_leaving_out_rows_with_a_missing_value_that_leaves_no_row_says_so():
    """With drop_missing every row may go: said as that, not as a later check's error about what is left
    (one entity, no value)."""
    table = b"user,item,rating,site\n1,a,,A\n2,b,NaN,B\n3,,4,B\n"
    with pytest.raises(DataError, match=r"every row of t\.csv has an empty value in one of user, item, site, rating"):
        load_long_table(table, filename="t.csv", value_col="rating", drop_missing=True, **OPTS)
