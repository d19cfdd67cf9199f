"""100 sites on Flower's Simulation Engine: CPU seconds, messages and bytes per site, with SecAgg+'s key
shares sized by the public rule (``deployment.wire.secagg_shares``: 21 neighbours of 100 instead of all).

One run: synthetic Poisson data (the paper's §5.1 recipe, ``_common.synthetic``), 100 entities × 30
users, 200 declared items; dp-popularity, ε = 1, ``--aggregation secure``, ``--max-dropouts 0``,
production noise; every site with a policy that accepts it (stores in a temporary folder); the
in-process backend (``--engine simulation``'s default). Reports the process tree's CPU seconds
(this process and the engine's child), wall seconds, the messages and bytes Flower carried, per
site and per SecAgg+ stage. Results: ``bench/results/sites100.{json,md}``.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

from dpfed_core.config import RunConfig  # noqa: E402
from dpfed_core.deployment.deployed import run_deployed  # noqa: E402
from dpfed_core.deployment.site_policy import write_policy  # noqa: E402
from dpfed_core.deployment.wire import secagg_shares  # noqa: E402


def _cpu() -> float:
    me, ch = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sites", type=int, default=100)
    ap.add_argument("--quick", action="store_true", help="20 sites")
    args = ap.parse_args()
    H = 20 if args.quick else args.sites
    paths = C.outputs("sites100", args.quick)
    ds = dataclasses.replace(C.synthetic(30 * H, n_items=200, n_entities=H, seed=0), item_source="declared")
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, aggregation="secure", rank=1)
    t0, c0 = time.perf_counter(), _cpu()
    with tempfile.TemporaryDirectory(prefix="dpfed_sites100_") as tmp:
        policy = write_policy(Path(tmp) / "policy.toml", methods=["dp-popularity"], max_epsilon=1.0, max_delta=1e-5,
                              budget_epsilon=10.0, store=str(Path(tmp) / "stores" / "{site}.sqlite3"))
        doc = run_deployed(ds, cfg, engine="simulation", round_timeout=1800, timeout=7200, site_policy=policy)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    per_site_bytes: dict[str, int] = defaultdict(int)
    per_site_msgs: dict[str, int] = defaultdict(int)
    per_stage: dict[str, int] = defaultdict(int)
    for m in doc["messages"]:
        site = m["receiver"] if m["sender"] == "server" else m["sender"]
        per_site_bytes[site] += int(m["bytes"])
        per_site_msgs[site] += 1
        per_stage[m["content"].split(" [")[0].replace(" (reply)", "")] += int(m["bytes"])
    sec = doc["deployment"]["secure_aggregation"]
    b = sorted(per_site_bytes.values())
    out = {"sites": H, "wall_s": wall, "cpu_s": cpu, "cpu_s_per_site": cpu / H,
           "messages": doc["deployment"]["n_messages"], "messages_per_site": doc["deployment"]["n_messages"] / H,
           "bytes": doc["deployment"]["bytes_on_wire"], "bytes_per_site_median": b[len(b) // 2],
           "bytes_per_site_max": b[-1], "num_shares": sec["num_shares"],
           "reconstruction_threshold": sec["reconstruction_threshold"], "rule": secagg_shares(H, 0),
           "bytes_by_step": dict(per_stage), "mar": doc["overall"]["mar"], "machine": C.machine(),
           "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(time.time() - wall))}
    paths["json"].write_text(json.dumps(out, indent=2, default=str))
    md = [f"# {H} sites on Flower's Simulation Engine (bench/bench_sites100.py)", "",
          f"Run {out['started']}, commit {out['machine'].get('git_commit')}; shared 2-core machine. dp-popularity, "
          f"ε = 1, SecAgg+ with {sec['num_shares']} key shares per node (public rule; threshold "
          f"{sec['reconstruction_threshold']}), in-process backend, production noise.", "",
          C.md_table([{k: out[k] for k in ("sites", "wall_s", "cpu_s", "cpu_s_per_site", "messages",
                                           "messages_per_site", "bytes", "bytes_per_site_median",
                                           "bytes_per_site_max", "num_shares")}],
                     fmt={"wall_s": "{:.1f}", "cpu_s": "{:.1f}", "cpu_s_per_site": "{:.2f}",
                          "messages_per_site": "{:.1f}"}), "",
          "Bytes by protocol step (all sites):", "",
          C.md_table([{"step": k, "bytes": v} for k, v in sorted(per_stage.items(), key=lambda kv: -kv[1])]), ""]
    paths["md"].write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
