"""Start-up cost of the command line (the targets).

1. ``python -m dpfed_core methods`` must take at most 1.3× the CPU time of ``python -c "import numpy,
   scipy.sparse"`` (the two libraries every command needs): everything else — scikit-learn, SciPy's
   stats and special functions, pandas, plotly, joblib, OpenDP's scikit-learn extras — is imported
   only by the commands that use it; the comparison systems load when fitted.
2. A simulation-mode ``dp-cooccurrence`` run on the clinic sample must spend at most 30 % of its CPU on
   imports: the CPU time of a fresh process importing exactly the modules the run imported, divided
   by the run's CPU time (both measured by the OS, so load on the machine does not inflate them).
   Measured in the same interleaved loop.

Measures CPU time (user + system of the child process, from ``resource.getrusage``), which is far
less sensitive to other load on the machine than wall time, over ``--repeats`` interleaved runs of
each command; reports the median and the ratio of medians. Writes ``bench/results/startup.{json,md}``.

Bytecode: the children run as an installed product does — Python's default of caching compiled
modules in ``__pycache__`` (gitignored), compiled once before the timed runs — even when the
environment sets ``PYTHONDONTWRITEBYTECODE`` (this workplace's shells do); NumPy and SciPy in the
virtual environment were compiled at install time, so otherwise only dpfed's own modules would be
compiled from source on every start.
"""
from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

COMMANDS = {
    "baseline: import numpy, scipy.sparse": [sys.executable, "-c", "import numpy, scipy.sparse"],
    "python -m dpfed_core methods": [sys.executable, "-m", "dpfed_core", "methods"],
    "import dpfed_core": [sys.executable, "-c", "import dpfed_core"],
}
TARGET_RATIO = 1.3
TARGET_IMPORT_SHARE = 0.30
RUN_ARGS = ["run", "--data", "sample:clinic", "--method", "dp-cooccurrence", "--epsilon", "1", "--simulation"]
#: Runs the CLI in-process, then prints the modules it imported (one per line, after a marker).
_RUN_AND_LIST = ("import sys, contextlib, io\nfrom dpfed_core.cli.main import main\n"
                 "with contextlib.redirect_stdout(io.StringIO()):\n    main(sys.argv[1:])\n"
                 "print('--modules--'); print('\\n'.join(sorted(sys.modules)))")


def _child_env(**extra: str) -> dict:
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}


def _compile_once() -> None:
    import compileall

    compileall.compile_dir(str(C.ROOT / "dpfed_core"), quiet=1)


def _import_share(store: str) -> tuple[float, float]:
    """(CPU seconds of the run's imports, CPU seconds of the run) of one simulation run: the run is
    timed whole, then a fresh process imports exactly the modules the run imported, and is timed."""
    import os

    env = _child_env(DPFED_STORE=store)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run([sys.executable, "-c", _RUN_AND_LIST, *RUN_ARGS], cwd=C.ROOT, check=True, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    mid = resource.getrusage(resource.RUSAGE_CHILDREN)
    mods = [m for m in r.stdout.split("--modules--", 1)[1].split() if m and not m.startswith("__")]
    code = ("import importlib\nfor m in " + repr(mods) + ":\n    try:\n        importlib.import_module(m)\n"
            "    except Exception:\n        pass\n")
    subprocess.run([sys.executable, "-c", code], cwd=C.ROOT, check=True, env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run_cpu = (mid.ru_utime - before.ru_utime) + (mid.ru_stime - before.ru_stime)
    imp_cpu = (after.ru_utime - mid.ru_utime) + (after.ru_stime - mid.ru_stime)
    return imp_cpu, run_cpu


def _cpu_seconds(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=C.ROOT, check=True, stdout=subprocess.DEVNULL, env=_child_env())
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="5 repeats")
    args = ap.parse_args()
    repeats = 5 if args.quick else args.repeats
    import tempfile

    cpu: dict[str, list[float]] = {k: [] for k in COMMANDS}
    wall: dict[str, list[float]] = {k: [] for k in COMMANDS}
    shares: list[float] = []
    _compile_once()
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(repeats):  # interleaved, so drifting load hits every command alike
            for name, cmd in COMMANDS.items():
                c, w = _cpu_seconds(cmd)
                cpu[name].append(c)
                wall[name].append(w)
            imp, run_cpu = _import_share(f"{tmp}/store{i}.sqlite3")
            shares.append(imp / run_cpu)
    base = statistics.median(cpu["baseline: import numpy, scipy.sparse"])
    rows = [{"command": n, "cpu_median_s": statistics.median(cpu[n]), "cpu_min_s": min(cpu[n]),
             "wall_median_s": statistics.median(wall[n]), "ratio_to_baseline": statistics.median(cpu[n]) / base}
            for n in COMMANDS]
    ratio = rows[1]["ratio_to_baseline"]
    pair = statistics.median([b / a for a, b in zip(cpu["baseline: import numpy, scipy.sparse"],
                                                    cpu["python -m dpfed_core methods"])])
    verdict = "met" if ratio <= TARGET_RATIO else "missed"
    share = statistics.median(shares)
    share_verdict = "met" if share <= TARGET_IMPORT_SHARE else "missed"
    doc = {"repeats": repeats, "rows": rows, "target_ratio": TARGET_RATIO, "ratio": ratio, "pairwise_ratio": pair,
           "verdict": verdict, "import_share_runs": shares, "import_share": share,
           "target_import_share": TARGET_IMPORT_SHARE, "import_share_verdict": share_verdict, "machine": C.machine()}
    md = (f"# Command-line start-up\n\n{repeats} interleaved runs of each command; CPU time (user + system) of "
          f"the child process, median.\n\n" + C.md_table(rows) +
          f"\n\n`python -m dpfed_core methods` / baseline = **{ratio:.2f}×** (median of the pairwise ratios "
          f"{pair:.2f}×; target ≤ {TARGET_RATIO}×): **{verdict}**.\n\n"
          f"A simulation-mode `dp-cooccurrence` run on the clinic sample spends **{100 * share:.0f} %** of its CPU "
          f"on imports (median of {repeats}; min {100 * min(shares):.0f} %, max {100 * max(shares):.0f} %; "
          f"target ≤ {100 * TARGET_IMPORT_SHARE:.0f} %): **{share_verdict}**.\n")
    out = C.outputs("startup", args.quick)
    C.write_results(out["json"], doc, md)


if __name__ == "__main__":
    main()
