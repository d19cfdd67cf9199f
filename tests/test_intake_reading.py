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
