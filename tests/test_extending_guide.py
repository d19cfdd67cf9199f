"""``docs/EXTENDING.md`` is followed to the letter: a two-stage summable method added to a copy of the
package, touching only the files the guide's table names (the import line taken from the guide
itself), is picked up everywhere — ``methods`` lists it, a simulated ``run`` on the bundled sample
stays within its budget, it has a colour of its own, its generated mutants apply and are killed,
and the contract test and release audits run it. Everything is written under ``tmp_path``; the
budget store is the test's own."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "EXTENDING.md"
NAME = "my-method"
WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}

#: The new method's module, as an author writes it from the guide: two stages, each one Gaussian sum
#: through ``gaussian_share``, the budget split declared once.
MODULE = '''"""my-method: two summable releases of binarised unit-norm rows (reach, then squared reach)."""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from dpfed_core.config import Param
from dpfed_core.federation.summable import SummableMethod, register_summable_method
from dpfed_core.privacy.budget_split import split_by


@register_summable_method("my-method")
class MyMethod(SummableMethod):
    """Two Gaussian sums of each user's binarised row scaled to ℓ2 = 1: its entries (reach), then
    their squares (depth). Sensitivity: one user moves each sum by at most 1 in ℓ2. Privacy map:
    zCDP split of ρ(ε, δ), ``reach_share`` to the first stage, the rest to the second; each σ by
    OpenDP's map (:meth:`SummableMethod.gaussian_share`)."""

    stages = ("reach", "depth")
    parameters = (
        Param("reach_share", "float", 0.4, "share of ρ for the reach release", low=0, high=1, low_open=True,
              high_open=True),
    )

    def __init__(self, value_max: float = 1.0, epsilon: float = math.inf, delta: float = 1e-6,
                 max_dropouts: int = 0, aggregation: str = "secure", reach_share: float = 0.4) -> None:
        super().__init__(value_max, epsilon, delta, max_dropouts, aggregation)
        self.reach_share = reach_share

    def budget_split(self):
        return split_by({"reach": self.reach_share, "depth": 1.0 - self.reach_share})

    def share(self, X, rng, ledger, n_entities, stage="reach", public=None):
        self.check(n_entities)
        X = sp.csr_matrix(X, dtype=np.float64, copy=True)
        X.eliminate_zeros()
        per_user = np.diff(X.indptr)
        # each item of a user's row weighs 1/√(its items): the row has ℓ2 norm 1, its squares ℓ2 ≤ 1
        weight = np.repeat(1.0 / np.sqrt(np.maximum(per_user, 1)), per_user) ** (2 if stage == "depth" else 1)
        values = np.bincount(X.indices, weights=weight, minlength=X.shape[1])
        return self.gaussian_share(values, 1.0, rng, ledger, n_entities, stage=stage)

    def combine(self, stage, total, public, rng, n_participants):
        out = dict(public or {})
        out[stage] = np.maximum(np.asarray(total, dtype=np.float64), 0.0)
        if stage == "depth":
            out["V"] = np.stack([out["reach"], out["depth"]], axis=1)
        return out
'''

#: Its own test, as the guide's table asks (the contract test and the release audits cover the rest).
TEST = '''import numpy as np
import scipy.sparse as sp

import dpfed_core.federation  # noqa: F401
from dpfed_core.federation.summable import make_summable_method
from dpfed_core.privacy.ledger import PrivacyLedger


def test_my_method_spends_its_split_and_no_more():
    m = make_summable_method("my-method", epsilon=1.0, delta=1e-6)
    ledger = PrivacyLedger(1.0, 1e-6)
    X = sp.csr_matrix(np.eye(5))
    for s in m.stages:
        m.share(X, np.random.default_rng(0), ledger.for_entity("e"), 3, stage=s)
    assert [r.stage for r in ledger.rows] == ["reach", "depth"]
    assert ledger.guarantee()[0] <= 1.0
'''


def _guide_files() -> tuple[list[str], int, str]:
    """The files the guide's table for a new summable method names (first cell of each row), the
    number its sentence states, and the import line its registration row gives."""
    text = GUIDE.read_text(encoding="utf-8")
    said = re.search(r"A new \*\*summable\*\* method touches (\w+) files", text)
    assert said, "the guide no longer says how many files a summable method touches"
    table = text[said.end():].split("\n\n")[1]
    rows = [r for r in table.splitlines() if r.startswith("| `")]
    files = [re.match(r"\| `([^`]+)`", r).group(1) for r in rows]
    imports = [c for r in rows for c in re.findall(r"`(from dpfed_core[^`]* import [^`]*)`", r)]
    assert len(imports) == 1, imports
    return files, WORDS[said.group(1)], imports[0]


def _copy(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for part in ("dpfed_core", "tests", "sample_data"):
        shutil.copytree(REPO / part, dest / part, ignore=ignore)
    for f in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / f, dest / f)


def _run(cwd: Path, env: dict, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_the_guide_names_its_files_and_the_count_it_states():
    files, said, line = _guide_files()
    assert len(files) == said
    assert "dpfed_core/federation/my_method.py" in files and "dpfed_core/federation/__init__.py" in files
    assert line.startswith("from dpfed_core.federation import my_method")


@pytest.mark.slow
def test_a_two_stage_method_added_as_the_guide_says_is_picked_up_everywhere(tmp_path):
    files, _, line = _guide_files()
    repo = tmp_path / "repo"
    _copy(repo)
    before = {p: p.read_bytes() for p in repo.rglob("*") if p.is_file()}
    writes = {
        "dpfed_core/federation/my_method.py": MODULE,
        "dpfed_core/federation/__init__.py": (repo / "dpfed_core/federation/__init__.py").read_text() + line + "\n",
        "tests/test_my_method.py": TEST,
        "README.md": re.sub(r"^(\| `--method` \| )", rf"\1`{NAME}`, ", (repo / "README.md").read_text(), count=1,
                            flags=re.M),
    }
    assert set(writes) <= set(files), f"the guide does not name {set(writes) - set(files)}"
    for rel, text in writes.items():
        (repo / rel).write_text(text, encoding="utf-8")
    changed = {p.relative_to(repo).as_posix() for p in repo.rglob("*")
               if p.is_file() and before.get(p) != p.read_bytes()}
    assert changed == set(writes)

    store = tmp_path / "store"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(PYTHONPATH=str(repo), PYTHONDONTWRITEBYTECODE="1", DPFED_STORE=str(store / "dpfed.sqlite3"),
               XDG_DATA_HOME=str(store / "xdg"), DPFED_SHARED_DATA=str(tmp_path / "no-shared-data"))

    listed = _run(repo, env, "-m", "dpfed_core", "methods")
    assert listed.returncode == 0, listed.stderr
    assert any(r.split()[:1] == [NAME] for r in listed.stdout.splitlines()), listed.stdout

    out = tmp_path / "run.json"
    run = _run(repo, env, "-m", "dpfed_core", "run", "--data", "sample:clinic", "--method", NAME, "--simulation",
               "--epsilon", "1", "--delta", "1e-6", "--aggregation", "secure", "--param", "reach_share=0.3",
               "--out", str(out))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["config"]["method"] == NAME
    assert doc["privacy"]["epsilon"] <= 1.0 * (1 + 1e-9) and doc["privacy"]["delta"] <= 1e-6 * (1 + 1e-9)
    for e in doc["privacy"]["per_entity"]:
        assert e["epsilon"] <= 1.0 * (1 + 1e-9), e
    assert {r["stage"] for r in doc["privacy"]["ledger"]} == {"reach", "depth"}

    colour = _run(repo, env, "-c", (
        "from dpfed_core.methods.registry import available_methods\n"
        "from dpfed_core.reporting.plots import METHOD_COLORS, method_color\n"
        f"assert {NAME!r} not in METHOD_COLORS\n"
        "cs = [method_color(m) for m in available_methods()]\n"
        "assert len(set(cs)) == len(cs), 'two methods share a colour'\n"
        f"print(method_color({NAME!r}))\n"))
    assert colour.returncode == 0, colour.stderr
    assert re.fullmatch(r"#[0-9A-Fa-f]{6}\n", colour.stdout)

    mutants = _run(repo, env, "tests/mutants.py", "--list")
    mine = [r.split()[0] for r in mutants.stdout.splitlines() if r.startswith(f"{NAME}-")]
    assert len(mine) == 1, mutants.stdout  # one gaussian_share call in its class: one generated mutant
    killed = _run(repo, env, "tests/mutants.py", "--only", *mine, timeout=900)
    assert killed.returncode == 0 and f"{len(mine)}/{len(mine)} mutants killed" in killed.stdout, killed.stdout

    tests = _run(repo, env, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_my_method.py",
                 "tests/test_mutants_runner.py", "-k", f"my_method or {NAME}", "tests/test_method_contract.py",
                 "tests/test_release_audits.py", timeout=900)
    assert tests.returncode == 0, tests.stdout[-3000:]
    ran = re.search(r"(\d+) passed", tests.stdout)
    assert ran and int(ran.group(1)) >= 8, tests.stdout[-1000:]
