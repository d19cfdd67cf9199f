"""Peak memory of reading a large upload (issue 12: a 2-million-row, 88 MB long table peaked at 1.7 GB,
20× the file; target < 5×).

Generates a long table in a temp folder (user, item, rating, entity; 2M rows by default, ~88 MB),
then loads it with :func:`dpfed_core.data.loaders.load_long_table` in a fresh child process and
reports the child's peak RSS above its RSS right after the imports (the loader's own peak), next to
the file size. ``--rows N`` changes the size (small runs for a quick check).

    python bench/bench_intake_memory.py            # full size, writes bench/results/intake_memory.md
    python bench/bench_intake_memory.py --rows 200000 --no-write
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_table(path: Path, rows: int, seed: int = 0) -> None:
    """~44 bytes a row: "patient_0123456,item_0012345,4,hospital 017" — written in blocks (numpy, no pandas)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n_users = max(rows // 20, 10)
    with open(path, "w") as f:
        f.write("user,item,rating,entity\n")
        for start in range(0, rows, 500_000):
            n = min(500_000, rows - start)
            u = rng.integers(0, n_users, n)
            it = rng.zipf(1.3, n) % 20_000
            r = rng.integers(1, 6, n)
            ent = u % 40  # each user in one entity
            f.write("".join(f"patient_{a:07d},item_{b:07d},{c},hospital {d:03d}\n" for a, b, c, d in zip(u, it, r, ent)))


def child(path: str) -> None:
    import numpy as np  # noqa: F401  (imports first: their memory is not the loader's)
    import pandas as pd  # noqa: F401
    import scipy.sparse  # noqa: F401

    from dpfed_core.data.loaders import load_long_table

    def rss_kb() -> int:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    base = rss_kb()
    t0 = time.perf_counter()
    ds = load_long_table(path, user_col="user", item_col="item", value_col="rating", entity_col="entity",
                         value_kind="ratings", duplicates="last")
    secs = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux
    print(json.dumps({"base_kb": base, "peak_kb": peak, "seconds": secs, "users": ds.n_users,
                      "items": ds.n_items, "nnz": int(ds.X.nnz), "entities": ds.n_entities}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        child(a.child)
        return
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "upload.csv"
        make_table(path, a.rows)
        size = path.stat().st_size
        r = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True,
                           cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
        if r.returncode:
            sys.exit(r.stderr)
        res = json.loads(r.stdout.strip().splitlines()[-1])
    loader_mb = (res["peak_kb"] - res["base_kb"]) / 1024
    lines = [
        "# Intake: peak memory of a large upload (bench/bench_intake_memory.py)",
        "",
        f"- file: {a.rows:,} rows, {size / 1e6:.1f} MB (user, item, rating, entity; generated)",
        f"- loaded: {res['users']:,} users × {res['items']:,} items, {res['nnz']:,} ratings, "
        f"{res['entities']} entities in {res['seconds']:.1f} s",
        f"- peak RSS of the loading process: {res['peak_kb'] / 1024:.0f} MiB; after imports {res['base_kb'] / 1024:.0f} MiB",
        f"- **loader's own peak (above the process after its imports): {loader_mb:.0f} MiB = "
        f"{loader_mb * 2**20 / size:.2f}× the file** (target < 5×; issue 12 measured 20× before: 1.7 GB for 88 MB); "
        f"whole process incl. numpy/pandas/scipy: {res['peak_kb'] * 1024 / size:.2f}×",
        "",
        "How: text columns are read in chunks of 100k rows as strings (never parsed as numbers, so ids",
        "stay exact) and each chunk's id columns become categoricals at once; all later steps work on",
        "integer codes.",
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_write:
        out = ROOT / "bench" / "results" / "intake_memory.md"
        out.write_text(text)


if __name__ == "__main__":
    main()
