"""A deployment across separate network hosts on this machine: the coordinator and three sites each
in its own Linux network namespace, with its own address, over TLS with Flower's node authentication.

What it builds (as root, with ``ip`` from iproute2), and removes afterwards whatever happens:

* namespaces ``dpfh<pid>c`` (coordinator) and ``dpfh<pid>s0…s2`` (sites); one veth pair per site
  between the coordinator's namespace and the site's, on 10.231.h.0/30 (coordinator 10.231.h.1, site
  10.231.h.2); the namespaces' loopbacks up. Nothing is added to this machine's own namespace, and
  every process it starts talks only to these addresses (each site dials 10.231.h.1; the
  coordinator's executor and Control API use its own loopback);
* a CA and a SuperLink certificate for the four coordinator addresses; one P-256 key per site,
  registered with the SuperLink (node authentication); each site's shard, its report path and its own
  site policy (TOML, its own store) on its ``--node-config``;
* the stock SuperLink and SuperNodes, each with its executor (``node_runtime link|node``), started
  with ``ip netns exec``; no doorbells (they are loopback-only), so nodes poll as Flower does.

Runs (the three-clinic data of ``tests/test_deployment.py``; dp-popularity, ε = 1, SecAgg+):

1. a normal run in the labelled simulation mode: V and every metric must equal the in-process run;
2. a site killed during the secure sum, within ``max_dropouts = 1``: the run completes for the two
   others (their sum unmasked; the dropped site named, with no model);
3. two sites killed during the secure sum, beyond ``max_dropouts = 1``: SecAgg+ unmasks nothing and
   the run stops with no result;
4. the coordinator test double (``tests/coordinator_double``) asking for simulation from sites whose
   policy forbids it, ε above the policy, and a non-private method: every site refuses; the double
   receives no array.

Where namespaces cannot be made (not root, no ``ip``, a container without CAP_SYS_ADMIN) it writes a
result saying so and why, and exits 0. Results: ``bench/results/hosts.{json,md}``.
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402

PORT = 9093       # the SuperLink's port in the coordinator's namespace
NODE_PORT = 9094  # each SuperNode's Runtime API port in its own namespace
H = 3


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, check=check, timeout=30)


def namespaces_available() -> tuple[bool, str]:
    """Whether this process can make network namespaces (tries one and removes it)."""
    if os.geteuid() != 0:
        return False, "not root: creating network namespaces needs CAP_SYS_ADMIN"
    try:
        probe = f"dpfh{os.getpid()}p"
        r = _ip("netns", "add", probe, check=False)
        if r.returncode != 0:
            return False, f"`ip netns add` failed: {r.stderr.strip()}"
        _ip("netns", "del", probe, check=False)
    except FileNotFoundError:
        return False, "`ip` (iproute2) is not installed"
    return True, ""


class Hosts:
    """The namespaces, veth pairs and addresses of one coordinator and ``n`` sites."""

    def __init__(self, n: int) -> None:
        tag = f"dpfh{os.getpid() % 100000}"
        self.coord = f"{tag}c"
        self.sites = [f"{tag}s{h}" for h in range(n)]
        self.links = [(f"{tag}c{h}", f"{tag}s{h}") for h in range(n)]
        self.coord_addr = [f"10.231.{h}.1" for h in range(n)]
        self.site_addr = [f"10.231.{h}.2" for h in range(n)]
        self.made: list[str] = []

    def __enter__(self) -> "Hosts":
        try:
            for ns in [self.coord, *self.sites]:
                _ip("netns", "add", ns)
                self.made.append(ns)
                _ip("-n", ns, "link", "set", "lo", "up")
            for h, (a, b) in enumerate(self.links):
                _ip("link", "add", a, "type", "veth", "peer", "name", b)
                _ip("link", "set", a, "netns", self.coord)
                _ip("link", "set", b, "netns", self.sites[h])
                _ip("-n", self.coord, "addr", "add", f"{self.coord_addr[h]}/30", "dev", a)
                _ip("-n", self.sites[h], "addr", "add", f"{self.site_addr[h]}/30", "dev", b)
                _ip("-n", self.coord, "link", "set", a, "up")
                _ip("-n", self.sites[h], "link", "set", b, "up")
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        for ns in reversed(self.made):  # deleting a namespace deletes its end of each veth pair
            _ip("netns", "del", ns, check=False)
        for a, _b in self.links:  # a pair whose move failed would be left in this namespace
            _ip("link", "del", a, check=False)
        self.made = []

    def left(self) -> list[str]:
        """Namespaces or links of this run still present (must be none after exit)."""
        ns = _ip("netns", "list", check=False).stdout
        links = _ip("link", "show", check=False).stdout
        return [x for x in [self.coord, *self.sites] if x in ns] + [a for a, _ in self.links if a in links]


class NamespaceFederation:
    """One SuperLink in the coordinator's namespace and one SuperNode per site in its own."""

    def __init__(self, hosts: Hosts, shards: list[Path], policies: list[Path], work: Path) -> None:
        self.hosts, self.shards, self.policies, self.work = hosts, shards, policies, work
        self.procs: list[subprocess.Popen] = []
        self.nodes: list[subprocess.Popen] = []

    def _env(self, home: Path) -> dict:
        env = dict(os.environ)
        env.update({"FLWR_HOME": str(home), "PYTHONPATH": str(C.ROOT), "FLWR_TELEMETRY_ENABLED": "0",
                    "FLWR_DISABLE_UPDATE_CHECK": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"})
        env.pop("DPFED_DOORBELL", None)
        return env

    def _spawn(self, ns: str, role: str, args: list[str], log: str) -> subprocess.Popen:
        home = self.work / "flwr" / log
        home.mkdir(parents=True, exist_ok=True)
        with open(self.work / f"{log}.log", "wb") as out:
            return subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, "-m", "dpfed_core.deployment.node_runtime",
                                     role, *args], env=self._env(home), stdout=out, stderr=subprocess.STDOUT,
                                    start_new_session=True, cwd=self.work)

    def in_coordinator(self, code: str, timeout: float = 120) -> str:
        """Run Python ``code`` in the coordinator's namespace (the Control API is on its loopback)."""
        r = subprocess.run(["ip", "netns", "exec", self.hosts.coord, sys.executable, "-c", code],
                           env=self._env(self.work / "flwr" / "control"), capture_output=True, text=True,
                           timeout=timeout, cwd=self.work)
        if r.returncode != 0:
            raise RuntimeError(f"coordinator helper failed: {r.stderr.strip()[-2000:]}")
        return r.stdout.strip()

    def start(self) -> "NamespaceFederation":
        from dpfed_core.deployment.security import make_node_key, make_tls

        self.tls = make_tls(self.work / "tls", hosts=(*self.hosts.coord_addr, "127.0.0.1"))
        tls = ["--root-certificates", str(self.tls.ca)]
        self.procs.append(self._spawn(self.hosts.coord, "link", [
            "--runtime-api-address", f"127.0.0.1:{PORT}", *tls, "--",
            "--host", "0.0.0.0", "--port", str(PORT), "--isolation", "process",
            "--disable-runtime-dependency-installation", "--ssl-ca-certfile", str(self.tls.ca),
            "--ssl-certfile", str(self.tls.cert), "--ssl-keyfile", str(self.tls.key), "--enable-supernode-auth"],
            "superlink"))
        keys = [make_node_key(self.work / "keys", f"site_{h}") for h in range(len(self.shards))]
        self.in_coordinator(
            "import time, sys\nfrom pathlib import Path\nfrom dpfed_core.deployment.control import ControlClient\n"
            f"end = time.monotonic() + 90\n"
            "while True:\n"
            "    try:\n"
            f"        c = ControlClient({PORT}, Path({str(self.tls.ca)!r}))\n"
            f"        c.register([Path(p) for p in {[str(k.public) for k in keys]!r}])\n"
            "        break\n"
            "    except Exception as exc:\n"
            "        if time.monotonic() > end: raise\n"
            "        time.sleep(0.5)\n")
        for h, shard in enumerate(self.shards):
            report = self.work / "reports" / f"site_{h}.report.json"
            report.parent.mkdir(exist_ok=True)
            link = f"{self.hosts.coord_addr[h]}:{PORT}"
            self.nodes.append(self._spawn(self.hosts.sites[h], "node", [
                "--runtime-api-address", f"127.0.0.1:{NODE_PORT}", *tls, "--",
                "--superlink", link, "--isolation", "process", "--host", "127.0.0.1", "--port", str(NODE_PORT),
                "--node-config", f"data-path='{shard}' report-path='{report}' policy-path='{self.policies[h]}' "
                                 f"coordinator='{link}'",
                *tls, "--auth-supernode-private-key", str(keys[h].private), "--ssl-certfile", str(self.tls.cert),
                "--ssl-keyfile", str(self.tls.key), "--ssl-ca-certfile", str(self.tls.ca)], f"supernode_{h}"))
        self.procs += self.nodes
        return self

    def report_path(self, h: int) -> Path:
        return self.work / "reports" / f"site_{h}.report.json"

    def kill_node(self, h: int) -> None:
        os.killpg(self.nodes[h].pid, signal.SIGKILL)

    def run(self, config_json: str, *, app_dir: Path | None = None, extra: dict | None = None,
            progress=None, timeout: float = 600, tag: str = "run") -> tuple[str, dict, list[dict]]:
        """Submit one run (the dpfed app, or ``app_dir``) and follow it: ``(outcome, result, events)``
        where outcome is ``done`` or the error message."""
        from dpfed_core.deployment.launcher import APP_DIR, read_result

        out, prog = self.work / f"result_{tag}.npz", self.work / f"progress_{tag}.jsonl"
        prog.touch()
        overrides = {"config": config_json, "n-entities": H, "out": str(out), "progress": str(prog),
                     "round-timeout": 30.0, "connect-timeout": 120.0, "dump-dir": str(self.work / f"dump_{tag}"),
                     "doorbells": "", **(extra or {})}
        self.in_coordinator(
            "from pathlib import Path\nfrom dpfed_core.deployment.control import ControlClient\n"
            f"c = ControlClient({PORT}, Path({str(self.tls.ca)!r}))\n"
            f"print(c.start_run(Path({str(app_dir or APP_DIR)!r}), {overrides!r}))\n")
        events: list[dict] = []
        end = time.monotonic() + timeout
        seen = 0
        while time.monotonic() < end:
            lines = prog.read_text().splitlines()
            for line in lines[seen:]:
                ev = json.loads(line)
                events.append(ev)
                if progress:
                    progress(ev)
                if ev["event"] == "error":
                    return ev["message"], {}, events
            seen = len(lines)
            if any(e["event"] == "done" for e in events) and out.exists():
                if app_dir is not None:
                    return "done", json.loads(out.read_text()), events
                return "done", read_result(out), events
            time.sleep(0.25)
        return f"no result within {timeout:g} s", {}, events

    def close(self) -> None:
        for p in self.procs:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                pass


def _arrays(dump: Path) -> int:
    import numpy as np

    n = 0
    for f in sorted(dump.glob("*.npz")) if dump.exists() else []:
        with np.load(f) as z:
            n += len(z.files)
    return n


def measure(work: Path) -> dict:
    import numpy as np

    from dpfed_core.config import RunConfig
    from dpfed_core.deployment.deployed import _document
    from dpfed_core.deployment.shards import write_shards
    from dpfed_core.deployment.site_policy import write_policy
    from dpfed_core.deployment.wire import run_json
    from dpfed_core.evaluation.experiments import make_split, run_method
    from dpfed_core.methods import get_method

    sys.path.insert(0, str(C.ROOT / "tests"))
    from test_deployment import three_clinics  # the tests' data: 3 clinics, 40 declared items

    ds = three_clinics()
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, rank=3, simulation=True, aggregation="secure",
                    max_dropouts=1)
    shards = write_shards(ds, make_split(ds, cfg), work / "shards")
    common = dict(methods=["dp-popularity", "kmeans"], max_epsilon=1.0, max_delta=1e-5, budget_epsilon=100.0,
                  max_dropouts=1)
    lab = [write_policy(work / f"lab_{h}.toml", **common, allow_simulation=True,
                        store=str(work / "stores" / f"lab_{h}.sqlite3")) for h in range(H)]
    rows: list[dict] = []
    with Hosts(H) as hosts:
        fed = NamespaceFederation(hosts, shards, lab, work).start()
        try:
            t0 = time.perf_counter()
            outcome, res, _ev = fed.run(run_json(cfg, "declared", ds.n_items), tag="normal")
            wall = time.perf_counter() - t0
            row = {"case": "normal run (simulation mode) vs in-process", "outcome": outcome, "wall_s": wall}
            if outcome == "done":
                from dpfed_core.deployment.wire import loads

                reports = [loads(fed.report_path(h).read_text()) for h in range(H)]
                fed.entity_names, fed.insecure, fed.item_features = list(ds.entity_names), False, None
                doc, result = _document(ds, cfg, get_method(cfg.method), {**res, "wall_seconds": wall}, reports, fed, {})
                ref, ref_res = run_method(ds, cfg)
                row["V_equal"] = bool(np.array_equal(result.V, ref_res.V))
                row["metrics_equal"] = all(abs(doc["overall"][k] - ref["overall"][k]) <= 1e-9 * max(1, abs(ref["overall"][k]))
                                           for k in ("mar", "test_rmse", "precision_at_10", "ndcg_at_10"))
                row["messages"] = len(res["messages"])
                row["bytes"] = sum(m["bytes"] for m in res["messages"])
                row["decisions"] = [d["decision"] for d in res["site_decisions"]]
            rows.append(row)

            for name, victims in (("a site killed in the secure sum, within max_dropouts = 1", [2]),
                                  ("two sites killed in the secure sum, beyond max_dropouts = 1", [1, 2])):
                killed: list[int] = []

                def kill(ev, victims=victims, killed=killed):
                    if ev.get("event") == "secagg_stage" and "share keys" in ev.get("stage", "") and not killed:
                        for h in victims:
                            fed.kill_node(h)
                        killed.extend(victims)

                t0 = time.perf_counter()
                tag = f"drop{len(victims)}"
                outcome, res, events = fed.run(run_json(cfg, "declared", ds.n_items), progress=kill, tag=tag)
                stages = [e for e in events if e["event"] == "secagg_stage"]
                rows.append({"case": name, "outcome": outcome, "wall_s": time.perf_counter() - t0,
                             "secagg_stages_reached": len(stages),
                             "unmask_replies": next((e["replies"] for e in stages if "unmask" in e["stage"]), 0),
                             "contributors": (res.get("secure_aggregation") or {}).get("contributors"),
                             "dropped": res.get("dropped"), "result_written": bool(res)})
                # the next case starts from a whole federation again
                fed.close()
                fed = NamespaceFederation(hosts, shards, lab, work).start()
        finally:
            fed.close()
        strict = [write_policy(work / f"strict_{h}.toml", **common, store=str(work / "stores" / f"strict_{h}.sqlite3"))
                  for h in range(H)]
        fed = NamespaceFederation(hosts, shards, strict, work).start()
        try:
            for name, attack_cfg in (("malicious: simulation", cfg),
                                     ("malicious: ε above policy", cfg.replace(epsilon=1e4, simulation=False)),
                                     ("malicious: non-private method", RunConfig(method="kmeans", k=3))):
                t0 = time.perf_counter()
                tag = "mal_" + name.split(": ")[1].split()[0]
                outcome, got, _ev = fed.run(run_json(attack_cfg, "declared", ds.n_items),
                                            app_dir=C.ROOT / "tests" / "coordinator_double",
                                            extra={"attack": "ask-first"}, tag=tag)
                rows.append({"case": name, "outcome": outcome, "wall_s": time.perf_counter() - t0,
                             "decisions": [f"{d['decision']} ({d['rule']})" for d in got.get("decisions", [])],
                             "arrays_received": _arrays(work / f"dump_{tag}"),
                             "secure_sum": (got.get("secure_sum") or "")[:120]})
        finally:
            fed.close()
    return {"rows": rows, "left_behind": hosts.left()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="(same size: the cases are already small)")
    ap.parse_args()
    paths = C.outputs("hosts", False)
    ok, why = namespaces_available()
    t0 = time.time()
    if not ok:
        doc = {"skipped": why, "machine": C.machine()}
        paths["json"].write_text(json.dumps(doc, indent=2))
        paths["md"].write_text(f"# Deployment across network namespaces\n\nSkipped: {why}.\n")
        print(f"skipped: {why}")
        return
    with tempfile.TemporaryDirectory(prefix="dpfed_hosts_") as tmp:
        work = Path(tmp)
        os.chmod(work, 0o700)
        out = measure(work)
    doc = {**out, "machine": C.machine(), "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(t0)),
           "seconds": time.time() - t0}
    paths["json"].write_text(json.dumps(doc, indent=2, default=str))
    md = ["# Deployment across network namespaces (bench/bench_hosts.py)", "",
          f"Run {doc['started']}, {doc['seconds']:.0f} s; commit {doc['machine'].get('git_commit')}. The coordinator and "
          f"{H} sites each in its own network namespace (veth pairs, 10.231.h.0/30), TLS and node authentication, "
          "stock Flower polling (no doorbells); the three-clinic data of tests/test_deployment.py, dp-popularity, "
          "ε = 1, SecAgg+.", "",
          C.md_table(out["rows"], cols=list(dict.fromkeys(k for r in out["rows"] for k in r)),
                     fmt={"wall_s": "{:.1f}"}), "",
          f"Namespaces or links left afterwards: {out['left_behind'] or 'none'}.", ""]
    paths["md"].write_text("\n".join(md))
    print("\n".join(md))


if __name__ == "__main__":
    main()
