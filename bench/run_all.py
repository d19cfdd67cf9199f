"""Run every benchmark (``bench/bench_*.py``) in turn and write ``bench/results/SUMMARY.md``.

Each script writes its own JSON + markdown (+ PNG) under ``bench/results/`` (``*_quick.*`` in quick
mode). This runner only orchestrates: one subprocess per script, its exit status, wall time and the
result files it produced, then a summary page linking them.

Usage::

    .venv/bin/python bench/run_all.py                 # everything, full size (≈ 60 min on 2 cores)
    .venv/bin/python bench/run_all.py --quick         # small sizes (a few minutes)
    .venv/bin/python bench/run_all.py --only scale    # one script (name with or without bench_)
    .venv/bin/python bench/run_all.py --only scale,peers --quick
    .venv/bin/python bench/run_all.py --list

``make bench`` runs the first form. Scripts that do not know ``--quick`` are run without it.

A *complete* run (no ``--only`` / ``--skip``, not ``--quick``) first moves every previous result file
to ``bench/results/tmp/previous/`` (gitignored), so every result file left in ``bench/results/``
afterwards was produced by this one run; SUMMARY.md then states the run's start, end, duration and
machine and checks that no result file predates the run (committed results must never
mix runs). A partial or quick run says so in its summary; its results are not to be committed.
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

#: Order: cheap and engine-level first, paper reproductions last; unknown scripts go at the end.
ORDER = ["startup", "engine", "scale", "parallel", "peers", "dp_kmeans", "dp_ml", "paper_synthetic", "paper_real",
         "friedman", "fcf", "xin"]


#: Scripts whose results are timings or memory: with ``--jobs`` > 1 they still run alone.
ALONE = {"startup", "engine", "scale", "parallel", "samplers", "deployment", "intake_memory", "production_noise"}


def discover() -> list[Path]:
    scripts = sorted(C.BENCH.glob("bench_*.py"))
    rank = {n: i for i, n in enumerate(ORDER)}
    return sorted(scripts, key=lambda p: (rank.get(p.stem[6:], len(ORDER)), p.stem))


def supports_quick(script: Path) -> bool:
    return "--quick" in script.read_text(errors="replace")


def run_script(script: Path, quick: bool, timeout: float, log_dir: Path) -> dict:
    args = [sys.executable, str(script)]
    if quick and supports_quick(script):
        args.append("--quick")
    started = time.time()
    t0 = time.perf_counter()
    log = log_dir / f"{script.stem}{'_quick' if quick else ''}.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    with open(log, "w") as fh:
        try:
            p = subprocess.run(args, cwd=C.ROOT, stdout=fh, stderr=subprocess.STDOUT, timeout=timeout, env=env)
            code = p.returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    dt = time.perf_counter() - t0
    tail = log.read_text(errors="replace").strip().splitlines()[-3:]
    return {"script": script.name, "args": args[2:], "returncode": code, "seconds": dt, "started": started,
            "log": log, "tail": tail}


def produced(since: float, quick: bool, script: Path | None = None) -> list[Path]:
    """Result files written since ``since`` — by convention named after the script (bench_X → X*)."""
    pattern = f"{script.stem[6:]}*" if script is not None else "*"
    files = [p for p in C.RESULTS.glob(pattern) if p.is_file() and p.stat().st_mtime >= since - 1
             and p.suffix in (".md", ".json", ".jsonl", ".png") and p.name != "SUMMARY.md"]
    if quick:
        return sorted(files)
    return sorted(f for f in files if "_quick" not in f.stem)


def headline(md: Path) -> str:
    try:
        for line in md.read_text().splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    except OSError:
        pass
    return md.stem


def merge_state(records: list[dict], quick: bool) -> list[dict]:
    """Merge this run's records into ``run_all[_quick].json`` so a partial run (``--only``) keeps the
    other scripts' latest status in the summary. Returns all records in suite order."""
    import json

    state_path = C.RESULTS / f"run_all{'_quick' if quick else ''}.json"
    try:
        state = json.loads(state_path.read_text())
    except (OSError, ValueError):
        state = {}
    for r in records:
        if r["script"] in state and r["seconds"] != r["seconds"]:  # summary-only: keep the real run's status
            state[r["script"]]["files"] = [p.name for p in r["files"]]
            continue
        state[r["script"]] = {"args": r["args"], "returncode": r["returncode"],
                              "seconds": None if r["seconds"] != r["seconds"] else r["seconds"],
                              "started": r["started"], "log": str(r["log"].relative_to(C.ROOT)),
                              "tail": r["tail"], "files": [p.name for p in r["files"]]}
    present = {p.name for p in discover()}
    state = {k: v for k, v in state.items() if k in present}
    state_path.write_text(json.dumps(state, indent=1))
    order = [p.name for p in discover()]
    out = []
    for name in order:
        if name in state:
            v = dict(state[name], script=name)
            v["seconds"] = float("nan") if v.get("seconds") is None else v["seconds"]
            v["files"] = [C.RESULTS / f for f in v["files"] if (C.RESULTS / f).exists()]
            v["log"] = C.ROOT / v["log"]
            out.append(v)
    return out


def result_files(quick: bool) -> list[Path]:
    """Result files (md/json/png) directly under bench/results/, of the given mode."""
    return sorted(p for p in C.RESULTS.glob("*") if p.is_file() and p.suffix in (".md", ".json", ".jsonl", ".png")
                  and (("_quick" in p.stem) == quick))


def set_aside_previous(quick: bool) -> int:
    """Move the previous results of this mode to bench/results/tmp/previous/ (gitignored)."""
    dest = C.RESULTS / "tmp" / "previous"
    dest.mkdir(parents=True, exist_ok=True)
    moved = 0
    for p in result_files(quick):
        p.replace(dest / p.name)
        moved += 1
    return moved


def write_summary(records: list[dict], quick: bool, started: float, complete: bool = False,
                  jobs_note: str = "") -> Path:
    m = C.machine()
    name = "SUMMARY_quick.md" if quick else "SUMMARY.md"
    ended = time.time()
    if complete:
        stale = [p.name for p in result_files(quick) if p.stat().st_mtime < started and not p.stem.startswith(("SUMMARY", "run_all"))]
        run_line = (f"**One complete run** of every benchmark: started {time.strftime('%Y-%m-%d %H:%M %Z', time.localtime(started))}, "
                    f"finished {time.strftime('%Y-%m-%d %H:%M %Z', time.localtime(ended))}, "
                    f"**{(ended - started) / 60:.1f} min** in total. "
                    + ("Every result file linked below was produced by this run."
                       if not stale else f"**Stale files predating this run: {', '.join(stale)}.**"))
    else:
        run_line = ("**Partial or quick run** (`--only`, `--skip` or `--quick`): the rows below may come from "
                    "different runs; these results are not a committed state (run `make bench`).")
    if jobs_note:
        run_line += " " + jobs_note
    L = [f"# Benchmark summary{' (quick mode)' if quick else ''}", "", run_line, "",
         f"Machine: {m['cpus']} cores ({m['cpu']}), {m['mem_gib']} GiB, Python {m['python']}, numpy {m['numpy']}, "
         f"scipy {m['scipy']}, scikit-learn {m['scikit-learn']}; git {m['git_commit'] or '(uncommitted)'}. "
         "The machine may be shared: the timings are wall-clock. How to run and what each script measures: "
         "[../README.md](../README.md).", "",
         "| benchmark | status | minutes | run at | results |", "|---|---|---|---|---|"]
    for r in records:
        status = "ok" if r["returncode"] == 0 else f"**failed** ({r['returncode']})"
        mds = [p for p in r["files"] if p.suffix == ".md"]
        links = ", ".join(f"[{headline(p)}]({p.name})" for p in mds) or "—"
        L.append(f"| `{r['script']}{' ' + ' '.join(r['args']) if r['args'] else ''}` | {status} | "
                 f"{'—' if r['seconds'] != r['seconds'] else format(r['seconds'] / 60, '.1f')} | {time.strftime('%m-%d %H:%M', time.localtime(r['started']))} | {links} |")
    fails = [r for r in records if r["returncode"] != 0]
    if fails:
        L += ["", "## Failures", ""]
        for r in fails:
            L.append(f"- `{r['script']}` (log `{r['log'].relative_to(C.ROOT)}`): " + " / ".join(r["tail"]))
    # headline numbers pulled from the markdown reports: the lines that state whether a claim or
    # target holds, so the summary shows where the project stands without opening every page.
    L += ["", "## Claims and targets at a glance", ""]
    pat = re.compile(r"\b(met|MISSED|missed|holds|does not hold|partly holds|inconclusive|FAILED)\b")
    for r in records:
        for p in [q for q in r["files"] if q.suffix == ".md"]:
            hits = [ln.strip() for ln in p.read_text(errors="replace").splitlines()
                    if pat.search(ln) and ln.strip().startswith(("-", "*", "**"))]
            if hits:
                L.append(f"**[{headline(p)}]({p.name})**")
                L += [f"{h if h.startswith('-') else '- ' + h}" for h in hits[:12]]
                L.append("")
    path = C.RESULTS / name
    path.write_text("\n".join(L) + "\n")
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Run the dpfed benchmark suite.")
    ap.add_argument("--quick", action="store_true", help="small sizes (passed to every script that supports it)")
    ap.add_argument("--only", default="", help="comma-separated script names (scale, bench_scale, bench_scale.py)")
    ap.add_argument("--skip", default="", help="comma-separated script names to leave out")
    ap.add_argument("--list", action="store_true", help="list the scripts and exit")
    ap.add_argument("--summary-only", action="store_true",
                    help="run nothing: rebuild the summary from the result files on disk")
    ap.add_argument("--timeout", type=float, default=3 * 3600, help="seconds per script")
    ap.add_argument("--jobs", type=int, default=1,
                    help="run up to this many accuracy-only scripts at a time (the timing scripts "
                         f"{', '.join(sorted(ALONE))} always run alone, first)")
    args = ap.parse_args(argv)

    def norm(s: str) -> str:
        s = s.strip()
        s = s[:-3] if s.endswith(".py") else s
        return s if s.startswith("bench_") else f"bench_{s}"

    scripts = discover()
    if args.list:
        for s in scripts:
            print(s.name, "(--quick)" if supports_quick(s) else "")
        return 0
    if args.only:
        want = {norm(s) for s in args.only.split(",") if s.strip()}
        unknown = want - {s.stem for s in scripts}
        if unknown:
            print(f"unknown benchmark(s): {', '.join(sorted(unknown))}; have: "
                  f"{', '.join(s.stem for s in scripts)}", file=sys.stderr)
            return 2
        scripts = [s for s in scripts if s.stem in want]
    if args.skip:
        drop = {norm(s) for s in args.skip.split(",") if s.strip()}
        scripts = [s for s in scripts if s.stem not in drop]
    if args.summary_only:
        recs = []
        for sc in scripts:
            files = sorted(p for p in C.RESULTS.glob(f"{sc.stem[6:]}*") if p.suffix in (".md", ".json", ".jsonl", ".png")
                           and (("_quick" in p.stem) == args.quick))
            if files:
                t = max(p.stat().st_mtime for p in files)
                recs.append({"script": sc.name, "args": ["--quick"] if args.quick else [], "returncode": 0,
                             "seconds": float("nan"), "started": t, "log": C.RESULTS / "tmp" / f"{sc.stem}.log",
                             "tail": [], "files": files})
        path = write_summary(merge_state(recs, args.quick), args.quick, min((r["started"] for r in recs), default=time.time()))
        print(f"wrote {path.relative_to(C.ROOT)}")
        return 0
    C.RESULTS.mkdir(parents=True, exist_ok=True)
    log_dir = C.RESULTS / "tmp"  # gitignored
    log_dir.mkdir(parents=True, exist_ok=True)
    complete = not (args.only or args.skip or args.quick)
    if complete:  # nothing from an earlier run may remain next to this run's results
        n_prev = set_aside_previous(False)
        (C.RESULTS / "run_all.json").unlink(missing_ok=True)
        print(f"complete run: moved {n_prev} previous result files to {log_dir / 'previous'}", flush=True)
    started = time.time()
    records = []

    def one(s: Path, alone: bool) -> dict:
        print(f"=== {s.name}{' --quick' if args.quick and supports_quick(s) else ''}"
              f"{'' if alone else f' (up to {args.jobs} at a time)'}", flush=True)
        r = run_script(s, args.quick, args.timeout, log_dir)
        r["files"] = produced(r["started"], args.quick, s)
        r["alone"] = alone
        print(f"    {s.name}: {'ok' if r['returncode'] == 0 else 'FAILED (' + str(r['returncode']) + ')'} in "
              f"{r['seconds'] / 60:.1f} min; {len(r['files'])} result files; log {r['log'].relative_to(C.ROOT)}",
              flush=True)
        return r

    if args.jobs <= 1:
        records = [one(s, True) for s in scripts]
    else:  # timing scripts alone first, then the accuracy-only ones concurrently
        from concurrent.futures import ThreadPoolExecutor

        records = [one(s, True) for s in scripts if s.stem[6:] in ALONE]
        shared = [s for s in scripts if s.stem[6:] not in ALONE]
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            records += list(pool.map(lambda s: one(s, False), shared))
        rank = {p.name: i for i, p in enumerate(scripts)}
        records.sort(key=lambda r: rank[r["script"]])
    jobs_note = (f"Timing scripts ({', '.join(sorted(ALONE))}) ran alone; the others ran up to {args.jobs} at a "
                 "time, so their own seconds columns are wall times under that load."
                 if args.jobs > 1 else "Every script ran alone, one after the other.")
    path = write_summary(merge_state(records, args.quick), args.quick, started, complete=complete,
                         jobs_note=jobs_note)
    print(f"wrote {path.relative_to(C.ROOT)}")
    return 0 if all(r["returncode"] == 0 for r in records) else 1


if __name__ == "__main__":
    sys.exit(main())
