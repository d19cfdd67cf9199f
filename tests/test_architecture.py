"""The layout is the architecture: one subpackage per concern, imports flowing one way.

The import graph is built from the source with :mod:`ast` (every ``import``/``from … import``
anywhere in a module, deferred ones included), so a cycle hidden in a function body fails too.
"""
from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PKG = REPO / "dpfed_core"
#: The one-way order of the subpackages: a package may import only from packages listed before it
#: (and from itself). ``errors`` is neutral ground at the bottom; ``config`` (the run's parameters) sits
#: above the privacy package whose budget checks it uses.
LAYERS = ["errors", "data", "privacy", "config", "models", "federation", "methods", "evaluation", "deployment", "audit",
          "reporting", "cli", "ui"]


def _module_name(path: Path) -> str:
    rel = path.relative_to(REPO).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _resolve(module: str, is_pkg: bool, level: int, name: str | None) -> str:
    if level == 0:
        return name or ""
    base = module.split(".") if is_pkg else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def import_graph() -> dict[str, set[str]]:
    """module → the dpfed_core modules it imports (``from pkg import mod`` counts as ``pkg.mod``)."""
    modules = {_module_name(p): p for p in PKG.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                src = _resolve(mod, is_pkg, node.level, node.module)
                targets = [f"{src}.{a.name}" if f"{src}.{a.name}" in modules else src for a in node.names]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t.startswith("dpfed_core") and t != mod:
                    graph[mod].add(t)
    return graph


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    colour: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        colour[n] = 1
        stack.append(n)
        for m in sorted(graph.get(n, ())):
            if colour.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if colour.get(m) is None and (c := visit(m)):
                return c
        stack.pop()
        colour[n] = 2
        return None

    for n in sorted(graph):
        if colour.get(n) is None and (c := visit(n)):
            return c
    return None


def _layer(module: str) -> str | None:
    """``dpfed_core.data.loaders`` → ``data``; ``dpfed_core.errors`` → ``errors``; the root → None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] != "__main__" else None


def test_no_import_cycle_between_modules():
    cycle = _find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " → ".join(cycle)


def test_subpackages_import_one_way():
    bad = []
    for mod, deps in import_graph().items():
        here = _layer(mod)
        if here is None:
            continue  # dpfed_core/__init__, __main__
        for d in deps:
            there = _layer(d)
            if there is None or there == here or here not in LAYERS or there not in LAYERS:
                continue
            if LAYERS.index(there) > LAYERS.index(here):
                bad.append(f"{mod} → {d}")
    assert not bad, "imports against the layer order " + " < ".join(LAYERS) + ":\n" + "\n".join(sorted(bad))


def test_every_module_belongs_to_a_layer():
    stray = [m for m in import_graph() if _layer(m) not in LAYERS + [None, "__main__"]]
    assert not stray, f"modules outside the layered subpackages: {stray}"


def test_the_cycle_finder_finds_a_cycle():
    """Power check: the detector reports a planted cycle."""
    assert _find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_ui_code_at_the_top_level():
    top = sorted(p.name for p in REPO.glob("*.py"))
    assert top == ["app.py"], f"top-level Python files besides app.py: {top}"


@pytest.mark.parametrize("argv", [["-c", "import dpfed_core"], ["-m", "dpfed_core", "methods"]])
def test_light_start_up_imports(argv):
    """Importing the engine or listing methods loads neither scikit-learn, SciPy's stats, pandas,
    plotly nor streamlit (each costs a large share of a CLI start-up)."""
    code = ("import runpy, sys; sys.argv = ['dpfed_core', 'methods'];\n"
            "import io, contextlib\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            "    try: runpy.run_module('dpfed_core', run_name='__main__')\n"
            "    except SystemExit: pass\n") if argv[0] == "-m" else "import dpfed_core"
    code += "\nheavy = [m for m in ('sklearn', 'scipy.stats', 'pandas', 'plotly', 'streamlit', 'joblib') if m in sys.modules]\nprint(','.join(heavy))"
    out = subprocess.run([sys.executable, "-c", "import sys\n" + code], cwd=REPO, capture_output=True, text=True,
                         check=True).stdout
    heavy = out.splitlines()[-1] if out.strip() else ""
    assert heavy == "", f"heavy modules imported at start-up: {heavy}"
