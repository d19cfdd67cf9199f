"""Odd input files through both front ends: the CLI and the dashboard's Data page give the same one
error naming what is wrong and the flag or control that fixes it, never a traceback, and leave the
input untouched."""
from __future__ import annotations

import hashlib
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dpfed_core.cli import main

REPO = Path(__file__).resolve().parents[1]
COLS = ["--user-col", "user", "--item-col", "item", "--value-col", "rating", "--entity-col", "hospital",
        "--value-max", "5", "--entities-from-data", "--method", "kmeans", "--simulation", "--max-iter", "5"]


def table(entity=lambda u: f"h{u % 3}") -> str:
    lines = [f"{u},{i},{(u + i) % 5 + 1},{entity(u)}" for u in range(30) for i in range(u % 4, u % 4 + 6)]
    return "user,item,rating,hospital\n" + "\n".join(lines) + "\n"


def cli_error(capsys, path: Path, *extra: str) -> str:
    before = hashlib.sha256(path.read_bytes()).hexdigest()
    code = main(["run", "--data", str(path), *COLS, *extra])
    err = capsys.readouterr().err
    assert hashlib.sha256(path.read_bytes()).hexdigest() == before
    assert code == 2 and "Traceback" not in err and "internal error" not in err, err
    return err.strip().splitlines()[-1]


def page_errors(data: bytes, name: str = "table.csv") -> tuple[AppTest, str]:
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload").set_value((name, data, "text/csv")).run()
    if any(b.key == "build_upload" for b in at.button):
        at.checkbox(key="upload_entities_from_data").check().run()
        at.button(key="build_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at, " ".join(e.value for e in at.error)


def test_an_entity_column_with_no_value_at_all_is_named_not_an_internal_error(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(table(entity=lambda u: ""))
    err = cli_error(capsys, path)
    assert "column 'hospital' is empty" in err and "--drop-missing" in err, err
    err = cli_error(capsys, path, "--drop-missing")
    assert "empty value" in err, err
    _, msg = page_errors(path.read_bytes())
    assert "column 'hospital' is empty" in msg and "Rows with a missing value" in msg, msg


def test_the_default_rank_above_the_items_is_refused_as_the_federate_page_refuses_it(tmp_path, capsys):
    path = tmp_path / "one_item.csv"
    path.write_text(table().splitlines()[0] + "\n" + "\n".join(f"{u},i,{u % 5 + 1},h{u % 3}" for u in range(30)) + "\n")
    err = cli_error(capsys, path)
    assert "default rank 8" in err and "--rank 1" in err, err
    assert main(["run", "--data", str(path), *COLS, "--rank", "1"]) == 0
    capsys.readouterr()
