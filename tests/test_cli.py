"""The command line as a user runs it: documents written, one-line errors, exit codes."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpfed_core.cli import main
from tests.toy import toy_csv

REPO = Path(__file__).resolve().parents[1]


def _toy_csv(path: Path, n_entities=3, users=30, items=25, seed=0) -> Path:
    return toy_csv(path, n_entities, users, items, seed)


TOY_ARGS = ["--user-col", "patient", "--item-col", "drug", "--value-col", "count", "--entity-col", "hospital",
            "--value-kind", "counts", "--value-max", "5"]


def test_issue_check_command_on_movielens(ml100k_dir, tmp_path):
    out = tmp_path / "r.json"
    code = main(["run", "--data", str(ml100k_dir), "--method", "kmeans", "--mode", "zero", "--rank", "10",
                 "--k", "50", "--seed", "0", "--out", str(out)])
    assert code == 0
    doc = json.loads(out.read_text())
    assert len(doc["entities"]) >= 10
    assert {"config", "entities", "overall", "privacy", "messages", "timings"} <= set(doc)
    assert doc["privacy"]["epsilon"] == "inf"
    # the reference protocol measured ≈ 0.065 for k-means prototypes
    assert 0.05 < doc["overall"]["mar"] < 0.08


def test_run_with_compare_and_sweep(tmp_path, capsys):
    csv = _toy_csv(tmp_path / "toy.csv")
    out = tmp_path / "r.json"
    assert main(["run", "--data", str(csv), *TOY_ARGS, "--k", "5", "--rank", "3",
                 "--compare", "individual,popularity", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert set(doc["comparison"]) == {"individual", "popularity"}
    assert [e["name"] for e in doc["entities"]] == ["hospital 0", "hospital 1", "hospital 2"]
    printed = capsys.readouterr().out
    assert "individual" in printed and "mar" in printed
    sw = tmp_path / "s.json"
    assert main(["sweep", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", "--k", "5", "--rank", "3",
                 "--seeds", "0,1", "--references", "individual", "--out", str(sw)]) == 0
    sdoc = json.loads(sw.read_text())
    assert len(sdoc["runs"]) == 4 and "crossing_epsilon" in sdoc


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--epsilon", "0"], "ε must be a positive"),
        (["--epsilon", "-1"], "ε must be a positive"),
        (["--k", "500"], "largest entity"),
        (["--rank", "0"], "rank"),
        (["--method", "magic"], "unknown method"),
    ],
)
def test_bad_parameters_one_line_error(tmp_path, capsys, extra, needle):
    csv = _toy_csv(tmp_path / "toy.csv")
    code = main(["run", "--data", str(csv), *TOY_ARGS, "--method", "kmeans", *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("error: ") and needle in err and err.count("\n") == 1
    assert "Traceback" not in err


def test_bad_data_one_line_error(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    bad.write_text("patient,drug,count,hospital\na,x,lots,h1\n")
    assert main(["run", "--data", str(bad), *TOY_ARGS]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "count" in err and "Traceback" not in err
    assert main(["run", "--data", str(tmp_path / "missing.csv")]) == 2
    assert bad.read_text() == "patient,drug,count,hospital\na,x,lots,h1\n"  # never modified


def test_module_entry_point_and_help():
    r = subprocess.run([sys.executable, "-m", "dpfed_core", "run", "--help"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--epsilon" in r.stdout and "examples:" in r.stdout
    r = subprocess.run([sys.executable, "-m", "dpfed_core", "methods"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "dp-prototypes" in r.stdout and "central" in r.stdout
    r = subprocess.run([sys.executable, "-m", "dpfed_core", "run", "--data", "nowhere.csv"], cwd=REPO,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stderr.startswith("error: ") and "Traceback" not in r.stderr
