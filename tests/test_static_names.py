"""Every name the code reads is bound somewhere: a missing import (``math.inf`` in a module that never
imported ``math``) is a crash the first time that line runs, on whatever page or path it sits, and
only a test that happens to reach the line would see it. pyflakes reads every module without running
it; this test keeps its undefined-name findings at zero for the package, the pages, the app, the
benchmarks and the tests."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
#: What is read: every Python file of these folders, and the app.
FOLDERS = ("dpfed_core", "pages", "bench", "tests")


def _files() -> list[Path]:
    return sorted(p for d in FOLDERS for p in (REPO / d).rglob("*.py")) + [REPO / "app.py"]


def _string_annotations(tree: ast.AST) -> set[tuple[int, str]]:
    """(line, name) of every name inside an annotation written as a string — a forward reference to a
    class that cannot be imported there (an import cycle), never evaluated at run time."""
    found: set[tuple[int, str]] = set()
    for node in ast.walk(tree):
        notes = []
        if isinstance(node, ast.AnnAssign):
            notes.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            notes += [arg.annotation for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                      if arg is not None and arg.annotation is not None]
            notes.append(node.returns)
        for note in notes:
            if isinstance(note, ast.Constant) and isinstance(note.value, str):
                try:
                    inner = ast.parse(note.value, mode="eval")
                except SyntaxError:
                    continue
                found |= {(note.lineno, n.id) for n in ast.walk(inner) if isinstance(n, ast.Name)}
    return found


def undefined_names(source: str, label: str) -> list[str]:
    """pyflakes' undefined-name findings in ``source`` (forward references in string annotations aside)."""
    from pyflakes import checker, messages

    tree = ast.parse(source, filename=label)
    forward = _string_annotations(tree)
    kinds = (messages.UndefinedName, messages.UndefinedLocal, messages.UndefinedExport)
    return [f"{label}:{m.lineno}: {m.message % m.message_args}"
            for m in checker.Checker(tree, filename=label).messages
            if isinstance(m, kinds) and (m.lineno, m.message_args[0]) not in forward]


def test_no_module_reads_a_name_it_never_bound():
    found = [line for path in _files()
             for line in undefined_names(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("source,caught", [
    ("def f(d):\n    return d.get('x', math.inf)\n", True),   # the default is read before any lookup
    ("import math\n\ndef f(d):\n    return d.get('x', math.inf)\n", False),
    ("class A:\n    other: 'B'\n", False),                    # a forward reference in a string annotation
    ("def f() -> 'B':\n    return None\n", False),
    ("def f():\n    return B()\n", True),
])
def test_the_check_catches_a_missing_import_and_passes_a_forward_reference(source, caught):
    assert bool(undefined_names(source, "m.py")) == caught
