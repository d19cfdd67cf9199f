"""A fork server for the mutation runner: one interpreter that has imported the third-party libraries
the tests use, and runs each mutant's tests in a forked child of itself.

In a new interpreter most of a mutant's run is importing NumPy, SciPy, pandas, scikit-learn,
Streamlit and OpenDP (about two seconds), not its tests (under one for most). A forked child starts
with those already imported. It imports nothing of the project: every mutant's copy of ``dpfed_core``,
its tests and its app are imported fresh in the child, from that mutant's folder.

Protocol, one JSON object per line: the runner writes ``{"cwd", "args", "env", "timeout", "log", "failed"}``
on standard input, and this process answers ``{"rc": exit code}`` once that child has ended, or
``{"rc": -1}`` when it ran past ``timeout`` seconds (then its whole session was killed: the child
runs in a session of its own, so processes its tests started go with it). The child's output goes
to ``log``, and the ids of the tests that failed to ``failed`` (a JSON list). A child writes bytecode as a new interpreter would under ``env``: not when it sets
``PYTHONDONTWRITEBYTECODE`` (the runner's baseline writes it once; each mutant's copy carries that cache,
less its mutated file's entries).
"""
from __future__ import annotations

import gc
import importlib
import json
import os
import signal
import sys
import time

#: Imported once here, before any fork; never the project's own modules. Flower is left out: gRPC's
#: runtime is not safe to carry across a fork, and only the deployment tests import it.
PRELOAD = ("numpy", "scipy.sparse", "scipy.stats", "scipy.optimize", "scipy.special", "pandas",
           "sklearn.cluster", "sklearn.metrics", "plotly.graph_objects", "streamlit",
           "streamlit.testing.v1", "opendp.combinators", "opendp.domains", "opendp.measurements",
           "opendp.measures", "opendp.metrics", "opendp.mod", "opendp.typing", "dp_accounting",
           "dp_accounting.pld", "sqlite3", "pytest")
TIMED_OUT = -1


class _Failures:
    """A pytest plugin that keeps the id of every test that failed (in its set-up, call or tear-down):
    the runner checks that each test that caught a mutant passes on the unmutated code."""

    def __init__(self) -> None:
        self.ids: list[str] = []

    def pytest_runtest_logreport(self, report) -> None:
        if report.failed and report.nodeid not in self.ids:
            self.ids.append(report.nodeid)


def _brief():
    """A pytest plugin for runs whose output nobody reads (a mutant's: only the exit code counts): a failed
    comparison is explained in one line. With ``CI`` set, pytest explains a failed ``==`` of two sequences
    by a full pretty-print and an ndiff of both, quadratic in their length — minutes for two lists of a
    few thousand numbers, longer than a mutant's timeout. The comparison hook pytest's assertion
    plugin installs for each test is replaced inside it (this wrapper runs within that plugin's)."""
    import pytest
    from _pytest.assertion import util

    class Brief:
        @pytest.hookimpl(wrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            util._reprcompare = lambda op, left, right: (f"{type(left).__name__} {op} {type(right).__name__} "
                                                         "(explanation left out)")
            return (yield)

    return Brief()


def _child(job: dict) -> None:
    os.setsid()
    fd = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.chdir(job["cwd"])
    os.environ.update(job["env"])
    # as `python -m pytest` run in that folder: the mutant's copy first, nothing of this file's folder
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [job["cwd"]] + [p for p in sys.path if p not in ("", here)]
    sys.dont_write_bytecode = bool(os.environ.get("PYTHONDONTWRITEBYTECODE"))
    import pytest

    failed = _Failures()
    rc = pytest.main(job["args"], plugins=[failed, *([_brief()] if job.get("brief") else [])])
    if job.get("failed"):
        with open(job["failed"], "w", encoding="utf-8") as f:
            json.dump(failed.ids, f)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(int(rc))


def _wait(pid: int, timeout: float | None) -> int:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if deadline is not None and time.monotonic() > deadline:
            try:
                os.killpg(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return TIMED_OUT
        time.sleep(0.02)


def serve() -> None:
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # a library this install lacks: its tests import it themselves, or skip
            pass
    assert not any(m == "dpfed_core" or m.startswith("dpfed_core.") for m in sys.modules)
    # what is imported now lives as long as every child: out of the collector's sight, pytest's
    # collections at the end of each session walk only what that session made
    gc.collect()
    gc.freeze()
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        job = json.loads(line)
        pid = os.fork()
        if pid == 0:
            try:
                _child(job)
            finally:
                os._exit(3)
        rc = _wait(pid, job.get("timeout"))
        print(json.dumps({"rc": rc}), flush=True)


if __name__ == "__main__":
    serve()
