"""The mutation runner's edits (``make mutants`` runs the mutants themselves): every mutant applies
exactly once to today's code, changes it, still compiles, and is found whatever the formatting."""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

import mutants as M

REPO = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=None)
def _source(path: str) -> tuple[str, str]:
    """A module's text, and its text as the runner writes an edited module (so only an edit differs)."""
    src = (REPO / path).read_text(encoding="utf-8")
    return src, ast.unparse(ast.parse(src))


@pytest.mark.parametrize("m", M.MUTANTS, ids=lambda m: m.name)
def test_every_mutant_applies_once_and_changes_the_code(m):
    src, unedited = _source(m.path)
    out = M.apply_mutant(src, m)
    compile(out, m.path, "exec")
    assert out != unedited
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


def _toy_repo(root: Path, test_body: str) -> Path:
    """A repository of one engine module and one test, with the runner's fork server."""
    (root / "dpfed_core").mkdir(parents=True)
    (root / "dpfed_core" / "__init__.py").write_text("")
    (root / "dpfed_core" / "calc.py").write_text("def double(x):\n    return 2 * x\n\n\ndef half(x):\n    return x / 2\n")
    (root / "tests").mkdir()
    (root / "tests" / "pytest_forkserver.py").write_text((REPO / "tests" / "pytest_forkserver.py").read_text())
    (root / "tests" / "test_calc.py").write_text(test_body)
    return root


def test_a_test_that_fails_on_the_unmutated_code_catches_nothing_and_fails_the_run(tmp_path, monkeypatch, capsys):
    import time

    """Each worker keeps one copy of the engine and puts the mutated file back after each mutant; the
    tests that caught a mutant are run on the unmutated copy at the end, and one that fails there fails the
    whole run (its catches prove nothing). Tests still running at the timeout are run once more before the
    mutant counts as caught."""
    bug = M.Mutant("double-is-triple", "dpfed_core/calc.py", "double", "2 * x", "3 * x", ("tests/test_calc.py",))
    other = M.Mutant("double-plus-one", "dpfed_core/calc.py", "double", "2 * x", "2 * x + 1", ("tests/test_calc.py",))
    good = _toy_repo(tmp_path / "good", "from dpfed_core.calc import double\n\n"
                                        "def test_double():\n    assert double(2) == 4\n")
    monkeypatch.setattr(M, "REPO", good)
    assert M.run([bug, other, bug], jobs=1) == 0
    out = capsys.readouterr().out
    # the third mutant is the first again: its pattern is found only if the file was put back after each
    assert [line.split()[:2] for line in out.splitlines() if line.startswith("double-")] == [
        ["double-is-triple", "killed"], ["double-plus-one", "killed"], ["double-is-triple", "killed"]]
    assert "baseline (unmutated, the 1 tests that caught a mutant): pass" in out
    assert "3/3 mutants killed" in out
    assert "return 2 * x\n" in (good / "dpfed_core" / "calc.py").read_text()

    endless = M.Mutant("double-never-returns", "dpfed_core/calc.py", "double", "2 * x",
                       "next(y for y in iter(int, 1) if y)", ("tests/test_calc.py",))
    monkeypatch.setattr(M, "MUTANT_TIMEOUT_S", 2)
    t0 = time.perf_counter()
    assert M.run([endless], jobs=1) == 0
    assert "double-never-returns               killed (timed out)" in capsys.readouterr().out
    assert time.perf_counter() - t0 >= 4  # stopped, then run once more before it counts

    broken = _toy_repo(tmp_path / "broken", "from dpfed_core.calc import double\n\n"
                                            "def test_double():\n    assert double(2) == 5\n")
    monkeypatch.setattr(M, "REPO", broken)
    assert M.run([bug], jobs=1) == 1
    out = capsys.readouterr().out
    assert "1/1 mutants killed" in out and "FAIL (exit 1): their catches prove nothing" in out


def test_the_ids_of_the_failed_tests_are_reported_and_a_stale_pattern_is_named(tmp_path):
    (tmp_path / "test_two.py").write_text("import pytest\n\ndef test_ok():\n    pass\n\n"
                                          "@pytest.mark.parametrize('v', [1, 2])\ndef test_bad(v):\n"
                                          "    assert v == 1\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    server = M.ForkServer(logs)
    assert server.run(tmp_path, ("test_two.py",), timeout=60) == 1
    assert server.failed == ["test_two.py::test_bad[2]"]
    assert server.run(tmp_path, ("test_two.py::test_ok",), timeout=60) == 0 and server.failed == []
    server.close()
    assert not list(logs.iterdir())
    (tmp_path / "mod.py").write_text("def f(x):\n    return x + 1\n")
    fresh = M.Mutant("f-minus", "mod.py", "f", "x + 1", "x - 1", ())
    stale = M.Mutant("f-times", "mod.py", "f", "x * 2", "x", ())
    assert M.stale_mutants([fresh, stale], tmp_path) == ["f-times: pattern found 0 times in f"]


def test_what_one_mutants_run_leaves_in_the_copy_is_gone_before_the_next(tmp_path, monkeypatch, capsys):
    """A run that leaves a file or a folder in its worker's copy (a bug that writes beside the code) must not
    change the next mutant's verdict: the copy is made anew."""
    repo = _toy_repo(tmp_path / "repo", "import os\nfrom dpfed_core.calc import double\n\n"
                                        "def test_double():\n    assert not os.path.exists('left')\n"
                                        "    os.makedirs('left/over')\n    assert double(2) == 4\n")
    monkeypatch.setattr(M, "REPO", repo)
    caught = M.Mutant("double-is-triple", "dpfed_core/calc.py", "double", "2 * x", "3 * x", ("tests/test_calc.py",))
    unseen = M.Mutant("half-is-third", "dpfed_core/calc.py", "half", "x / 2", "x / 3", ("tests/test_calc.py",))
    assert M.run([caught, unseen], jobs=1) == 1
    out = capsys.readouterr().out
    assert [line.split()[:2] for line in out.splitlines() if line.startswith(("double-", "half-"))] == [
        ["double-is-triple", "killed"], ["half-is-third", "SURVIVED"]]


def test_a_failed_comparison_of_long_sequences_is_caught_at_once_on_ci(tmp_path, monkeypatch, capsys):
    """On CI (``CI`` set) pytest explains a failed ``==`` of two sequences by an ndiff of their pretty-printed
    forms, quadratic in their length: minutes for two lists of 6,000 entity indices, longer than a mutant's
    timeout. A mutant's run leaves the explanation out, so it is caught in seconds; a run whose failure is
    shown keeps pytest's own explanation."""
    monkeypatch.setenv("CI", "true")
    (tmp_path / "test_long.py").write_text(
        "def test_lists():\n    assert [i % 3 for i in range(6000)] == [i % 3 + 1 for i in range(6000)]\n")
    (tmp_path / "test_short.py").write_text("def test_pair():\n    assert [1, 2] == [1, 3]\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    server = M.ForkServer(logs)
    try:
        assert server.run(tmp_path, ("test_long.py",), timeout=20) == 1
        assert server.failed == ["test_long.py::test_lists"]
        capsys.readouterr()
        assert server.run(tmp_path, ("test_short.py",), timeout=20, show_failure=True) == 1
        assert "At index 1 diff: 2 != 3" in capsys.readouterr().out
    finally:
        server.close()
