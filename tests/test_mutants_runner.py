"""The mutation runner's edits (``make mutants`` runs the mutants themselves): every mutant applies
exactly once to today's code, changes it, still compiles, and is found whatever the formatting."""
from __future__ import annotations

import ast
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
