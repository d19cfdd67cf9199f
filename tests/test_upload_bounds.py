"""Every upload's memory is bounded before it is read: a compressed table that unpacks past the upload
limit and a feature table past its size limit are refused with the limit and the way to change it."""
from __future__ import annotations

import gzip
import tracemalloc

import pytest

from dpfed_core.data import loaders
from dpfed_core.data.inputs import read_item_features
from dpfed_core.data.upload import read_upload
from dpfed_core.errors import DataError


def _bomb(n_lines: int) -> bytes:
    z = gzip.compress(b"user,item,site\n" + b"u1,i1,A\n" * n_lines, 9)
    return z


def test_a_gzip_upload_that_unpacks_past_the_limit_is_refused_without_unpacking_it(monkeypatch):
    monkeypatch.setattr(loaders, "MAX_UPLOAD_BYTES", 4 * 2**20)
    monkeypatch.delenv("DPFED_MAX_UPLOAD_MB", raising=False)
    bomb = _bomb(2_000_000)  # 16 MB of text in ~16 KB
    tracemalloc.start()
    with pytest.raises(DataError, match=r"unpacks to more than 4 MiB.*DPFED_MAX_UPLOAD_MB"):
        read_upload(bomb, "bomb.csv.gz")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 * 2**20  # read in 1 MiB steps, never parsed


def test_the_upload_limit_is_the_environments_when_set(monkeypatch):
    monkeypatch.setenv("DPFED_MAX_UPLOAD_MB", "64")
    df, _ = read_upload(_bomb(1000), "small.csv.gz")
    assert len(df) == 1000


def test_a_feature_table_past_its_size_limit_is_refused_before_it_is_built(monkeypatch):
    monkeypatch.setenv("DPFED_MAX_FEATURE_VALUES", "10000")
    lines = ["item,genre"] + [f"i{k},g{k % 50}|h{k % 40}" for k in range(1000)]
    with pytest.raises(DataError, match=r"1,000 items × 90 feature columns.*DPFED_MAX_FEATURE_VALUES"):
        read_item_features("\n".join(lines).encode())
