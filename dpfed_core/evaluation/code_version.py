"""Which code a measurement shown on screen was taken with.

The dashboard and the CLI show numbers a benchmark measured (the time a run will take, the default
settings and what they achieved). A number the engine's current code did not produce is a false
statement, however plausible: a cost model measured on slower code says "about 19 s" for a run of
1.3 s. So every result document the product reads records
:func:`engine_fingerprint` of the code it was measured with, and the suite checks the committed
documents against the code in the same tree: the cost model, the dashboard's defaults and the
samplers' cost per coordinate. The deployment benchmark, whose overhead beyond the in-process run
is Flower's processes and messages (the deployment's code and Flower's pins, both outside the
fingerprint), is not checked; the estimate read from it states the day it was measured.

The fingerprint covers what a run computes with: the engine's packages below (their syntax trees,
so an edited comment or docstring does not count as other code) and the pinned library versions
(``requirements.txt``). It leaves out what only shows or ships results — the dashboard's helpers,
the CLI, the report, the deployment, the audit — and the modules that read the measurements
(:data:`READERS`), whose changes cannot change a measured second.
"""
from __future__ import annotations

import ast
import functools
import hashlib
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
#: Sub-packages and top-level modules of ``dpfed_core`` that a run executes.
ENGINE = ("config.py", "errors.py", "__init__.py", "data", "evaluation", "federation", "methods", "models",
          "privacy")
#: Engine modules that only read measurements (their changes cannot change a measured second).
READERS = ("evaluation/cost.py", "evaluation/defaults.py", "evaluation/code_version.py")


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            body[0].value.value = ""
    return tree


def engine_files(package: Path = PACKAGE) -> list[Path]:
    """The engine's source files, in a fixed order."""
    out: list[Path] = []
    for part in ENGINE:
        path = package / part
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return [p for p in out if p.relative_to(package).as_posix() not in READERS]


@functools.lru_cache(maxsize=4)
def engine_fingerprint(package: Path = PACKAGE) -> str:
    """SHA-256 (16 hex digits) of the engine's code as it runs: each source file's syntax tree
    without docstrings, and the pinned library versions of ``requirements.txt`` beside the package."""
    h = hashlib.sha256()
    for path in engine_files(package):
        h.update(path.relative_to(package).as_posix().encode())
        h.update(ast.dump(_without_docstrings(ast.parse(path.read_text(encoding="utf-8")))).encode())
    pins = package.parent / "requirements.txt"
    if pins.is_file():
        lines = (ln.split("#", 1)[0].strip() for ln in pins.read_text(encoding="utf-8").splitlines())
        h.update("\n".join(sorted(ln for ln in lines if ln)).encode())
    return h.hexdigest()[:16]
