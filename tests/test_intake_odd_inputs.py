"""Odd input files through both front ends: the CLI and the dashboard's Data page give the same one
error naming what is wrong and the flag or control that fixes it, never a traceback, and leave the
input untouched."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpfed_core.cli import main
from dpfed_core.errors import ConfigError, DataError

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


def _ids(path: Path, *extra: str) -> tuple[list[str], int]:
    from dpfed_core.data.long_table import load_long_table

    ds = load_long_table(path, user_col="user", item_col="item", value_col="rating", entity_col="hospital",
                         value_max=5, entities_from_data=True, **dict(zip(extra[::2], extra[1::2])))
    return sorted(ds.entity_names), ds.n_users


def test_utf16_and_utf32_tables_are_read_as_the_utf8_table_is(tmp_path, capsys):
    text = table(entity=lambda u: f"Hôpital {u % 3}")
    (tmp_path / "u8.csv").write_text(text, encoding="utf-8")
    want = _ids(tmp_path / "u8.csv")
    for enc in ("utf-16", "utf-32", "utf-16-be"):  # a spreadsheet's "Unicode text" export has the mark
        path = tmp_path / f"{enc}.csv"
        path.write_bytes(("\ufeff" if enc == "utf-16-be" else "").encode(enc) + text.encode(enc))
        before = path.read_bytes()
        assert _ids(path) == want, enc
        assert path.read_bytes() == before
    tab = tmp_path / "tab.txt"
    tab.write_text(text.replace(",", "\t"), encoding="utf-16")
    assert _ids(tab) == want
    bare = tmp_path / "bare.csv"
    bare.write_bytes(text.encode("utf-16-le"))
    err = cli_error(capsys, bare)
    assert "UTF-16" in err and "--encoding utf-16-le" in err, err
    assert _ids(bare, "encoding", "utf-16-le") == want
    err = cli_error(capsys, tmp_path / "u8.csv", "--encoding", "utf-16")
    assert "byte-order mark" in err and "--encoding" in err, err
    err = cli_error(capsys, tmp_path / "utf-16.csv", "--encoding", "utf-8")
    assert "utf-16 byte-order mark" in err and "--encoding" in err, err
    _, msg = page_errors((tmp_path / "utf-16.csv").read_bytes())
    assert not msg, msg


def test_an_encoding_error_is_one_message_without_a_tail_about_separators(tmp_path, capsys):
    path = tmp_path / "mixed.csv"
    path.write_bytes(table(entity=lambda u: "Hôpital" if u % 2 else "h\xe9".encode("latin-1").decode("latin-1"))
                     .encode("utf-8").replace("hé".encode("utf-8"), b"h\xe9"))
    err = cli_error(capsys, path)
    assert "--encoding" in err and "separator" not in err, err


def test_the_text_encoding_the_data_page_names_is_a_control_there(tmp_path):
    bare = table(entity=lambda u: f"Hôpital {u % 3}").encode("utf-16-le")
    at, msg = page_errors(bare)
    assert "“Text encoding” on the Data page" in msg and "utf-16-le" in msg, msg
    at.selectbox(key="upload_encoding").set_value("utf-16-le").run()
    at.checkbox(key="upload_entities_from_data").check().run()
    at.button(key="build_upload").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert sorted(at.session_state["dataset"].entity_names) == ["Hôpital 0", "Hôpital 1", "Hôpital 2"]


def test_a_header_naming_a_used_column_twice_is_refused_not_read_from_the_first(tmp_path, capsys):
    lines = table().splitlines()
    path = tmp_path / "dup.csv"
    path.write_text("user,item,rating,rating,hospital\n"
                    + "\n".join(f"{u},{i},{r},1,{h}" for u, i, r, h in (ln.split(",") for ln in lines[1:])) + "\n")
    err = cli_error(capsys, path)
    assert "2 columns 'rating' (columns 3, 4)" in err, err
    _, msg = page_errors(path.read_bytes())
    assert "2 columns 'rating'" in msg, msg


def test_an_entity_whose_name_holds_a_comma_can_be_left_out_on_both_front_ends(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(table(entity=lambda u: '"A, ward"' if u % 3 == 0 else f"h{u % 3}"))
    err = cli_error(capsys, path, "--exclude-entities", "A, ward")
    assert "'A', 'ward'" in err and "'A, ward', h1" in err, err
    assert main(["run", "--data", str(path), *COLS, "--exclude-entities", '"A, ward"']) == 0
    assert "left out 1 declared entities: 'A, ward'" in capsys.readouterr().out
    err = cli_error(capsys, path, "--exclude-entities", 'h1,"A, ward",h1')
    assert "'h1' given more than once" in err and "name each once" in err, err
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.text_input(key="exclude_entities").set_value('"A, ward"').run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("t.csv", path.read_bytes(), "text/csv")).run()
    at.checkbox(key="upload_entities_from_data").check().run()
    at.button(key="build_upload").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert at.session_state["dataset"].entity_names == ["h1", "h2"]
    at.text_input(key="exclude_entities").set_value('"A, ward').run()
    assert any("quote is left open" in e.value for e in at.error), [e.value for e in at.error]
    at.text_input(key="exclude_entities").set_value('h1, "A, ward", h1').run()
    assert any("'h1' given more than once" in e.value for e in at.error), [e.value for e in at.error]


def test_an_item_features_file_that_matches_no_item_is_refused_not_all_zeros(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(table())
    feats = tmp_path / "features.csv"
    feats.write_text("item,class\n" + "".join(f"{i:04d},{'ab'[i % 2]}\n" for i in range(12)))
    err = cli_error(capsys, path, "--item-features", str(feats))
    assert "no item of the item features file" in err and "'0000'" in err and "--item-features" in err, err
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("t.csv", path.read_bytes(), "text/csv")).run()
    at.file_uploader(key="upload_features").set_value(("features.csv", feats.read_bytes(), "text/csv")).run()
    at.checkbox(key="upload_entities_from_data").check().run()
    at.button(key="build_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]
    msg = " ".join(e.value for e in at.error)
    assert "no item of the item features file" in msg and "“Item features”" in msg, msg


def test_out_naming_a_pipe_or_device_is_refused_and_left_in_place(tmp_path, capsys):
    """A device such as /dev/null was replaced by a plain file by the rename (as root): never test on
    a real device here, a named pipe in tmp_path takes the same path through the code."""
    import os
    import stat

    from dpfed_core.data.atomic import atomic_write

    path = tmp_path / "t.csv"
    path.write_text(table())
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    err = cli_error(capsys, path, "--out", str(pipe))
    assert "is a named pipe, not a file" in err and "--out" in err, err
    with pytest.raises(ConfigError, match="named pipe"):  # the write-time check, for callers that skip the early one
        atomic_write(pipe, "{}")
    assert stat.S_ISFIFO(os.lstat(pipe).st_mode)


def test_a_write_to_a_symbolic_link_is_refused_at_write_time_and_the_link_and_its_target_kept(tmp_path):
    """A caller that writes without the early check (the report, a site's policy file) must not replace
    the link by a file, nor write through it into what it points at (it may be an input)."""
    import os

    from dpfed_core.data.atomic import atomic_write

    target = tmp_path / "input.csv"
    target.write_text("user,item\n")
    link = tmp_path / "result.json"
    os.symlink(target, link)
    with pytest.raises(ConfigError, match="is a symbolic link"):
        atomic_write(link, "{}")
    assert os.path.islink(link) and os.readlink(link) == str(target)
    assert target.read_text() == "user,item\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["input.csv", "result.json"]


def test_a_rewritten_output_keeps_its_permissions_and_a_new_one_follows_the_umask(tmp_path):
    """A result its owner made private (0600) stays private when a later run rewrites it; a new file
    is created as any program's would be (0666 less the umask), not with the temporary file's 0600."""
    import os
    import stat

    from dpfed_core.data.atomic import atomic_write

    private = tmp_path / "private.json"
    private.write_text("{}")
    os.chmod(private, 0o600)
    atomic_write(private, '{"a": 1}')
    assert stat.S_IMODE(os.stat(private).st_mode) == 0o600 and private.read_text() == '{"a": 1}'
    shared = tmp_path / "shared.json"
    shared.write_text("{}")
    os.chmod(shared, 0o664)
    atomic_write(shared, "{}")
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o664
    old = os.umask(0o027)
    try:
        atomic_write(tmp_path / "new.json", "{}")
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.json").st_mode) == 0o640


def test_an_existing_read_only_output_is_refused_before_any_computation(tmp_path, monkeypatch):
    """The rename would replace a file its owner made read-only (the folder is writable). The suite runs
    as root, for whom every file is writable, so the permission answer is the one a user would get."""
    import os

    import dpfed_core.data.atomic as atomic

    kept = tmp_path / "kept.json"
    kept.write_text("{}")
    os.chmod(kept, 0o444)
    real_access = os.access
    monkeypatch.setattr(atomic.os, "access", lambda p, mode: False if str(p) == str(kept) else real_access(p, mode))
    with pytest.raises(ConfigError, match="exists and is read-only") as exc:
        atomic.check_writable(kept, "--out", ".json")
    assert "--out" in str(exc.value)
    assert atomic.check_writable(tmp_path / "other.json", "--out", ".json") == tmp_path / "other.json"


def test_an_output_ending_in_a_slash_names_a_folder_and_is_refused_before_anything_is_written(tmp_path):
    """`--out results/` means a folder that does not exist yet: a file named `results` is not what was asked."""
    from dpfed_core.data.atomic import atomic_write, check_writable

    with pytest.raises(ConfigError, match="names a folder") as exc:
        check_writable(f"{tmp_path}/results/", "--out", ".json")
    assert f"{tmp_path}/results/result.json" in str(exc.value) and "--out" in str(exc.value)
    with pytest.raises(ConfigError, match="names a folder"):
        atomic_write(f"{tmp_path}/results/", "{}")
    assert list(tmp_path.iterdir()) == []


def test_a_store_that_is_a_pipe_is_refused_not_waited_on_for_ever(tmp_path):
    import os
    import subprocess
    import sys

    path = tmp_path / "t.csv"
    path.write_text(table())
    pipe = tmp_path / "store"
    os.mkfifo(pipe)
    # a child process, so that a store that waits on the pipe fails this test instead of hanging it
    done = subprocess.run([sys.executable, "-m", "dpfed_core", "run", "--data", str(path), *COLS, "--store", str(pipe)],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "is a device, pipe or socket, not a file" in done.stderr and "--store" in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store", "t.csv"]


def test_a_declared_entity_list_of_one_name_is_named_as_the_cause(tmp_path, capsys):
    """A federation of one entity because the declared list names one: the error names that list
    (--entities), not the entity column the data was read with."""
    path = tmp_path / "t.csv"
    path.write_text(table())
    one = tmp_path / "one.txt"
    one.write_text("h0\n")
    cols = [c for c in COLS if c != "--entities-from-data"]
    code = main(["run", "--data", str(path), *cols, "--entities", str(one)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "the declared entity list leaves one entity ('h0')" in err and "--entities" in err
    assert "--entity-col" not in err


def test_data_that_is_a_device_is_named_as_not_a_file(capsys):
    code = main(["run", "--data", "/dev/null", *COLS])
    err = capsys.readouterr().err
    assert code == 2 and "'/dev/null' exists but is not a regular file or a directory" in err and "--data" in err


def test_the_command_lines_notes_name_flags_not_the_engines_parameter_names(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(table())
    assert main(["run", "--data", str(path), *COLS]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note: ")]
    kind = [n for n in notes if "values read as ratings" in n]
    assert kind and "declare --value-kind to change it" in kind[0]
    assert not any("value_kind" in n for n in notes)


def test_a_column_that_is_not_in_the_table_names_the_flag_that_sets_it(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(table())
    cols = list(COLS)
    cols[cols.index("--user-col") + 1] = "usr"
    code = main(["run", "--data", str(path), *cols])
    err = capsys.readouterr().err
    assert code == 2 and "has no column 'usr' (user column, --user-col) — did you mean 'user'?" in err
    assert "user_col" not in err


def test_a_decimal_comma_is_named_as_the_cause(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text("user;item;rating;hospital\n" + "".join(f"{u};{i};3,5;h{u % 3}\n" for u in range(9)
                                                            for i in range(3)))
    err = cli_error(capsys, path)
    assert "holds '3,5' where a number was expected" in err and "'.' as the decimal separator" in err
    assert "thousands" not in err


def test_a_thousands_separator_is_named_as_such_not_as_a_decimal_comma(tmp_path, capsys):
    """'1,200' is twelve hundred written with digit grouping, not 1.2: calling it a decimal comma would
    send the user to re-export with '.' decimals, which leaves the grouping in place."""
    path = tmp_path / "t.csv"
    path.write_text("user;item;rating;hospital\n" + "".join(f"{u};{i};1,200;h{u % 3}\n" for u in range(9)
                                                            for i in range(3)))
    err = cli_error(capsys, path)
    assert "holds '1,200' where a number was expected" in err and "thousands separator" in err
    assert "remove the separators" in err and "(1200, not 1,200)" in err and "decimal separator" not in err
    from dpfed_core.data.long_table import _comma_hint

    # a leading zero is no digit grouping: "0,500" is a decimal comma's 0.5
    assert "decimal separator" in _comma_hint("0,500") and "thousands" not in _comma_hint("0,500")


def test_dots_that_group_thousands_are_refused_not_read_as_decimals(tmp_path, capsys):
    """A comma-decimal locale writes twelve hundred '1.200' and three '3': read with '.' as the decimal
    point the count would be 1.2, a wrong value no check sees."""
    path = tmp_path / "t.csv"
    path.write_text("user;item;rating;hospital\n" + "".join(
        f"{u};{i};{'1.200' if (u, i) == (4, 1) else 3};h{u % 3}\n" for u in range(9) for i in range(3)))
    err = cli_error(capsys, path, "--value-kind", "counts", "--value-max", "2000")
    assert "line 15" in err and "holds '1.200' beside whole numbers below 1,000" in err, err
    assert "writes 1200 that way" in err and "it is 1.2" in err
    from dpfed_core.data.long_table import _dot_grouped

    # a number format with decimals writes every value so, and a '3.5' among them is a decimal point
    assert _dot_grouped(pd.Series(["1.200", "3.500", "4.000"])) is None
    assert _dot_grouped(pd.Series(["1.200", "3.5", "4"])) is None
    assert _dot_grouped(pd.Series(["1.200", "1200", "4"])) is None  # 1200 undotted: no grouping
    assert _dot_grouped(pd.Series(["12.000.000", "4"], dtype="category")) == "12.000.000"
    assert _dot_grouped(pd.Series([1.2, 4.0])) is None
    # only the values rows hold: a category left by a dropped row is none
    assert _dot_grouped(pd.Series(["1.200", "4"], dtype="category").iloc[1:]) is None


def test_a_windows_export_is_read_as_windows_1252_not_as_latin_1(tmp_path, capsys):
    """No UTF-8 in the file, a byte in 0x80–0x9F: a Windows export (€, curly quotes). Read as latin-1 the
    byte would be an invisible control character, and "Köln€" a name no entity list matches."""
    path = tmp_path / "cp1252.csv"
    path.write_bytes(table(entity=lambda u: ["Köln€", "Zürich", "“Nord”"][u % 3]).encode("cp1252"))
    assert _ids(path)[0] == ["Köln€", "Zürich", "“Nord”"]
    # a latin-1 file (no byte in 0x80–0x9F) reads the same either way
    latin = tmp_path / "latin1.csv"
    latin.write_bytes(table(entity=lambda u: ["Köln", "Zürich", "Genève"][u % 3]).encode("latin-1"))
    assert _ids(latin)[0] == ["Genève", "Köln", "Zürich"]
    ents = tmp_path / "sites.txt"
    ents.write_bytes("Köln€\nZürich\n“Nord”\n".encode("cp1252"))
    assert main(["run", "--data", str(path), *[c for c in COLS if c != "--entities-from-data"],
                 "--entities", str(ents)]) == 0
    out = capsys.readouterr()
    assert "not in the declared entity list" not in out.out + out.err


def test_a_declared_encoding_that_contradicts_the_files_byte_order_mark_is_refused(tmp_path, capsys):
    """A UTF-8 mark read as cp1252 would become a first column named "ï»¿user"; the error names the
    encoding the mark says, byte order included, which the Data page offers too."""
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf" + table().encode("utf-8"))
    err = cli_error(capsys, path, "--encoding", "cp1252")
    assert "utf-8 byte-order mark" in err and "--encoding utf-8" in err, err
    wide = tmp_path / "wide.csv"
    wide.write_bytes(table().encode("utf-16"))  # a little-endian mark on this machine
    err = cli_error(capsys, wide, "--encoding", "utf-16-be")
    assert "--encoding utf-16-le" in err, err


def test_a_utf16_list_with_its_mark_is_read_and_one_without_is_named(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(table(entity=lambda u: ["Zürich", "São Paulo", "Köln"][u % 3]))
    listed = [c for c in COLS if c != "--entities-from-data"]
    ents = tmp_path / "sites.txt"
    ents.write_bytes("Zürich\r\nSão Paulo\r\nKöln\r\n".encode("utf-16"))
    assert main(["run", "--data", str(path), *listed, "--entities", str(ents)]) == 0
    capsys.readouterr()
    bare = tmp_path / "bare.txt"
    bare.write_bytes("Zürich\nSão Paulo\nKöln\n".encode("utf-16-le"))
    assert main(["run", "--data", str(path), *listed, "--entities", str(bare)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "UTF-16" in err and "--encoding utf-16-le" in err and "not a text file" in err, err


def test_an_enormous_cell_is_cut_in_the_message_on_both_front_ends(tmp_path, capsys):
    """A cell of a million characters: the error quotes its start and its length, not the whole cell."""
    path = tmp_path / "huge.csv"
    lines = table().splitlines()
    u, i, _, h = lines[5].split(",")
    lines[5] = ",".join([u, i, "S" * 1_000_000, h])
    path.write_text("\n".join(lines) + "\n")
    err = cli_error(capsys, path)
    assert len(err) < 2000 and "(1,000,000 characters)" in err and "--value-col" in err, err[:300]
    _, msg = page_errors(path.read_bytes())
    assert len(msg) < 2000 and "1,000,000 characters" in msg, msg[:300]


def test_two_sessions_uploading_the_same_bytes_each_keep_their_own_file_name():
    """The read of an upload is cached per session: another session's file name is never shown, nor
    written into a run document, and a cached reply does not tell that these bytes were read before."""
    data = table().encode()
    first, _ = page_errors(data, "hospital_A_private_export.csv")
    second, _ = page_errors(data, "my_table.csv")
    assert first.session_state["dataset"].name == "hospital_A_private_export.csv"
    assert second.session_state["dataset"].name == "my_table.csv"


def test_a_result_document_is_written_under_a_json_name_only(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(table())
    for name in ("r.html", "r.csv"):
        err = cli_error(capsys, path, "--out", str(tmp_path / name))
        assert "JSON document" in err and "ending in .json" in err, err
        assert not (tmp_path / name).exists()
    assert main(["run", "--data", str(path), *COLS, "--out", str(tmp_path / "r.JSON")]) == 0
    capsys.readouterr()


def test_the_dashboards_command_line_keeps_the_uploads_encoding():
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.defaults import cli_command

    line = cli_command(RunConfig(), "t.csv", {"encoding": "cp1252", "user_col": "user"})
    assert "--encoding cp1252" in line and "not expressible" not in line
    line = cli_command(RunConfig(), "t.csv", {"items": ["a", "b"], "headerless": True})
    assert "not expressible as flags here: items — give the files you loaded on the Data page " \
           "(--items FILE)" in line, line
    # a header-less upload: the CLI names its columns as the Data page did
    assert " --no-header " in line


def test_the_dashboards_command_line_states_the_duplicate_rule_the_run_applied():
    """Counts are summed and implicit data keep one row whatever ``duplicates`` says: the Data page still
    passes its ratings choice, and the line must not claim the run kept the last row."""
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.defaults import cli_command

    for kind in ("counts", "implicit"):
        line = cli_command(RunConfig(), "t.csv", {"value_kind": kind, "value_max": 9.0, "duplicates": "last"})
        assert f"--value-kind {kind}" in line and "--duplicates" not in line, line
    for rule in ("last", "mean", "error"):
        line = cli_command(RunConfig(), "t.csv", {"value_kind": "ratings", "duplicates": rule})
        assert f"--duplicates {rule}" in line, line


def test_a_workbook_uploaded_on_the_data_page_gets_the_readers_advice_not_the_uploaders_refusal(tmp_path, capsys):
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # an .xlsx is a ZIP archive of XML parts
        z.writestr("[Content_Types].xml", "<Types/>")
        z.writestr("xl/workbook.xml", "<workbook/>")
    path = tmp_path / "table.xlsx"
    path.write_bytes(buf.getvalue())
    err = cli_error(capsys, path)  # before the page: its logger would write on this test's captured stream
    assert "is an Excel workbook, not a table" in err and "save the sheet as CSV" in err, err
    assert "Unzip" not in err and "--data" in err, err
    _, msg = page_errors(buf.getvalue(), "table.xlsx")
    assert "is an Excel workbook, not a table" in msg and "save the sheet as CSV" in msg, msg


def test_json_records_are_named_as_json_with_what_to_do_not_split_into_columns_of_the_data(tmp_path, capsys):
    """JSON read as CSV splits at its commas into 'columns' named by fragments of the records — a patient id
    in an error message. It is refused as JSON, in both front ends, whatever the file is called."""
    records = '[{"patient":"p0001","drug":"aspirin, 100 mg","stars":4,"ward":"A"}]'
    lines = '{"patient":"p0001","drug":"aspirin","stars":4,"ward":"A"}\n{"patient":"p0002","drug":"x","stars":2,"ward":"B"}\n'
    files = (("visits.json", records), ("visits.jsonl", lines), ("visits.csv", "\ufeff" + records),
             ("columns.json", '{"patient": {"0": "p0001"}}'))
    for name, text in files:  # every CLI error before the page: its logger would write on the captured stream
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        err = cli_error(capsys, path)
        assert "is JSON, not a table" in err and "CSV" in err and "--data" in err, err
        assert "p0001" not in err and "did you mean" not in err, err
    # a CSV whose header is in brackets is still a CSV
    path = tmp_path / "bracketed.csv"
    path.write_text("[user],[item]\nu1,i1\n")
    assert "is JSON" not in cli_error(capsys, path)
    for name, text in files:
        _, msg = page_errors(text.encode(), name)
        assert "is JSON, not a table" in msg and "p0001" not in msg, msg


def test_an_old_format_workbook_is_named_with_what_to_do_not_as_binary_bytes(tmp_path, capsys):
    """An .xls is an OLE2 compound file, not a ZIP: it must get the workbook's advice all the same."""
    data = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600 + b"\x01\x02" * 300
    path = tmp_path / "table.xls"
    path.write_bytes(data)
    err = cli_error(capsys, path)
    assert "is an Excel workbook, not a table" in err and "save the sheet as CSV" in err, err
    assert "binary bytes" not in err and "--data" in err, err
    _, msg = page_errors(data, "table.xls")
    assert "is an Excel workbook, not a table" in msg and "save the sheet as CSV" in msg, msg


def test_users_numbered_at_each_site_are_named_as_such_with_the_column_that_fixes_it(tmp_path, capsys):
    path = tmp_path / "local_ids.csv"
    text = "user,item,rating,hospital\n" + "".join(f"{u},{i},3,h{h}\n" for h in range(3) for u in range(1, 11)
                                                  for i in range(u % 4, u % 4 + 5))
    path.write_text(text)
    err = cli_error(capsys, path)
    assert "numbers its own users" in err and "--user-col" in err, err


def test_a_column_name_the_reader_made_up_is_no_column_of_the_file(tmp_path, capsys):
    """'hospital.1' for the second of two columns 'hospital', 'Unnamed: 3' for a blank header cell:
    names no file has, refused rather than read."""
    lines = table().splitlines()
    path = tmp_path / "dup.csv"
    path.write_text("user,item,rating,hospital,hospital\n" + "\n".join(f"{ln},x" for ln in lines[1:]) + "\n")
    cols = [c if c != "hospital" else "hospital.1" for c in COLS]
    before = path.read_bytes()
    assert main(["run", "--data", str(path), *cols]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "no column 'hospital.1'" in err and "2 columns 'hospital'" in err and path.read_bytes() == before, err
    blank = tmp_path / "blank.csv"
    blank.write_text("user,item,rating,\n" + "\n".join(lines[1:]) + "\n")
    cols = [c if c != "hospital" else "Unnamed: 3" for c in COLS]
    assert main(["run", "--data", str(blank), *cols]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert "column 4 has no name in the header" in err, err


def test_prose_apostrophes_are_no_quotes_for_the_long_value_cut():
    """Only a quoted value or an unbroken word is cut: a long note with "the nodes' reports … the
    protocol's fields" is printed whole."""
    from dpfed_core.errors import cut_long_values, render_message

    note = ("evaluation: read from the nodes' local reports (one operator holds every shard, "
            + "so the coordinator reads them " * 10 + "besides the protocol's public fields)")
    assert len(note) > 250 and cut_long_values(note) == note and render_message(note, {"x_y": "--x-y"}) == note
    assert "(1,000 characters)" in cut_long_values("holds '" + "S" * 1000 + "' where")


def test_a_line_that_ends_early_is_named_as_possibly_short_not_only_as_an_empty_cell(tmp_path, capsys):
    text = table().splitlines()
    short, blank = tmp_path / "short.csv", tmp_path / "blank.csv"
    short.write_text("\n".join([*text[:3], "7,3", *text[3:]]) + "\n")
    blank.write_text("\n".join([*text[:3], "7,3,,h1", *text[3:]]) + "\n")
    err = cli_error(capsys, short)
    assert err.startswith(f"error: {short}, data row 3 (line 4): columns ") and "'rating'" in err and "'hospital'" in err
    assert "the line may end early (fewer fields than the header) or leave them blank" in err and "--drop-missing" in err
    # one empty cell of a full line: named as that cell alone
    err = cli_error(capsys, blank)
    assert "column 'rating' is empty." in err and "end early" not in err, err
    _, msg = page_errors(short.read_bytes())
    assert "the line may end early" in msg, msg


def test_a_declared_entity_list_and_the_consent_to_read_it_from_the_data_are_not_both_taken(tmp_path, capsys):
    path, ents = tmp_path / "t.csv", tmp_path / "entities.txt"
    path.write_text(table())
    ents.write_text("h0\nh1\n")  # h2 left out: whichever won would decide who takes part
    err = cli_error(capsys, path, "--entities", str(ents))
    assert "both a declared entity list (--entities FILE) and --entities-from-data" in err and "keep one" in err, err
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("t.csv", path.read_bytes(), "text/csv")).run()
    at.file_uploader(key="upload_entities").set_value(("entities.txt", ents.read_bytes(), "text/plain")).run()
    at.checkbox(key="upload_entities_from_data").check().run()
    at.button(key="build_upload").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["dataset"].name != "t.csv"  # the upload was not loaded
    assert any("both a declared entity list" in e.value and "keep one" in e.value for e in at.error), \
        [e.value for e in at.error]


@pytest.mark.parametrize("first, rest, last", [("", ",7", ",7"), ("", ",", ",7"), ("1,", "", "")],
                         ids=["value after", "value on a later line", "unnamed first column"])
def test_data_lines_with_one_field_more_than_the_header_are_refused_not_read_shifted(tmp_path, capsys, first, rest,
                                                                                      last):
    """pandas reads the first field of such lines as a row label and every column under the next one's
    name; the message then blamed a column (an empty value, a non-number) the file never had wrong. An
    unnamed first column and a value after the last named one cannot be told apart: refused."""
    lines = table().splitlines()
    path = tmp_path / "wide.csv"
    path.write_text(lines[0] + "\n" + "\n".join(first + ln + rest for ln in lines[1:-1])
                    + "\n" + first + lines[-1] + last + "\n")
    err = cli_error(capsys, path)
    assert err == (f"error: {path}: data lines have 5 fields but the header names 4 columns, so the columns cannot "
                   "be matched to their names (a first column without a name, such as row numbers, or a value after "
                   "the last named column). Give every column a name in the header line, or remove the extra field "
                   "from the data lines. [--data]"), err
    _, msg = page_errors(path.read_bytes())
    assert "data lines have 5 fields but the header names 4 columns" in msg, msg


def test_a_separator_ending_every_data_line_reads_the_table_as_written(tmp_path):
    """Some exports end each line with the separator: every line's extra field is empty, so the fields are
    put back under their names — the same dataset as the file without it."""
    from dpfed_core.data.loaders import load_data

    lines = table().splitlines()
    plain, trailing = tmp_path / "plain.csv", tmp_path / "trailing.csv"
    plain.write_text(table())
    trailing.write_text(lines[0] + "\n" + "\n".join(ln + "," for ln in lines[1:]) + "\n")
    opts = dict(user_col="user", item_col="item", value_col="rating", entity_col="hospital", value_kind="ratings",
                value_max=5, entities_from_data=True)
    a, b = load_data(str(plain), **opts), load_data(str(trailing), **opts)
    assert (a.X != b.X).nnz == 0 and list(a.user_ids) == list(b.user_ids) and list(a.item_names) == list(b.item_names)
    assert list(a.entity_names) == list(b.entity_names)


def test_a_header_repeating_a_name_is_listed_as_written_and_said(tmp_path, capsys):
    """pandas renames the second 'hospital' to 'hospital.1'; the message lists the file's own names and
    says which one the header repeats. A real name such as 'count.1' is listed as it is."""
    lines = table().splitlines()
    path = tmp_path / "twice.csv"
    path.write_text("user,item,rating,hospital,hospital\n" + "\n".join(ln + ",x" for ln in lines[1:]) + "\n")
    err = cli_error(capsys, path, "--user-col", "patient")
    assert "Columns found: 'user', 'item', 'rating', 'hospital', 'hospital'." in err, err
    assert "The header names 'hospital' more than once: give each column its own name." in err
    real = tmp_path / "dot.csv"
    real.write_text("user,item,rating.1,hospital\n" + "\n".join(lines[1:]) + "\n")
    err = cli_error(capsys, real)
    assert "'rating.1'" in err and "more than once" not in err, err


def test_a_header_repeating_a_name_is_refused_on_upload_before_the_mapper_offers_a_made_up_name(tmp_path, capsys):
    """Two columns 'site': the reader calls the second 'site.1', a name the file does not have. The Data page
    refuses the upload before any mapping, naming 'site' as written and its columns, as the CLI does."""
    lines = table().splitlines()
    path = tmp_path / "twice.csv"
    path.write_text("user,item,rating,site,site\n" + "\n".join(f"{ln},{ln.rsplit(',', 1)[1]}" for ln in lines[1:])
                    + "\n")
    err = cli_error(capsys, path, "--entity-col", "site")
    assert "the header names 2 columns 'site' (columns 4, 5)" in err, err
    at, msg = page_errors(path.read_bytes())
    msg = msg.replace("\\", "")  # Markdown escapes of the page's message
    offered = [o for w in at.selectbox if w.key.startswith("map_") for o in w.options]
    assert "site.1" not in offered and not any(w.key == "map_entity" for w in at.selectbox), offered
    assert "the header names 2 columns 'site' (columns 4, 5)" in msg and "site.1" not in msg, msg
    assert "give each column its own name in the file" in msg and "“Long table” upload on the Data page" in msg, msg
    attrs = b"user,zip,zip\n" + b"".join(f"{u},{u % 9}0000,x\n".encode() for u in range(30))
    at.file_uploader(key="upload").set_value(("table.csv", table().encode(), "text/csv")).run()
    at.file_uploader(key="upload_attrs").set_value(("u.user", attrs, "text/csv")).run()
    msg = " ".join(e.value for e in at.error).replace("\\", "")
    assert "2 columns 'zip' (columns 2, 3)" in msg and "“User attributes (optional)” upload" in msg, msg
    assert not any(w.key == "map_entity" for w in at.selectbox) and not at.exception


def test_a_column_the_header_leaves_blank_is_not_offered_by_the_mapper_and_said(tmp_path):
    """pandas names a blank header cell 'Unnamed: 3', a name the file does not have and the loader refuses:
    the mapper leaves it out, says which column it is and how to map it, and the table still builds from
    the named columns. A column really named 'Unnamed: 3' is offered."""
    lines = table().splitlines()
    text = "user,item,rating,,hospital\n" + "\n".join(
        f"{u},{i},{r},{n},{h}" for n, (u, i, r, h) in enumerate(ln.split(",") for ln in lines[1:])) + "\n"
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("blank.csv", text.encode(), "text/csv")).run()
    offered = {o for w in at.selectbox if w.key.startswith("map_") for o in w.options}
    assert {"user", "item", "rating", "hospital"} <= offered and not any("Unnamed" in o for o in offered), offered
    said = " ".join(c.value for c in at.caption)
    assert "Column 4 has no name in the header line, so it is not offered below" in said, said
    at.checkbox(key="upload_entities_from_data").check().run()
    at.button(key="build_upload").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert sorted(at.session_state["dataset"].entity_names) == ["h0", "h1", "h2"]
    named = text.replace("rating,,hospital", "rating,Unnamed: 3,hospital", 1)
    at.file_uploader(key="upload").set_value(("named.csv", named.encode(), "text/csv")).run()
    offered = {o for w in at.selectbox if w.key.startswith("map_") for o in w.options}
    assert "Unnamed: 3" in offered and "no name in the header" not in " ".join(c.value for c in at.caption)


def test_a_column_really_named_site_dot_1_is_offered_and_read(tmp_path, capsys):
    text = table().replace("user,item,rating,hospital", "user,item,rating,site.1", 1)
    path = tmp_path / "dot.csv"
    path.write_text(text)
    assert main(["run", "--data", str(path), *COLS[:6], "--entity-col", "site.1", *COLS[8:]]) == 0
    capsys.readouterr()
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("dot.csv", path.read_bytes(), "text/csv")).run()
    assert "site.1" in at.selectbox(key="map_entity").options and not at.error
    at.selectbox(key="map_entity").set_value("site.1").run()
    at.checkbox(key="upload_entities_from_data").check().run()
    at.button(key="build_upload").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert sorted(at.session_state["dataset"].entity_names) == ["h0", "h1", "h2"]


def test_an_entity_written_as_invisible_characters_is_named_as_showing_empty_on_both_front_ends(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(table(entity=lambda u: "\u200b" if u == 4 else f"h{u % 3}"), encoding="utf-8")
    err = cli_error(capsys, path)
    assert err == (f"error: {path}, data row 25 (line 26): column 'hospital' holds only invisible characters "
                   "('\\u200b'), so it shows as empty (and in 5 more rows). Every row needs a value in its entity "
                   "column; fill the gaps, or leave such rows out with --drop-missing."), err
    assert main(["run", "--data", str(path), *COLS, "--drop-missing"]) == 0
    assert "dropped 6 rows with an empty value" in capsys.readouterr().out
    _, msg = page_errors(path.read_bytes())
    assert "column 'hospital' holds only invisible characters" in msg and "Rows with a missing value" in msg, msg


def test_a_quote_never_closed_is_named_by_its_line_on_both_front_ends(tmp_path, capsys):
    lines = table().splitlines()
    lines[1] = lines[1].replace(",1,", ',"1\n2",', 1)  # a quoted field spanning two lines before it
    lines[7] = lines[7].replace(",h", ',"h', 1)
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    said = ("line 9: a field opens a double quote (\") that is never closed, so every line after it would be read "
            "into that one field. Close the quote, or remove it (a quote inside a field is written doubled, \"\", "
            "within a field in quotes)")
    assert cli_error(capsys, path) == f"error: {path}, {said} [--data]"
    _, msg = page_errors(path.read_bytes())
    assert f"table.csv, {said}" in msg.replace("\\", ""), msg  # the page escapes Markdown signs


def test_a_column_named_like_a_flag_is_given_attached_as_the_error_says(tmp_path, capsys):
    path = tmp_path / "t.csv"
    path.write_text(table().replace("user,item", "--user-col,item", 1))
    cols = [c if c != "user" else "--user-col" for c in COLS]
    before = path.read_bytes()
    assert main(["run", "--data", str(path), *cols]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: argument --user-col: expected one argument: give its value after it; a value that starts "
                   "with '-' is written attached, --user-col=VALUE (see `python -m dpfed_core run --help`)"), err
    i = cols.index("--user-col")
    assert main(["run", "--data", str(path), *cols[:i], "--user-col=--user-col", *cols[i + 2:]]) == 0
    assert "30 users" in capsys.readouterr().out and path.read_bytes() == before


def test_a_header_repeated_by_files_joined_one_after_another_is_skipped_and_said(tmp_path, capsys):
    from dpfed_core.data.long_table import load_long_table

    text = table()
    lines = text.splitlines()
    joined = tmp_path / "joined.csv"
    joined.write_text("\n".join([*lines[:50], lines[0], *lines[50:], " " + lines[0].replace(",", " , ")]) + "\n")
    opts = dict(user_col="user", item_col="item", entity_col="hospital", value_kind="implicit",
                entities_from_data=True)
    for value_col in (None, "rating"):
        ds = load_long_table(joined, value_col=value_col, **opts)
        want = load_long_table(text.encode(), filename="t.csv", value_col=value_col, **opts)
        assert list(ds.user_ids) == list(want.user_ids) and list(ds.item_ids) == list(want.item_ids)
        assert list(ds.entity_names) == ["h0", "h1", "h2"] and (ds.X != want.X).nnz == 0
        assert "skipped 2 lines repeating the header (lines 51, 183): files joined one after another; a header is no " \
               "data row" in ds.notes, ds.notes
    assert main(["run", "--data", str(joined), *COLS]) == 0
    out = capsys.readouterr().out
    assert "30 users" in out and "note: skipped 2 lines repeating the header (lines 51, 183)" in out, out


def test_a_header_repeated_inside_an_upload_joined_to_user_attributes_is_skipped_on_the_data_page():
    """The Data page's upload with a user-attribute table skips a header line repeated mid-file as the plain
    upload and the CLI do, with the same note; it was joined first, as a user 'user' without attributes."""
    lines = table().splitlines()
    joined = ("\n".join([*lines[:50], lines[0], *lines[50:]]) + "\n").encode()
    attrs = b"user,zip\n" + b"".join(f"{u},{u % 3}0000\n".encode() for u in range(30))
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/1_Data.py").run()
    at.radio(key="data_source").set_value("upload").run()
    at.file_uploader(key="upload").set_value(("joined.csv", joined, "text/csv")).run()
    at.file_uploader(key="upload_attrs").set_value(("users.csv", attrs, "text/csv")).run()
    at.selectbox(key="map_entity").set_value("attribute: zip").run()
    at.checkbox(key="upload_entities_from_data").check().run()
    at.button(key="build_upload").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    ds = at.session_state["dataset"]
    assert ds.n_users == 30 and sorted(ds.entity_names) == ["00000", "10000", "20000"]
    assert "skipped 1 line repeating the header (line 51): files joined one after another; a header is no data " \
           "row" in ds.notes, ds.notes


def test_a_repeated_header_written_with_a_mark_or_odd_spaces_is_skipped_in_text_and_category_columns(tmp_path):
    """A header line repeated with a byte-order mark, a no-break space or spaces around its names reads as
    the header (id_text, as ids are read) whether its columns are categories (a read file) or plain text."""
    import numpy as np

    from dpfed_core.data.long_table import _skip_repeated_headers, load_long_table

    text = table()
    lines = text.splitlines()
    odd = "\ufeffuser,item\u00a0, rating ,\u200bhospital"
    path = tmp_path / "joined.csv"
    path.write_text("\n".join([*lines[:50], odd, *lines[50:]]) + "\n", encoding="utf-8")
    opts = dict(user_col="user", item_col="item", value_col="rating", entity_col="hospital", value_max=5,
                entities_from_data=True)
    ds, want = load_long_table(path, **opts), load_long_table(text.encode(), filename="t.csv", **opts)
    assert list(ds.user_ids) == list(want.user_ids) and (ds.X != want.X).nnz == 0
    assert any(n.startswith("skipped 1 line repeating the header (line 51)") for n in ds.notes), ds.notes
    plain = pd.DataFrame({c: pd.Series([v, w], dtype=object) for c, v, w in
                          zip(["user", "item", "rating", "hospital"], odd.split(","), ["u1", "i1", "3", "h1"])})
    for frame in (plain, plain.astype("category"), plain.astype("str")):
        notes: list[str] = []
        kept = _skip_repeated_headers(frame, "t.csv", True, list(frame.columns), notes, True)
        assert list(kept.index) == [1] and notes[0].startswith("skipped 1 line repeating the header (line 2)"), notes
    data_row = plain.copy()
    data_row.loc[0, "rating"] = "\u00a0ratings"
    assert np.array_equal(_skip_repeated_headers(data_row, "t.csv", True, list(plain.columns), [], True).index, [0, 1])


def test_true_false_words_in_a_text_value_column_read_as_a_parquet_boolean_column_does(tmp_path):
    """A spreadsheet writes a column of booleans as TRUE/FALSE, Python as True/False: read as 1 and 0, the
    dataset is the one of the same table in Parquet with a boolean column, note included."""
    import io

    import numpy as np

    from dpfed_core.data.long_table import load_long_table
    from dpfed_core.errors import DataError

    rows = [(f"u{u}", f"i{i}", (u * i) % 3 == 0, f"h{u % 3}") for u in range(30) for i in range(u % 4, u % 4 + 6)]
    frame = pd.DataFrame(rows, columns=["user", "item", "clicked", "hospital"])
    opts = dict(user_col="user", item_col="item", value_col="clicked", entity_col="hospital",
                value_kind="implicit", entities_from_data=True)
    buf = io.BytesIO()
    frame.to_parquet(buf)
    want = load_long_table(buf.getvalue(), filename="t.parquet", **opts)
    spellings = [("TRUE", "FALSE"), ("True", "False"), ("true", "false")]
    for k, (yes, no) in enumerate([*spellings, ("TRUE", " false "), ("tRuE", "False")]):
        words = np.where(frame["clicked"], yes, no)
        if k == 3:  # one column writing both ways, as hand-edited files do
            words[::2] = np.where(frame["clicked"], "True", "FALSE")[::2]
        text = frame.assign(clicked=words).to_csv(index=False)
        ds = load_long_table(text.encode(), filename="t.csv", **opts)
        assert list(ds.user_ids) == list(want.user_ids) and list(ds.item_ids) == list(want.item_ids)
        assert list(ds.entity_names) == list(want.entity_names) and (ds.X != want.X).nnz == 0
        assert ds.notes == want.notes and "column 'clicked' holds true and false: read as 1 and 0" in ds.notes
    with pytest.raises(DataError, match="column 'clicked' holds 'yes' where a number was expected"):
        load_long_table(frame.assign(clicked=np.where(frame["clicked"], "yes", "no")).to_csv(index=False).encode(),
                        filename="t.csv", **opts)


def test_a_value_column_mixing_numbers_and_true_false_words_is_refused_naming_the_row(tmp_path, capsys):
    lines = table().splitlines()
    lines[4] = lines[4].rsplit(",", 2)[0] + ",TRUE," + lines[4].rsplit(",", 1)[1]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    said = ("data row 4 (line 5): column 'rating' holds 'TRUE', a true/false word, where its other rows hold numbers "
            "(such as '1') (1 such row). A column is read as true (1) and false (0) only when every value is one of "
            "those words: write the values as numbers throughout (1 for true, 0 for false), or take the values from "
            "another column")
    err = cli_error(capsys, path)
    assert err.startswith(f"error: {path}, {said}") and "--value-col" in err, err
    _, msg = page_errors(path.read_bytes())
    assert f"table.csv, {said}" in msg.replace("\\", "") and "“Value”" in msg, msg


def test_rows_ending_in_cr_cr_lf_are_one_line_each_in_the_rows_and_lines_an_error_names(tmp_path, capsys):
    """A CR LF passed through a writer that adds its own CR ends each line in '\\r\\r\\n': one line end, not
    two with a blank line between; the table reads as with '\\n', and an error names the file's own line."""
    import gzip

    from dpfed_core.data.long_table import load_long_table

    text = table()
    opts = dict(user_col="user", item_col="item", value_col="rating", entity_col="hospital", value_max=5,
                entities_from_data=True)
    want = load_long_table(text.encode(), filename="t.csv", **opts)
    crcr = text.replace("\n", "\r\r\n").encode()
    for src, name in ((crcr, "t.csv"), (gzip.compress(crcr), "t.csv.gz")):
        ds = load_long_table(src, filename=name, **opts)
        assert list(ds.user_ids) == list(want.user_ids) and (ds.X != want.X).nnz == 0 and ds.notes == want.notes
    lines = text.splitlines()
    lines[9] = lines[9].rsplit(",", 2)[0] + ",x," + lines[9].rsplit(",", 1)[1]
    path = tmp_path / "crcr.csv"
    path.write_bytes(("\r\r\n".join(lines) + "\r\r\n").encode())
    said = "data row 9 (line 10): column 'rating' holds 'x' where a number was expected (1 such row)"
    err = cli_error(capsys, path)
    assert err.startswith(f"error: {path}, {said}"), err
    _, msg = page_errors(path.read_bytes())
    assert f"table.csv, {said}" in msg.replace("\\", ""), msg


def test_a_spreadsheets_separator_hint_line_is_no_header_and_lines_still_count_it(tmp_path, capsys):
    from dpfed_core.data.long_table import load_long_table

    text = table()
    hinted = tmp_path / "hint.csv"
    hinted.write_bytes(b"\xef\xbb\xbfsep=;\r\n" + text.replace(",", ";").replace("\n", "\r\n").encode())
    opts = dict(user_col="user", item_col="item", value_col="rating", entity_col="hospital", value_max=5,
                entities_from_data=True)
    want = load_long_table(text.encode(), filename="t.csv", **opts)
    for src in (hinted, hinted.read_bytes()):
        ds = load_long_table(src, filename=None if src is hinted else "hint.csv", **opts)
        assert list(ds.user_ids) == list(want.user_ids) and (ds.X != want.X).nnz == 0
    lines = hinted.read_bytes().split(b"\r\n")
    lines[9] = lines[9].rsplit(b";", 2)[0] + b";x;" + lines[9].rsplit(b";", 1)[1]
    hinted.write_bytes(b"\r\n".join(lines))
    err = cli_error(capsys, hinted)
    assert err.startswith(f"error: {hinted}, data row 8 (line 10): column 'rating' holds 'x' where a number was "
                          "expected"), err


def test_rows_read_into_one_quoted_field_are_named_on_both_front_ends_and_a_cell_with_a_line_break_is_kept(
        tmp_path, capsys):
    """A tab-separated export writes a name that starts with a double quote as it is; read as a quoted field it
    runs to the next quote, and the rows between become part of one item id: a table that parses, with rows
    merged. A field whose lines hold a row's worth of separators is refused by its row and line; a cell that
    only spans lines (a spreadsheet's line break in a name) is read."""
    lines = table().replace(",", "\t").splitlines()
    lines[3] = lines[3].replace("\t", '\t"', 1)  # data row 3 opens a quote ...
    lines[6] = lines[6] + '"'  # ... closed at the end of line 7: rows 4-6 fall inside it
    path = tmp_path / "t.tsv"
    path.write_text("\n".join(lines) + "\n")
    said = ("data row 3 (line 4): column 'item' spans 4 lines, and a line inside it has as many separators as a row "
            "('")
    err = cli_error(capsys, path)
    assert err.startswith(f"error: {path}, {said}") and "close the quote" in err.lower(), err
    _, msg = page_errors(path.read_bytes(), "table.tsv")
    assert f"table.tsv, {said}" in msg.replace("\\", ""), msg
    kept = table().splitlines()
    kept[2] = '0,"aspirin, 81\nmg",2,h0'  # a name over two lines, with a separator in it
    ok = tmp_path / "ok.csv"
    ok.write_text("\n".join(kept) + "\n")
    assert main(["run", "--data", str(ok), *COLS]) == 0
    assert "30 users" in capsys.readouterr().out


def test_an_empty_cell_after_a_quoted_field_spanning_lines_is_named_not_an_internal_error(tmp_path, capsys):
    path = tmp_path / "t.csv"
    lines = table().splitlines()
    lines[1] = lines[1].replace(",1,", ',"1\n2",', 1)
    lines[5] = lines[5].rsplit(",", 1)[0] + ","
    path.write_text("\n".join(lines) + "\n")
    err = cli_error(capsys, path)
    assert err == (f"error: {path}, data row 5 (line 7): column 'hospital' is empty. Every row needs a value in its "
                   "entity column; fill the gaps, or leave such rows out with --drop-missing."), err


def test_a_workbook_is_told_by_its_name_when_its_bytes_are_damaged_and_an_ods_by_its_content(tmp_path):
    """A damaged .xlsx still gets the workbook's advice, and an OpenDocument spreadsheet under any name is a
    workbook, not merely a ZIP archive to unzip."""
    import io
    import zipfile

    from dpfed_core.data.tables import read_table
    from dpfed_core.errors import DataError

    with pytest.raises(DataError, match="is an Excel workbook, not a table"):
        read_table(b"\x00\x01damaged" * 60, filename="table.xlsx")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # an .ods opens with its mimetype entry
        z.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        z.writestr("content.xml", "<office:document-content/>")
    with pytest.raises(DataError, match="is an Excel workbook, not a table"):
        read_table(buf.getvalue(), filename="export.csv")


def test_blank_lines_before_the_header_are_skipped_and_lines_still_count_them(tmp_path, capsys):
    """An export that opens with an empty line: read as the header, it left the table without a column name
    ("Columns found: ." on both front ends). The header is the first line holding a value, and the line an error
    names is the file's own, blank lines included, with or without a byte-order mark, a separator hint or a
    header."""
    from dpfed_core.data.long_table import load_long_table
    from dpfed_core.data.upload import upload_columns

    text = table()
    opts = dict(user_col="user", item_col="item", value_col="rating", entity_col="hospital", value_max=5,
                entities_from_data=True)
    want = load_long_table(text.encode(), filename="t.csv", **opts)
    for lead in ("\n", "\r\n\r\n", " \t\n", "\ufeff\n\n"):
        data = (lead + text).encode()
        ds = load_long_table(data, filename="t.csv", **opts)
        assert list(ds.user_ids) == list(want.user_ids) and (ds.X != want.X).nnz == 0
        assert list(upload_columns(data, "t.csv").columns) == ["user", "item", "rating", "hospital"]
    tsv = ("\n" + text.replace(",", "\t")).encode()
    assert (load_long_table(tsv, filename="t.tsv", **opts).X != want.X).nnz == 0
    lines = text.splitlines()
    lines[9] = lines[9].rsplit(",", 2)[0] + ",x," + lines[9].rsplit(",", 1)[1]
    path = tmp_path / "lead.csv"
    path.write_text("\n\n" + "\n".join(lines) + "\n")
    err = cli_error(capsys, path)
    assert err.startswith(f"error: {path}, data row 9 (line 12): column 'rating' holds 'x' where a number was "
                          "expected"), err
    hinted = ("\nsep=;\n" + "\n".join(lines).replace(",", ";") + "\n").encode()
    with pytest.raises(DataError, match=r"data row 9 \(line 12\): column 'rating' holds 'x'"):
        load_long_table(hinted, filename="t.csv", **opts)
    rows = "\n".join(lines[1:]).replace("x", "3")
    bare = load_long_table(("\n" + rows + "\n").encode(), filename="t.csv", header=False, user_col="column 1",
                           item_col="column 2", value_col="column 3", entity_col="column 4", value_kind="ratings",
                           entities_from_data=True)
    assert bare.n_users == want.n_users and bare.X.nnz == want.X.nnz
