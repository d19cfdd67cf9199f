"""Numbers on screen come from the code in the tree: the benchmark results the dashboard and the CLI
read record the engine code they were measured with, and that is the code here."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from dpfed_core.evaluation import code_version, cost
from dpfed_core.evaluation.defaults import DEFAULTS_FILE

#: The benchmark results the product reads, and the command that measures each again.
READ_BY_THE_PRODUCT = {cost.COST_FILE: "bench/bench_cost_model.py",
                       DEFAULTS_FILE: "bench/bench_dashboard_defaults.py",
                       cost.SAMPLERS_FILE: "bench/bench_samplers.py"}
# bench/results/deployment.json is read too (Flower's overhead beyond the in-process run), but it measures
# the deployment's code and Flower's pins, which the engine fingerprint leaves out; the estimate built on
# it states the day it was measured (cost.deployment_measured_on).


@pytest.mark.parametrize("path", list(READ_BY_THE_PRODUCT), ids=lambda p: p.stem)
def test_the_measurements_the_product_reads_were_taken_with_this_engine_code(path):
    measured_with = json.loads(path.read_text(encoding="utf-8"))["machine"].get("engine_fingerprint")
    assert measured_with == code_version.engine_fingerprint(), (
        f"{path.name} was measured with other engine code ({measured_with}); the time hints and defaults it "
        f"gives would not be this code's: run {READ_BY_THE_PRODUCT[path]} again and commit its results")


def _package(tmp_path: Path) -> Path:
    """A copy of the package and its pins to edit."""
    root = tmp_path / "tree"
    shutil.copytree(code_version.PACKAGE, root / "dpfed_core", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(code_version.PACKAGE.parent / "requirements.txt", root / "requirements.txt")
    return root / "dpfed_core"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_the_fingerprint_moves_with_the_engines_code_and_pins_only(tmp_path):
    pkg = _package(tmp_path)
    fp = code_version.engine_fingerprint.__wrapped__
    base = fp(pkg)
    assert base == code_version.engine_fingerprint()  # the copy is the same code
    models = pkg / "models" / "factorization.py"
    # words about the code are not other code: a docstring and a comment
    _edit(models, '"""', '"""Reworded. ')
    _edit(models, "\nimport ", "\n# a new comment\nimport ")
    assert fp(pkg) == base
    # what shows or ships results, and the readers of the measurements, are not the engine
    for rel in ("cli/main.py", "ui/engine.py", "reporting/__init__.py", "deployment/launcher.py",
                "evaluation/cost.py", "evaluation/defaults.py"):
        (pkg / rel).write_text((pkg / rel).read_text(encoding="utf-8") + "\nX_ADDED = 1\n", encoding="utf-8")
    assert fp(pkg) == base
    # a constant of the engine, a new engine module, a library pin: other code
    for change in (lambda: (pkg / "federation" / "summable.py").write_text(
                       (pkg / "federation" / "summable.py").read_text(encoding="utf-8") + "\nX_ADDED = 1\n",
                       encoding="utf-8"),
                   lambda: (pkg / "models" / "extra.py").write_text("Y = 2\n", encoding="utf-8"),
                   lambda: _edit(pkg.parent / "requirements.txt", "numpy==", "numpy==0.")):
        before = fp(pkg)
        change()
        assert fp(pkg) != before
