"""Every upload's memory is bounded before it is read: a compressed table that unpacks past the upload
limit and a feature table past its size limit are refused with the limit and the way to change it."""
from __future__ import annotations

import gzip
import tracemalloc

import pytest

from dpfed_core.data import tables
from dpfed_core.data.inputs import read_item_features
from dpfed_core.data.upload import read_upload
from dpfed_core.errors import DataError


def _bomb(n_lines: int) -> bytes:
    z = gzip.compress(b"user,item,site\n" + b"u1,i1,A\n" * n_lines, 9)
    return z


def test_a_gzip_upload_that_unpacks_past_the_limit_is_refused_without_unpacking_it(monkeypatch):
    monkeypatch.setattr(tables, "MAX_UPLOAD_BYTES", 4 * 2**20)
    monkeypatch.setattr(tables, "MAX_UPLOAD_ROWS", 10**8)  # the bytes, not the rows, stop this one
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


def test_a_limit_below_one_mib_is_named_in_the_size_it_was_set_to(monkeypatch):
    """A limit set below 1 MiB was read back as "more than 0 MiB": the refusal names it as set."""
    monkeypatch.setenv("DPFED_MAX_UPLOAD_MB", "0.5")
    with pytest.raises(DataError, match=r"unpacks to more than 524,288 bytes, the limit"):
        read_upload(_bomb(200_000), "half.csv.gz")
    monkeypatch.setenv("DPFED_MAX_UPLOAD_MB", "1.5")
    with pytest.raises(DataError, match=r"unpacks to more than 1\.5 MiB, the limit"):
        read_upload(_bomb(400_000), "more.csv.gz")


def test_a_feature_table_past_its_size_limit_is_refused_before_it_is_built(monkeypatch):
    monkeypatch.setenv("DPFED_MAX_FEATURE_VALUES", "10000")
    lines = ["item,genre"] + [f"i{k},g{k % 50}|h{k % 40}" for k in range(1000)]
    with pytest.raises(DataError, match=r"1,000 items × 90 feature columns.*DPFED_MAX_FEATURE_VALUES"):
        read_item_features("\n".join(lines).encode())


def _short_rows(n: int) -> bytes:
    return b"user,item,site\n" + b"".join(b"%d,%d,%d\n" % (u, u % 7, u % 3) for u in range(n))


@pytest.mark.parametrize("pack", ["plain", "gzip", "parquet"])
def test_an_upload_past_the_row_limit_is_refused_before_it_is_parsed(monkeypatch, pack):
    """Short lines fit ten million rows in the byte limit: rows are bounded on their own."""
    monkeypatch.setattr(tables, "MAX_UPLOAD_ROWS", 1000)
    monkeypatch.delenv("DPFED_MAX_UPLOAD_ROWS", raising=False)
    data, name = _short_rows(1001), "t.csv"  # 1,001 rows: one above
    if pack == "gzip":
        data, name = gzip.compress(data), "t.csv.gz"
    elif pack == "parquet":
        import io

        import pandas as pd

        buf = io.BytesIO()
        pd.DataFrame({"user": range(1001), "item": 1, "site": 0}).to_parquet(buf)
        data, name = buf.getvalue(), "t.parquet"
    with pytest.raises(DataError, match=r"more than 1,000 rows.*DPFED_MAX_UPLOAD_ROWS") as err:
        read_upload(data, name)
    assert err.value.param == "data"
    monkeypatch.setenv("DPFED_MAX_UPLOAD_ROWS", "1001")  # the limit the message names lets it through
    df, _ = read_upload(data, name)
    assert len(df) == 1001


def test_an_upload_at_the_row_limit_is_read_and_a_bad_limit_is_named(monkeypatch):
    monkeypatch.setattr(tables, "MAX_UPLOAD_ROWS", 1000)
    monkeypatch.delenv("DPFED_MAX_UPLOAD_ROWS", raising=False)
    df, _ = read_upload(_short_rows(1000), "t.csv")
    assert len(df) == 1000
    monkeypatch.setenv("DPFED_MAX_UPLOAD_ROWS", "lots")
    with pytest.raises(DataError, match="DPFED_MAX_UPLOAD_ROWS='lots'"):
        read_upload(_short_rows(10), "t.csv")


def test_a_list_past_its_line_limit_is_refused(monkeypatch):
    from dpfed_core.data.inputs import read_list

    monkeypatch.setenv("DPFED_MAX_LIST_LINES", "100")
    names = "".join(f"item{i}\n" for i in range(102)).encode()
    with pytest.raises(DataError, match=r"more than 100 lines.*DPFED_MAX_LIST_LINES"):
        read_list(names, what="item list")
    assert len(read_list("".join(f"item{i}\n" for i in range(100)).encode(), what="item list").ids) == 100
    monkeypatch.setenv("DPFED_MAX_LIST_LINES", "many")
    with pytest.raises(DataError, match="DPFED_MAX_LIST_LINES='many'"):
        read_list(names, what="item list")


def test_the_dashboard_refuses_an_upload_past_the_row_limit_by_name(monkeypatch):
    from tests.test_intake_pages import upload

    monkeypatch.setenv("DPFED_MAX_UPLOAD_ROWS", "500")
    at = upload(_short_rows(600), "big.csv")
    assert not at.exception, [e.value for e in at.exception]
    shown = " ".join(e.value for e in at.error).replace("\\", "")  # markdown escapes
    assert "more than 500 rows" in shown and "DPFED_MAX_UPLOAD_ROWS" in shown
    assert not [b for b in at.button if b.key == "build_upload"]  # nothing to map: no build button


@pytest.mark.parametrize("name,value", [("DPFED_MAX_FEATURE_VALUES", "lots"), ("DPFED_MAX_FEATURE_VALUES", "0"),
                                        ("DPFED_MAX_UPLOAD_MB", "nan"), ("DPFED_MAX_UPLOAD_MB", "-4"),
                                        ("DPFED_MAX_UPLOAD_ROWS", "1_000"), ("DPFED_MAX_LIST_LINES", "1.5"),
                                        ("DPFED_MAX_ID_CHARS", "many")])
def test_every_limit_variable_is_read_by_one_rule(monkeypatch, name, value):
    """A limit set in the environment is a positive number written plainly; anything else is one error
    naming the variable, whichever input it bounds."""
    from dpfed_core.data.inputs import read_list
    from dpfed_core.data.long_table import load_long_table

    monkeypatch.setenv(name, value)
    read = {"DPFED_MAX_FEATURE_VALUES": lambda: read_item_features(b"item,genre\ni1,a\ni2,a\n"),
            "DPFED_MAX_UPLOAD_MB": lambda: read_upload(_short_rows(10), "t.csv"),
            "DPFED_MAX_UPLOAD_ROWS": lambda: read_upload(_short_rows(10), "t.csv"),
            "DPFED_MAX_LIST_LINES": lambda: read_list(b"item1\nitem2\n", what="item list"),
            "DPFED_MAX_ID_CHARS": lambda: load_long_table(_short_rows(10), user_col="user", item_col="item",
                                                          entity_col="site", value_kind="implicit",
                                                          entities_from_data=True)}[name]
    with pytest.raises(DataError, match=f"{name}='{value}' must be a positive"):
        read()


_PEAK_CHILD = r"""
import sys
kind, path = sys.argv[1], sys.argv[2]
if kind == "table":  # the dashboard itself: the Data page's upload, column mapping and build
    from tests.test_intake_pages import build, upload

    at = build(upload(open(path, "rb").read(), path.rsplit("/", 1)[-1], kind=None))
    assert not at.exception and not at.error, ([e.value for e in at.exception], [e.value for e in at.error])
    assert at.session_state["dataset"].n_users > 0
else:
    from dpfed_core.data.inputs import read_item_features

    assert read_item_features(open(path, "rb").read()).values.size > 0
# VmHWM is this address space's own peak; ru_maxrss would start at the parent's RSS, since a vforked
# child's exec carries the parent's high-water mark over, and the parent here is the whole test run.
print(int(open("/proc/self/status").read().split("VmHWM:")[1].split()[0]) * 1024)
"""


def _peak_of(kind: str, path, tmp_path) -> int:
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(repo), "OMP_NUM_THREADS": "1", "HOME": str(tmp_path),
           "DPFED_STORE": str(tmp_path / "store.sqlite3")}
    for name in ("DPFED_MAX_UPLOAD_MB", "DPFED_MAX_UPLOAD_ROWS", "DPFED_MAX_FEATURE_VALUES", "DPFED_MAX_ID_CHARS"):
        env.pop(name, None)
    out = subprocess.run([sys.executable, "-c", _PEAK_CHILD, kind, str(path)], env=env, cwd=repo,
                         capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-2000:]
    return int(out.stdout.split()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("shape", ["rows", "bytes"])
def test_the_largest_upload_the_limits_accept_stays_under_one_gib_in_the_dashboard(tmp_path, shape):
    """The worst a user can upload within the default limits — every user and item id distinct, at
    the row limit with short ids or at the byte limit with 33-character ids — uploaded, mapped and
    built through the Data page in under 1 GiB of the whole dashboard process."""
    if shape == "rows":
        n, fmt = tables.MAX_UPLOAD_ROWS, b"u%d,i%d,s%d\n"
    else:
        n, fmt = (tables.MAX_UPLOAD_BYTES - 64) // 72, b"u%032d,i%032d,s%d\n"  # ≤ 72-byte lines
    body = b"".join(fmt % (k, k, k % 40) for k in range(n))  # every id distinct
    assert len(body) < tables.MAX_UPLOAD_BYTES
    path = tmp_path / "largest.csv.gz"
    path.write_bytes(gzip.compress(b"user,item,site\n" + body, 1))
    del body
    peak = _peak_of("table", path, tmp_path)
    assert peak < 2**30, f"peak RSS {peak / 2**20:.0f} MiB"


@pytest.mark.slow
def test_the_largest_feature_table_the_limits_accept_stays_under_one_gib(tmp_path):
    from dpfed_core.data.inputs import MAX_FEATURE_VALUES

    cols = 64
    rows = MAX_FEATURE_VALUES // cols  # exactly at the limit
    head = "item," + ",".join(f"f{c}" for c in range(cols)) + "\n"
    line = ",".join(["1"] * cols)
    path = tmp_path / "features.csv"
    with path.open("w") as f:
        f.write(head)
        for k in range(rows):
            f.write(f"i{k},{line}\n")
    peak = _peak_of("features", path, tmp_path)
    assert peak < 2**30, f"peak RSS {peak / 2**20:.0f} MiB"


def test_one_very_long_id_is_refused_before_the_ids_are_copied_at_its_width(tmp_path, monkeypatch):
    """Ids are held at the longest one's width: one 50,000-character user id among 20,000 users
    asked for 11.9 GB. The bound is distinct ids × the longest, named with its row and variable."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from dpfed_core.data.long_table import load_long_table

    monkeypatch.delenv("DPFED_MAX_ID_CHARS", raising=False)
    rows = ["user,item,site"] + [f"u{k},i{k % 50},s{k % 3}" for k in range(20_000)] + ["u" + "x" * 50_000 + ",i1,s1"]
    path = tmp_path / "long_id.csv"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(DataError, match=r"data row 20001 \(line 20002\): a user id of 50,001 characters among "
                                        r"20,001 distinct user ids.*DPFED_MAX_ID_CHARS"):
        load_long_table(str(path), user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                        entities_from_data=True)
    # the same in the CLI: one error line, exit 1 or 2, nothing written
    repo = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-m", "dpfed_core", "run", "--data", str(path), "--user-col", "user",
                          "--item-col", "item", "--entity-col", "site", "--entities-from-data", "--value-kind",
                          "implicit", "--method", "local", "--out", str(tmp_path / "o.json")],
                         cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(repo), "HOME": str(tmp_path),
                                            "DPFED_STORE": str(tmp_path / "store.sqlite")},
                         capture_output=True, text=True, timeout=300)
    assert out.returncode in (1, 2) and "DPFED_MAX_ID_CHARS" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "o.json").exists()
    # the limit is the environment's when set: raised, the same file loads
    monkeypatch.setenv("DPFED_MAX_ID_CHARS", str(2 * 10**9))
    ds = load_long_table(str(path), user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                         entities_from_data=True)
    assert ds.n_users == 20_001


def test_an_upload_one_byte_past_the_byte_limit_is_refused_plain_or_gzipped_and_one_at_it_is_read(monkeypatch):
    monkeypatch.setenv("DPFED_MAX_UPLOAD_MB", "0.01")
    limit = int(0.01 * 2**20)
    at = b"user,item,site\n" + b"u1,i1,A\n" * ((limit - 15) // 8)
    at += b"u" * (limit - len(at) - 1) + b"\n"
    assert len(at) == limit
    tables.check_upload_size(at, "at.csv")
    tables.check_upload_size(gzip.compress(at), "at.csv.gz")
    for over, name in ((at + b"x", "over.csv"), (gzip.compress(at + b"x"), "over.csv.gz")):
        with pytest.raises(DataError, match=rf"{name} unpacks to more than .*DPFED_MAX_UPLOAD_MB"):
            tables.check_upload_size(over, name)


def test_the_upload_limit_is_counted_in_mebibytes(monkeypatch):
    monkeypatch.delenv("DPFED_MAX_UPLOAD_MB", raising=False)
    monkeypatch.delenv("DPFED_MAX_UPLOAD_ROWS", raising=False)
    assert tables.upload_limits() == (16 * 2**20, 500_000)
    monkeypatch.setenv("DPFED_MAX_UPLOAD_MB", "1.5")
    assert tables.upload_limits()[0] == 3 * 2**19


def test_ids_at_the_id_character_limit_load_and_one_character_more_is_refused(monkeypatch):
    from dpfed_core.data.long_table import load_long_table

    text = b"user,item,site\nu1,i1,A\nu2,i1,A\nu3,i2,B\nu10,i2,B\n"  # 4 users, the longest of 3 characters
    opts = dict(filename="t.csv", user_col="user", item_col="item", entity_col="site", value_kind="implicit",
                entities_from_data=True)
    monkeypatch.setenv("DPFED_MAX_ID_CHARS", "12")
    assert load_long_table(text, **opts).n_users == 4
    monkeypatch.setenv("DPFED_MAX_ID_CHARS", "11")
    with pytest.raises(DataError, match=r"t\.csv, data row 4 \(line 5\): a user id of 3 characters among 4 distinct "
                                        r"user ids — 12 characters of ids, above the limit of 11"):
        load_long_table(text, **opts)


def test_a_table_file_past_the_largest_size_is_refused_before_it_is_read(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    path.write_bytes(b"user,item,site\nu1,i1,A\nu2,i2,B\n")
    monkeypatch.setattr(tables, "MAX_TABLE_BYTES", path.stat().st_size)
    assert len(tables.read_table(path)[0]) == 2
    monkeypatch.setattr(tables, "MAX_TABLE_BYTES", path.stat().st_size - 1)
    with pytest.raises(DataError, match="this tool reads; split the table or load a subset") as err:
        tables.read_table(path)
    assert err.value.param == "data"
