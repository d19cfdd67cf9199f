"""Start-up cost of the command line (issue 10's target).

``python -m dpfed_core methods`` must take under 1.5× the time of ``python -c "import numpy,
scipy.sparse"`` (the two libraries every command needs): everything else — scikit-learn, SciPy's
stats and special functions, pandas, plotly, joblib — is imported only by the commands that use it.

Measures CPU time (user + system of the child process, from ``resource.getrusage``), which is far
less sensitive to other load on the machine than wall time, over ``--repeats`` interleaved runs of
each command; reports the median and the ratio of medians. Writes ``bench/results/startup.{json,md}``.
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
TARGET_RATIO = 1.5


def _cpu_seconds(cmd: list[str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, cwd=C.ROOT, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=15)
    ap.add_argument("--quick", action="store_true", help="5 repeats")
    args = ap.parse_args()
    repeats = 5 if args.quick else args.repeats
    cpu: dict[str, list[float]] = {k: [] for k in COMMANDS}
    wall: dict[str, list[float]] = {k: [] for k in COMMANDS}
    for _ in range(repeats):  # interleaved, so drifting load hits every command alike
        for name, cmd in COMMANDS.items():
            c, w = _cpu_seconds(cmd)
            cpu[name].append(c)
            wall[name].append(w)
    base = statistics.median(cpu["baseline: import numpy, scipy.sparse"])
    rows = [{"command": n, "cpu_median_s": statistics.median(cpu[n]), "cpu_min_s": min(cpu[n]),
             "wall_median_s": statistics.median(wall[n]), "ratio_to_baseline": statistics.median(cpu[n]) / base}
            for n in COMMANDS]
    ratio = rows[1]["ratio_to_baseline"]
    verdict = "met" if ratio < TARGET_RATIO else "missed"
    doc = {"repeats": repeats, "rows": rows, "target_ratio": TARGET_RATIO, "ratio": ratio, "verdict": verdict,
           "machine": C.machine()}
    md = (f"# Command-line start-up\n\n{repeats} interleaved runs of each command; CPU time (user + system) of "
          f"the child process, median.\n\n" + C.md_table(rows) +
          f"\n\n`python -m dpfed_core methods` / baseline = **{ratio:.2f}×** (target < {TARGET_RATIO}×): "
          f"**{verdict}**.\n")
    out = C.outputs("startup", args.quick)
    C.write_results(out["json"], doc, md)


if __name__ == "__main__":
    main()
