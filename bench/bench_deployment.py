"""A real local Flower deployment vs the in-process run — wall time, CPU and bytes.

Part 1. For H = 3, 10, 30 entities (synthetic Poisson data, 100 users per entity, 200 items), runs
``kmeans`` (prototypes on the wire), ``dp-popularity`` (one SecAgg+ secure sum) and
``dp-cooccurrence`` (popularity (200) and the packed co-occurrence matrix (200·201/2 = 20 100
entries); 200 items ≤ its ``max_items``, so both stages ride in one SecAgg+ sum of 20 300 entries,
``federation.summable.fused_stages``) both in-process
(:func:`run_method`) and on each engine: ``deployment`` (:func:`run_deployed`: one SuperLink, H
SuperNodes, the ServerApp, TLS and node authentication, all started and stopped inside the
measurement) and ``simulation`` (Flower's Simulation Engine with its default in-process backend, no Ray; a row
says so when it cannot run), in simulation mode (labelled, reproducible noise), and reports:

* wall time: in-process = fit + evaluation; deployment = everything from process start to stop;
* CPU seconds: of this process, plus every process the deployment started (reaped children);
* bytes: in-process = the payload arrays of the protocol's message log (``nbytes``); deployment =
  the serialised size of every Flower message the ServerApp sent or received (run instructions,
  SecAgg+ key exchange, masked vectors, V, acknowledgements), without HTTP/TLS framing;
* whether the deployment's metrics equal the in-process ones (they must, in simulation mode);
* the 1-minute load average before and after the row (the machine may be shared).

Part 2 (the targets), through the CLI as a user runs it (``python -m dpfed_core …``, budget
store in a temporary file): ``run`` vs ``deploy-local`` on each engine of ``--engines`` — the clinic
sample's 4 regions (``--federation region``) with kmeans and with every summable method
(dp-popularity, dp-cooccurrence, dp-als, … under ``--aggregation secure``), and the 30-hospital
clinic sample with dp-cooccurrence under ``--aggregation secure``. Targets: every summable method's
``deploy-local`` within 4× the CPU seconds of its ``run`` on both engines; kmeans within 10× the
run (deployment) or 3× (simulation engine, its default in-process backend); the 30 hospitals within
60 s (deployment) or 3× the run (simulation engine).

CPU seconds of a command are those of its whole process tree: this process makes itself the
subreaper of what it starts (``PR_SET_CHILD_SUBREAPER``), so a deployment's processes that outlive
their parent (a SuperNode's executor, SIGKILLed with its group at the end) are reaped here and
counted, not by init.

Writes ``bench/results/deployment{,_quick}.{json,md}``. ``--quick``: H = 3 only, no part 2.
``--methods a,b``: measure only those methods (part 1). ``--targets-only``: part 2 alone (the
results files are then not written; the rows are printed).
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

from dpfed_core.config import RunConfig  # noqa: E402
from dpfed_core.deployment.deployed import run_deployed  # noqa: E402
from dpfed_core.evaluation.experiments import run_method  # noqa: E402

METHODS = {"kmeans": dict(k=10, rank=5, epsilon=math.inf),
           "dp-popularity": dict(rank=5, epsilon=1.0, aggregation="secure"),
           "dp-cooccurrence": dict(rank=5, epsilon=1.0, aggregation="secure")}
SIZES = {"kmeans": (3, 10, 30), "dp-popularity": (3, 10, 30), "dp-cooccurrence": (3, 10, 30)}
METRICS = ("mar", "test_rmse", "ndcg_at_10")


def _cpu() -> float:
    """CPU seconds of this process and of every child it has reaped (the deployment's processes)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def one(H: int, method: str, engine: str) -> dict:
    from dpfed_core.deployment.simulation_engine import available as simulation_engine_available

    # The generator's 200 items are its own public list: a declared catalogue (as in the tests), which a
    # DP prototype run on a deployment needs (its per-entity DP catalogue selection is not a deployment round).
    ds = dataclasses.replace(C.synthetic(100 * H, n_items=200, n_entities=H, seed=0), item_source="declared")
    cfg = RunConfig(method=method, simulation=True, max_iter=100, **METHODS[method])
    load0 = os.getloadavg()[0]
    row = {"entities": H, "method": method, "engine": engine, "load_before": load0}
    if engine == "simulation":
        ok, why = simulation_engine_available()
        if not ok:
            return {**row, "note": why}
    c0, t0 = _cpu(), time.perf_counter()
    ref, _ = run_method(ds, cfg)
    t_in, c_in = time.perf_counter() - t0, _cpu() - c0
    c0, t0 = _cpu(), time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dpfed_bench_sites_") as sites:
        # the sites' policy allows this benchmark's labelled simulation mode; their stores go with it
        from dpfed_core.deployment.site_policy import write_policy

        policy = write_policy(Path(sites) / "policy.toml", methods=[method], max_epsilon=1e6, max_delta=1e-3,
                              budget_epsilon=1e9, budget_delta=9e-3, store=str(Path(sites) / "{site}.sqlite3"),
                              allow_simulation=True, allow_non_private=True, max_dropouts=10)
        dep = run_deployed(ds, cfg, round_timeout=900, timeout=3600, engine=engine, site_policy=policy)
    t_dep, c_dep = time.perf_counter() - t0, _cpu() - c0
    same = all(math.isclose(dep["overall"][k], ref["overall"][k], rel_tol=1e-9) for k in METRICS)
    b_in = sum(m["bytes"] for m in ref["messages"])
    b_dep = dep["deployment"]["bytes_on_wire"]
    sec = dep["deployment"].get("secure_aggregation") or {}
    stages = {s["stage"]: {"length": s["length"], "bytes": s["bytes"], "seconds": round(s["seconds"], 2)}
              for s in sec.get("stages", [])}
    return {**row, "in_process_s": t_in, "deployment_s": t_dep, "in_process_cpu_s": c_in, "deployment_cpu_s": c_dep,
            "secure_sums": stages or None, "load_1m": os.getloadavg()[0],
            "slowdown": t_dep / t_in, "cpu_ratio": c_dep / c_in if c_in else None,
            "in_process_bytes": b_in, "deployment_bytes": b_dep,
            "bytes_ratio": b_dep / b_in if b_in else None, "in_process_messages": len(ref["messages"]),
            "flower_messages": dep["deployment"]["n_messages"], "metrics_equal": same,
            "transport": ("in-memory (Simulation Engine)" if engine == "simulation" else
                          "TLS + node auth" if not dep["deployment"]["insecure"] else "insecure"),
            "server_s": dep["timings"].get("server_total"), "start_s": dep["timings"].get("deployment_start")}


def _become_subreaper() -> bool:
    """Make this process the reaper of its orphaned descendants (Linux), so that their CPU seconds
    reach this process's RUSAGE_CHILDREN instead of init's. False where that is not available."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) == 0  # 36 = PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


def _reap_orphans(timeout: float = 20.0) -> None:
    """Wait for the descendants a command left behind (they die by parent-death signal or SIGKILL of
    their group) so that their CPU is counted; returns when none is left or after ``timeout``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.02)


def cli(args: list[str], store: Path) -> dict:
    """One ``python -m dpfed_core …`` as a user runs it: wall and CPU seconds (its whole process tree)."""
    env = {**os.environ, "DPFED_STORE": str(store)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "dpfed_core", *args], cwd=C.ROOT, env=env,
                          capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    _reap_orphans()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    last = [line for line in proc.stdout.splitlines() if "Flower messages" in line]
    return {"ok": proc.returncode == 0, "wall_s": wall, "cpu_s": cpu, "deployment": last[0] if last else "",
            "error": proc.stderr.strip().splitlines()[-1] if proc.returncode else ""}


#: A target of part 2: (text, what it bounds — "wall" or "cpu" ratio to the run, or "wall_s" seconds —, bound).
Target = tuple[str, str, float]
#: The summable methods' target on both engines: deploy-local's CPU (whole process tree) ≤ 4× the run's.
SUMMABLE_TARGET: Target = ("CPU ≤ 4× the run", "cpu", 4.0)


def summable_methods() -> list[str]:
    """Every registered summable method (``python -m dpfed_core methods``), in name order."""
    from dpfed_core.federation.protocol import SUMMABLE_METHODS

    return sorted(SUMMABLE_METHODS)


def cases() -> list[tuple[str, list[str], dict[str, Target]]]:
    """Part 2's cases: (label, CLI data/method flags, target per engine)."""
    region = ["--federation", "region"]
    out = [("clinic, 4 regions, kmeans", [*region, "--method", "kmeans", "--k", "10"],
            {"deployment": ("≤ 10× the run", "wall", 10.0), "simulation": ("≤ 3× the run", "wall", 3.0)})]
    for method in summable_methods():
        out.append((f"clinic, 4 regions, {method}", [*region, "--method", method, "--epsilon", "1",
                                                     "--aggregation", "secure"],
                    {"deployment": SUMMABLE_TARGET, "simulation": SUMMABLE_TARGET}))
    out.append(("clinic, 30 hospitals, dp-cooccurrence, secure",
                ["--method", "dp-cooccurrence", "--epsilon", "1", "--aggregation", "secure"],
                {"deployment": ("≤ 60 s", "wall_s", 60.0), "simulation": ("≤ 3× the run", "wall", 3.0)}))
    return out


#: Part 2's engines: ``deploy-local`` flags.
CLI_ENGINES = {"deployment": [], "simulation": ["--engine", "simulation"]}


def met(target: Target, row: dict) -> bool:
    """Whether a part-2 row meets its target (medians)."""
    _, kind, bound = target
    value = {"wall": row["wall_ratio"], "cpu": row["cpu_ratio"], "wall_s": row["deploy_local_s"]}[kind]
    return row["completed"] and value <= bound


def targets(engines: list[str], repeats: int = 1, only: list[str] | None = None) -> list[dict]:
    """the targets through the CLI (part 2 of the module doc): ``repeats`` in-process ``run``s
    per case, then ``repeats`` ``deploy-local``s on each of ``engines``; the row gives the medians
    (wall and CPU) and the range of the deployment's wall times. ``only``: the cases whose label
    contains one of these strings (all when None)."""
    import statistics

    def median_of(cmd: list[str], store: Path) -> dict:
        runs = [cli(cmd, store) for _ in range(repeats)]
        walls = [r["wall_s"] for r in runs]
        return {"wall_s": statistics.median(walls), "cpu_s": statistics.median(r["cpu_s"] for r in runs),
                "range": f"{min(walls):.1f}–{max(walls):.1f}", "ok": all(r["ok"] for r in runs),
                "deployment": runs[-1]["deployment"], "error": next((r["error"] for r in runs if r["error"]), "")}

    rows = []
    _become_subreaper()
    with tempfile.TemporaryDirectory(prefix="dpfed_bench_") as tmp:
        store = Path(tmp) / "store.sqlite"
        for case, flags, case_targets in cases():
            if only and not any(name in case for name in only):
                continue
            data = ["--data", "sample:clinic", *flags]
            ref = median_of(["run", *data], store)
            for engine in engines:
                load0 = os.getloadavg()[0]
                dep = median_of(["deploy-local", *data, *CLI_ENGINES[engine]], store)
                row = {"case": case, "engine": engine, "load_before": load0, "runs": repeats,
                       "run_s": ref["wall_s"], "deploy_local_s": dep["wall_s"],
                       "deploy_local_range_s": dep["range"], "wall_ratio": dep["wall_s"] / ref["wall_s"],
                       "run_cpu_s": ref["cpu_s"], "deploy_local_cpu_s": dep["cpu_s"],
                       "cpu_ratio": dep["cpu_s"] / ref["cpu_s"], "target": case_targets[engine][0],
                       "completed": ref["ok"] and dep["ok"], "load_1m": os.getloadavg()[0],
                       "detail": dep["deployment"] or dep["error"]}
                row["met"] = met(case_targets[engine], row)
                rows.append(row)
                print(f"{case} | {engine}: run {row['run_cpu_s']:.1f} CPU-s, "
                      f"deploy-local {row['deploy_local_cpu_s']:.1f} CPU-s ({row['cpu_ratio']:.1f}×), "
                      f"wall {row['wall_ratio']:.1f}×; target {row['target']}: "
                      f"{'met' if row['met'] else 'missed'}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 entities only, no CLI targets")
    ap.add_argument("--methods", default=",".join(METHODS), help="comma-separated methods to measure (part 1)")
    ap.add_argument("--no-targets", action="store_true", help="skip part 2 (the CLI targets)")
    ap.add_argument("--sizes", default="3,10,30", help="comma-separated entity counts to measure (part 1)")
    ap.add_argument("--engines", default="deployment,simulation", help="engines to measure (parts 1 and 2)")
    ap.add_argument("--others", default="", help="what else ran on the machine meanwhile (recorded)")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each part-2 command (the row gives medians)")
    ap.add_argument("--targets-only", action="store_true",
                    help="part 2 alone, printed; the results files are not written")
    ap.add_argument("--cases", default="",
                    help="with --targets-only: ';'-separated parts of case labels to run (labels contain commas)")
    args = ap.parse_args()
    if args.targets_only:
        import json

        engines = [e.strip() for e in args.engines.split(",") if e.strip() in CLI_ENGINES]
        only = [c.strip() for c in args.cases.split(";") if c.strip()] or None
        print(json.dumps(targets(engines, args.repeats, only), indent=1))
        return
    chosen = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = sorted(set(chosen) - set(METHODS))
    if unknown:
        ap.error(f"--methods: unknown {', '.join(unknown)}; choose from {', '.join(METHODS)}")
    out = C.outputs("deployment", args.quick)
    load = os.getloadavg()[0]
    t_all = time.perf_counter()
    rows = []
    sizes = [3] if args.quick else [int(x) for x in args.sizes.split(",") if x.strip()]
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for H in sizes:
        for method in chosen:
            if H in SIZES[method]:
                C.sample_reference()  # the machine's speed through the benchmark (machine() records the median)
                for engine in engines:
                    print(f"H={H} {method} {engine} …", file=sys.stderr, flush=True)
                    rows.append(one(H, method, engine))
    target_rows = [] if (args.quick or args.no_targets) else targets([e for e in engines if e in CLI_ENGINES], args.repeats)
    machine = C.machine()
    machine["loadavg_1m_at_start"] = load
    machine["others"] = args.others
    doc = {"machine": machine, "data": f"{C.SYNTH_NOTE}: 100 users per entity, 200 items",
           "rows": rows, "targets": target_rows, "seconds": time.perf_counter() - t_all}
    measured = [r for r in rows if "deployment_s" in r]
    missing = sorted({r["note"] for r in rows if "note" in r})
    md = ("# Local Flower deployment vs in-process run\n\n"
          "Synthetic Poisson data, 100 users per entity, 200 items; simulation mode (labelled, reproducible "
          "noise); engine `deployment`: one SuperLink and H SuperNodes on 127.0.0.1 with TLS and node "
          "authentication; engine `simulation`: the same ServerApp/ClientApp under Flower's Simulation Engine "
          f"with its default in-process backend (the ClientApps on the engine's worker threads, no Ray), all "
          f"on this machine ({doc['machine']['cpus']} cores), measured at {doc['machine']['git_commit']} on "
          f"{doc['machine']['date']}. "
          + (f"**What else ran on the machine**: {args.others}" if args.others else "**The machine may have been shared**")
          + "; each row's `load_before`/`load_1m` is the 1-minute load average before/after it; rows measured "
          "at different loads are not comparable, and CPU seconds (this process + every process the "
          "deployment started) are steadier than wall time (the simulation engine's one child process, "
          "ClientApps included, is reaped, so its CPU is all counted). Deployment time includes starting and "
          "stopping every process. Bytes: in-process = payload arrays of the protocol messages; deployment "
          "= Flower's serialised messages (run instructions, SecAgg+ key exchange and masked vectors, "
          "V broadcast, acknowledgements).\n\n"
          + C.md_table(measured, ["entities", "method", "engine", "in_process_s", "deployment_s", "slowdown",
                                  "in_process_cpu_s", "deployment_cpu_s", "cpu_ratio", "in_process_bytes",
                                  "deployment_bytes", "bytes_ratio", "flower_messages", "metrics_equal",
                                  "load_before", "load_1m"],
                       {"in_process_s": "{:.2f}", "deployment_s": "{:.1f}", "slowdown": "{:.1f}×",
                        "in_process_cpu_s": "{:.2f}", "deployment_cpu_s": "{:.1f}", "cpu_ratio": "{:.1f}×",
                        "bytes_ratio": "{:.2f}", "load_before": "{:.1f}", "load_1m": "{:.1f}"})
          + ("\nSimulation engine: not measured — " + "; ".join(missing) + ".\n" if missing else "")
          + "\nPer secure sum (one SecAgg+ protocol each; bytes = every Flower message of that sum, incl. "
            "key exchange; dp-cooccurrence's two stages share one sum when the catalogue has at most max_items "
            "items, as here: `popularity+co-occurrence`):\n\n"
          + C.md_table([{"entities": r["entities"], "method": r["method"], "engine": r["engine"], "stage": st, **v}
                        for r in measured for st, v in (r.get("secure_sums") or {}).items()],
                       ["entities", "method", "engine", "stage", "length", "bytes", "seconds"])
          + ("\n## the targets, through the CLI\n\n`python -m dpfed_core run …` vs `python -m dpfed_core "
             "deploy-local …` on each engine (`--engine simulation`: its default in-process backend; each a fresh "
             "process, as a user runs it; wall and CPU of the whole process tree; "
             "medians of `runs` runs of each command, with the range of the deployment's wall times; "
             "CPU counts every process of the tree, orphans included (this script is their subreaper); "
             "`met` = the target holds for the medians; "
             "`completed` = every run of both commands exited 0):\n\n"
             + C.md_table(target_rows, ["case", "engine", "runs", "run_s", "deploy_local_s", "deploy_local_range_s",
                                        "wall_ratio", "run_cpu_s",
                                        "deploy_local_cpu_s", "cpu_ratio", "target", "met", "completed", "load_before",
                                        "load_1m"],
                          {"run_s": "{:.1f}", "deploy_local_s": "{:.1f}", "wall_ratio": "{:.1f}×",
                           "run_cpu_s": "{:.1f}", "deploy_local_cpu_s": "{:.1f}", "cpu_ratio": "{:.1f}×",
                           "load_before": "{:.1f}", "load_1m": "{:.1f}"})
             if target_rows else "")
          + "\nWhere the time goes: see docs/DEPLOYMENT.md § How it runs fast on one machine and § Cost.\n")
    C.write_results(out["json"], doc, md)


if __name__ == "__main__":
    main()
