"""The mutation runner's edits (``make mutants`` runs the mutants themselves): every mutant applies
exactly once to today's code, changes it, still compiles, and is found whatever the formatting."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import mutants as M

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("m", M.MUTANTS, ids=lambda m: m.name)
def test_every_mutant_applies_once_and_changes_the_code(m):
    src = (REPO / m.path).read_text(encoding="utf-8")
    out = M.apply_mutant(src, m)
    compile(out, m.path, "exec")
    assert ast.dump(ast.parse(out)) != ast.dump(ast.parse(src))
    for test in m.tests:
        path = test.split("::")[0]
        assert (REPO / path).is_file(), f"{m.name} targets a missing test file {path}"


def test_patterns_ignore_formatting_and_extra_keywords():
    src = ("def f(x, rng):\n"
           "    return mech.count_mechanism(\n"
           "        x,   1,\n"
           "        0.5, rng, ledger=L, stage='s',  # a comment\n"
           "    )\n")
    m = M.Mutant("t", "x.py", "f", "mech.count_mechanism(x, 1, 0.5)", "4 * ORIG", (), arg=2)
    out = M.apply_mutant(src, m)
    assert "4 * 0.5" in out and "ledger=L" in out
    with pytest.raises(LookupError, match="found 0 times"):
        M.apply_mutant(src, M.Mutant("t", "x.py", "f", "mech.count_mechanism(y)", "ORIG", ()))


@pytest.mark.parametrize("name,cls,path", [pytest.param(*m, id=m[0]) for m in M.builtin_summable_methods()])
def test_every_builtin_summable_method_has_a_mutant(name, cls, path):
    covering = [m.name for m in M.MUTANTS if M.covers(m, cls, path)]
    assert covering, (
        f"the summable method {name!r} ({path}, class {cls.__name__}) has no mutant in tests/mutants.py: "
        "release its sums through self.gaussian_share (a mutant is then generated for each call), or "
        "add a Mutant that breaks its privacy (e.g. its sensitivity understated) and the test that kills it")


def test_a_gaussian_share_call_gets_a_generated_mutant_aimed_at_its_release_audit():
    generated = {m.name: m for m in M.summable_share_mutants()}
    m = generated["dp-popularity-share-sensitivity-halved"]
    assert m.where == "DPPopularity.share" and m.tests == (f"{M.SHARE_AUDIT}[dp-popularity-none]",)
    src = ("class C:\n    def share(self, v):\n        a = self.gaussian_share(v, 1.0, r)\n"
           "        return self.gaussian_share(v, 2.0, r)\n")
    out = M.apply_mutant(src, M.Mutant("t", "x.py", "C.share", M.GAUSSIAN_SHARE, "ORIG / 2", (), arg=1, nth=1))
    assert "self.gaussian_share(v, 1.0, r)" in out and "self.gaussian_share(v, 2.0 / 2, r)" in out


def test_a_page_script_is_edited_at_module_level_and_a_function_name_still_scopes_the_search():
    """A Streamlit page is a script: its engine calls sit at module level, outside any function, and a
    mutant reaches them with ``where=MODULE``; a named ``where`` still edits only inside that function."""
    src = ("import streamlit as st\nk = st.slider('k', 1, 10, 3)\n"
           "def helper():\n    return st.slider('k', 1, 10, 3)\n")
    out = M.apply_mutant(src, M.Mutant("t", "p.py", M.MODULE, "st.slider('k', 1, 10, 3)", "1", (), nth=0))
    assert out.splitlines()[1] == "k = 1" and "return st.slider('k', 1, 10, 3)" in out
    with pytest.raises(LookupError, match="found 2 times"):
        M.apply_mutant(src, M.Mutant("t", "p.py", M.MODULE, "st.slider('k', 1, 10, 3)", "1", ()))
    inner = M.apply_mutant(src, M.Mutant("t", "p.py", "helper", "st.slider('k', 1, 10, 3)", "1", ()))
    assert "k = st.slider('k', 1, 10, 3)" in inner and "return 1" in inner


def test_a_mutant_whose_tests_never_end_is_stopped_and_counted_as_caught(tmp_path):
    """A bug that sends the code into an endless loop must not stall the runner: its tests are
    stopped at the timeout with every process they started, and the mutant counts as killed."""
    import os
    import time

    pid_file = tmp_path / "child.pid"
    (tmp_path / "test_endless.py").write_text(
        "import os, subprocess, sys, time\n"
        "def test_forever():\n"
        f"    child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"    open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
        "    time.sleep(600)\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    server = M.ForkServer(logs)
    t0 = time.perf_counter()
    assert server.run(tmp_path, ("test_endless.py",), timeout=5) == M.TIMED_OUT
    assert time.perf_counter() - t0 < 60
    child = int(pid_file.read_text())
    for _ in range(50):  # the grandchild goes with its session
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        raise AssertionError("the tests' own child process outlived the timeout")
    (tmp_path / "test_quick.py").write_text("def test_fails():\n    assert False\n")
    assert server.run(tmp_path, ("test_quick.py",), timeout=60) == 1
    server.close()


def test_each_run_imports_the_engine_of_its_own_folder_never_the_runners(tmp_path):
    """The runner itself imports ``dpfed_core`` (to list the summable methods); a mutant's tests must
    import the mutated copy in their folder, and one run's imports must not carry into the next."""
    logs = tmp_path / "logs"
    logs.mkdir()
    server = M.ForkServer(logs)
    for value in (1, 2):
        folder = tmp_path / f"copy{value}"
        (folder / "dpfed_core").mkdir(parents=True)
        (folder / "dpfed_core" / "__init__.py").write_text(f"VALUE = {value}\n")
        (folder / "test_which.py").write_text(
            "import os, sys\nimport dpfed_core\n"
            "def test_own_copy():\n"
            f"    assert dpfed_core.VALUE == {value}\n"
            f"    assert dpfed_core.__file__.startswith({str(folder)!r})\n"
            f"    assert os.environ['PYTHONPATH'] == {str(folder)!r}\n")
        assert server.run(folder, ("test_which.py",), timeout=60) == 0
    (tmp_path / "copy1" / "dpfed_core" / "__init__.py").write_text("VALUE = 3\n")
    assert server.run(tmp_path / "copy1", ("test_which.py",), timeout=60) == 1
    assert not list(logs.iterdir())  # each run's output is removed once read
    server.close()


def test_the_readme_states_how_many_mutants_make_mutants_applies():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    stated = re.search(r"applies every declared deliberate bug — (\d+) of them", text)
    assert stated is not None, "README.md no longer says how many deliberate bugs make mutants applies"
    assert int(stated.group(1)) == len(M.MUTANTS)
