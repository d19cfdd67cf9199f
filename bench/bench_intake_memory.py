"""Peak memory and time of large uploads.

Part 1 — loading (a 2-million-row, 88 MB long table peaked at 1.7 GB, 20× the file; target
< 5×): a long table (user, item, rating, entity; 2M rows by default) loaded with
:func:`dpfed_core.data.long_table.load_long_table` in a fresh child process.

Part 2 — a whole run: a 1-million-row long table of 50,000 users and 5,000 items in 40
declared entities through ``python -m dpfed_core run --method dp-cooccurrence`` (production noise),
target ≤ 120 s on 2 cores and a peak ≤ 4× the file; then the same rows with a declared catalogue of
100,000 items (95,000 of them never used), target ≤ 1.5× the memory of the 5,000-item run (nothing
may grow with the catalogue beyond O(items × rank)).

Each measurement runs in a fresh child process and reports its peak RSS above its RSS right after
the imports (the work's own peak), next to the file size.

    python bench/bench_intake_memory.py                     # both parts, writes bench/results/intake_memory.md
    python bench/bench_intake_memory.py --part run --rows 200000 --users 10000 --no-write   # a quick check
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


def make_run_table(folder: Path, rows: int, users: int, items: int, catalogue: int, entities: int = 40,
                   seed: int = 0) -> dict:
    """A long table of ``rows`` (user, item) events (no repeated pair) over ``users`` users and ``items``
    items (Zipf-like popularity), the declared catalogue (``catalogue`` ≥ ``items`` names, one per line)
    and the declared entity list. Returns the paths."""
    import numpy as np

    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, items + 1) ** 0.9
    w /= w.sum()
    per_user = rng.multinomial(rows, np.ones(users) / users)
    table = folder / "events.csv"
    with open(table, "w") as f:
        f.write("user,item,entity\n")
        for start in range(0, users, 5000):
            lines = []
            for u in range(start, min(users, start + 5000)):
                k = int(min(per_user[u], items))
                its = rng.choice(items, size=k, replace=False, p=w) if k else []
                lines.extend(f"patient_{u:07d},item_{i:06d},hospital {u % entities:03d}\n" for i in its)
            f.write("".join(lines))
    cat = folder / f"catalogue_{catalogue}.txt"
    cat.write_text("item\n" + "".join(f"item_{i:06d}\n" for i in range(catalogue)))
    ents = folder / "entities.txt"
    ents.write_text("".join(f"hospital {h:03d}\n" for h in range(entities)))
    return {"table": table, "items": cat, "entities": ents}


def _rss_kb(field: str = "VmRSS") -> int:
    """This address space's resident size, or with ``field="VmHWM"`` its peak: unlike ru_maxrss, which a
    vforked child inherits from its parent, VmHWM starts afresh at exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def child_load(path: str) -> None:
    import numpy as np  # noqa: F401  (imports first: their memory is not the loader's)
    import pandas as pd  # noqa: F401
    import scipy.sparse  # noqa: F401

    from dpfed_core.data.long_table import load_long_table

    base = _rss_kb()
    t0 = time.perf_counter()
    ds = load_long_table(path, user_col="user", item_col="item", value_col="rating", entity_col="entity",
                         value_kind="ratings", duplicates="last")
    secs = time.perf_counter() - t0
    peak = _rss_kb("VmHWM")
    print(json.dumps({"base_kb": base, "peak_kb": peak, "seconds": secs, "users": ds.n_users,
                      "items": ds.n_items, "nnz": int(ds.X.nnz), "entities": ds.n_entities}))


def child_run(spec: str) -> None:
    """``python -m dpfed_core run`` in this process, after the imports a run needs."""
    import contextlib
    import io

    import numpy as np  # noqa: F401
    import pandas as pd  # noqa: F401
    import scipy.sparse  # noqa: F401
    import sklearn  # noqa: F401

    import dpfed_core.evaluation.experiments  # noqa: F401
    import dpfed_core.federation.summable  # noqa: F401
    from dpfed_core.cli import main

    a = json.loads(spec)
    base = _rss_kb()
    t0 = time.perf_counter()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["run", "--data", a["table"], "--user-col", "user", "--item-col", "item", "--entity-col",
                     "entity", "--value-kind", "implicit", "--items", a["items"], "--entities", a["entities"],
                     "--method", "dp-cooccurrence", "--epsilon", "1", "--seed", "0",
                     *(["--simulation"] if a.get("simulation") else []), "--out", a["out"]])
    secs = time.perf_counter() - t0
    ru = resource.getrusage(resource.RUSAGE_SELF)
    peak = _rss_kb("VmHWM")
    doc = json.loads(Path(a["out"]).read_text()) if code == 0 else {}
    print(json.dumps({"code": code, "base_kb": base, "peak_kb": peak, "seconds": secs,
                      # user + system CPU of the whole process (the imports' share is small)
                      "cpu_seconds": ru.ru_utime + ru.ru_stime, "load": os.getloadavg(),
                      "dataset": doc.get("dataset", {}), "mar": doc.get("overall", {}).get("mar"),
                      "timings": doc.get("timings", {})}))


def _child(flag: str, arg: str) -> dict:
    load_before = os.getloadavg()
    r = subprocess.run([sys.executable, __file__, flag, arg], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
    if r.returncode:
        sys.exit(r.stderr)
    res = json.loads(r.stdout.strip().splitlines()[-1])
    res["load_before"], res["load_after"] = load_before, os.getloadavg()
    return res


def _cores() -> int:
    """The cores this process may run on (what the OpenDP draws are spread over)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def _load_text(res: dict) -> str:
    """The machine's load average (1 min) when the child started and ended: wall seconds are only
    comparable with the CPU seconds at a load below the number of cores."""
    return f"load average {res['load_before'][0]:.1f} → {res['load_after'][0]:.1f} on {_cores()} cores"


def part_load(rows: int) -> list[str]:
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "upload.csv"
        make_table(path, rows)
        size = path.stat().st_size
        res = _child("--child-load", str(path))
    loader_mb = (res["peak_kb"] - res["base_kb"]) / 1024
    return [
        "## Loading a large upload",
        "",
        f"- file: {rows:,} rows, {size / 1e6:.1f} MB (user, item, rating, entity; generated)",
        f"- loaded: {res['users']:,} users × {res['items']:,} items, {res['nnz']:,} ratings, "
        f"{res['entities']} entities in {res['seconds']:.1f} s ({_load_text(res)})",
        f"- peak RSS of the loading process: {res['peak_kb'] / 1024:.0f} MiB; after imports {res['base_kb'] / 1024:.0f} MiB",
        f"- **loader's own peak (above the process after its imports): {loader_mb:.0f} MiB = "
        f"{loader_mb * 2**20 / size:.2f}× the file** (target < 5×; the loader measured 20× before: 1.7 GB for 88 MB); "
        f"whole process incl. numpy/pandas/scipy: {res['peak_kb'] * 1024 / size:.2f}×",
        "",
        "How: text columns are read in chunks of 25k rows (`tables.TEXT_CHUNK_ROWS`) as strings (never parsed as",
        "numbers, so ids",
        "stay exact) and each chunk's id columns become categoricals at once; all later steps work on",
        "integer codes.",
        "",
    ]


def part_run(rows: int, users: int, items: int, big_catalogue: int, simulation: bool) -> list[str]:
    lines = ["## A whole run: `run --method dp-cooccurrence` on a large long table", ""]
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        paths = make_run_table(folder, rows, users, items, items)
        big = folder / f"catalogue_{big_catalogue}.txt"
        big.write_text("item\n" + "".join(f"item_{i:06d}\n" for i in range(big_catalogue)))
        size = paths["table"].stat().st_size
        results = {}
        for n_cat, cat in ((items, paths["items"]), (big_catalogue, big))[: 2 if big_catalogue else 1]:
            spec = {"table": str(paths["table"]), "items": str(cat), "entities": str(paths["entities"]),
                    "out": str(folder / f"r{n_cat}.json"), "simulation": simulation}
            results[n_cat] = _child("--child-run", json.dumps(spec))
            print(f"{n_cat}-item catalogue: {json.dumps(results[n_cat])}", file=sys.stderr, flush=True)
            if results[n_cat]["code"] != 0:
                sys.exit(f"the run with a {n_cat}-item catalogue failed (exit {results[n_cat]['code']})")
    small = results[items]
    large = results.get(big_catalogue)
    own = {k: (r["peak_kb"] - r["base_kb"]) / 1024 for k, r in results.items()}
    ds = small["dataset"]
    sel = min(items, 600)  # items in the co-occurrence release (dp-cooccurrence's max_items default)
    lines += [
        f"- file: {rows:,} rows, {size / 1e6:.1f} MB (user, item, entity; generated; {users:,} users, {items:,} items "
        f"used, 40 declared entities)",
        f"- dataset: {ds.get('n_users', 0):,} users × {ds.get('n_items', 0):,} items, "
        f"{ds.get('n_interactions', 0):,} interactions; noise: {'simulation' if simulation else 'production (OpenDP)'}",
        f"- **{items:,}-item catalogue: {small['seconds']:.1f} s wall, {small['cpu_seconds']:.0f} CPU-s "
        f"({_load_text(small)}); own peak {own[items]:.0f} MiB = {own[items] * 2**20 / size:.2f}× the file** "
        f"(targets ≤ 120 s on 2 cores, ≤ 4×); whole process {small['peak_kb'] / 1024:.0f} MiB "
        f"({small['peak_kb'] * 1024 / size:.2f}×, of which {small['base_kb'] / 1024:.0f} MiB are the imports)",
        (f"- **{big_catalogue:,}-item declared catalogue, same rows: {large['seconds']:.1f} s wall, "
         f"{large['cpu_seconds']:.0f} CPU-s ({_load_text(large)}); own peak "
         f"{own[big_catalogue]:.0f} MiB = {own[big_catalogue] / max(own[items], 1):.2f}× the {items:,}-item run** "
         f"(target ≤ 1.5×); whole process {large['peak_kb'] / 1024:.0f} MiB") if large else
        "- the large-catalogue run was skipped (--catalogue 0)",
        f"- stage seconds ({items:,} items): " + ", ".join(f"{k} {v:.1f}" for k, v in small["timings"].items()
                                                           if isinstance(v, (int, float))),
        "",
        *(["With `--simulation` (NumPy noise): production noise (OpenDP's samplers) adds the co-occurrence",
           "stage's 40 × 600·601/2 ≈ 7.2 M Gaussian draws, ≈ 90 CPU-s at ~12.5 µs a draw (measured 2026-11-26), which",
           "this figure leaves out; OpenDP's sampler adds about 20 MiB to the own peak (its library pages and its",
           "threads' memory: see a production run's page), a constant that does not grow with the table.", ""] if simulation else
          [f"Production noise: the co-occurrence stage's 40 × {sel}·{sel + 1}/2 ≈ {40 * sel * (sel + 1) / 2e6:.1f} M "
           "Gaussian draws are OpenDP's exact sampler at ~12.5 µs a draw whatever the scale",
           f"(≈ {40 * sel * (sel + 1) / 2 * 12.5e-6:.0f} CPU-s, most of the CPU-seconds above);",
           f"each release is drawn in one slice per core ({_cores()} here) on threads (OpenDP's ctypes calls",
           "release the GIL), so on an otherwise idle machine they take about half that in wall time.",
           "The sampler also adds to the own peak a constant that does not grow with the table: measured in a",
           "fresh process after the same imports, the first OpenDP draw pages in ≈ 8 MiB of the library's code",
           "(file-backed RSS) and 200,000 draws on the threads add ≈ 8 MiB more; the same run with NumPy",
           "noise (`--simulation`) peaked at 139–151 MiB (3.55–3.85× the file) on 2026-11-26, with 100k-row text chunks",
           "(168 MiB, 4.29×, with production noise; 25k-row chunks brought it to the figure above).", ""]),
        "\"Own peak\" is the child's peak RSS above its RSS after the imports a run needs (numpy, pandas,",
        "scipy, scikit-learn, the engine): the memory the run itself takes.",
        "",
        "What grew with the catalogue (1.14 → 3.29 GB): the evaluation scored 512 test users × every",
        "item at once (now batches of at most 2^19 cells); the summable round 2 held every entity's own columns",
        "in a block layout, O(items × entities × rank) (now per-entity factors, sparse in items:",
        "`dpfed_core/models/entity_factors.py`); the blend scored every hold-out user × item some 40 times per",
        "entity (now ≤ 1,000 users × 2,000 sampled candidate items, no weight vector scored twice).",
        "",
        "Where the time went (round 2 234.7 s wall, 79 CPU-s for the whole run): the blend's weight",
        "search (~34 weight vectors an entity) multiplied each part in multi-threaded BLAS, whose second",
        "thread only spins on these thin products (72 vs 12 CPU-ms a weight vector on a loaded machine);",
        "it now runs single-threaded in row blocks with reused buffers and the same arithmetic (the same",
        "weights). The OpenDP draws were one call a release on one core; now one slice per core.",
        "",
    ]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--part", choices=["load", "run", "both"], default="both")
    ap.add_argument("--rows", type=int, help="rows of the table (default 2,000,000 to load, 1,000,000 to run)")
    ap.add_argument("--users", type=int, default=50_000)
    ap.add_argument("--items", type=int, default=5_000)
    ap.add_argument("--catalogue", type=int, default=100_000, help="the large declared catalogue (0: skip that run)")
    ap.add_argument("--simulation", action="store_true", help="NumPy noise instead of OpenDP's samplers")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--child-load", help=argparse.SUPPRESS)
    ap.add_argument("--child-run", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child_load:
        child_load(a.child_load)
        return
    if a.child_run:
        child_run(a.child_run)
        return
    lines = ["# Intake at size: peak memory and time (bench/bench_intake_memory.py)", ""]
    if a.part in ("load", "both"):
        lines += part_load(a.rows or 2_000_000)
    if a.part in ("run", "both"):
        lines += part_run(a.rows or 1_000_000, a.users, a.items, a.catalogue, a.simulation)
    text = "\n".join(lines) + "\n"
    print(text)
    if not a.no_write:
        out = ROOT / "bench" / "results" / "intake_memory.md"
        out.write_text(text)


if __name__ == "__main__":
    main()
