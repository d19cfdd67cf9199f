"""``deploy-local --engine simulation``: the same ServerApp and ClientApp under Flower's Simulation Engine.

Flower 1.42's Simulation Engine (``flwr.simulation.run_simulation``, backend Ray, from the pinned
``flwr[simulation]`` extra) runs the ServerApp in a thread and each simulated SuperNode's ClientApp
in Ray actor processes, exchanging Flower messages through in-memory queues — no SuperLink, no
network, no TLS. The apps are the very objects the deployment runs (:mod:`.server_app`,
:mod:`.client_app`, SecAgg+ and its ``secaggplus_mod`` included), so the protocol, the messages and
the result document are the same; only the transport differs (the document says so).

:class:`SimulatedFederation` has the interface :func:`~dpfed_core.deployment.deployed.run_deployed`
uses of :class:`~dpfed_core.deployment.launcher.LocalFederation` (``start``, ``run``,
``report_path``, ``close``). Each run executes in a child process
(``python -m dpfed_core.deployment.simulation_engine JOB``) in a process group of its own, with a
parent-death signal and the :class:`~dpfed_core.deployment.launcher.Guard`'s watchdog, so Ray's
processes and the shard copies go with it on every exit path.

A simulated node finds its shard by Flower's ``partition-id`` in ``DPFED_SIM_SHARDS``, an environment
variable of the node processes set by the operator who holds every shard (never by a message).
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from dpfed_core.deployment.launcher import (PACKAGE_ROOT, DeploymentError, Guard, GuardedFolder, ProgressFile,
                                           _child_setup, _kill_group, read_result)


def available() -> tuple[bool, str]:
    """(True, ray version) if Flower's Simulation Engine can run here (Ray importable)."""
    import importlib.util

    if importlib.util.find_spec("ray") is None:
        return False, ("Flower's Simulation Engine needs Ray, which is not installed "
                       "(pip install -r requirements-deploy.txt installs flwr[simulation])")
    from importlib.metadata import version

    return True, version("ray")


#: What the result document says of the transport under the Simulation Engine.
TRANSPORT = ("Flower Simulation Engine (Ray): the ServerApp and the ClientApps exchange Flower messages "
             "through in-memory queues on this machine; no network, so no TLS and no node authentication")


class SimulatedFederation(GuardedFolder):
    """H simulated SuperNodes (one per shard) under Flower's Simulation Engine. Use as a context manager."""

    insecure = False  # no network at all: nothing to secure (the document states the transport)
    engine = "simulation"

    def __init__(self, shards: list[str | os.PathLike], workdir: str | os.PathLike | None = None,
                 entity_names: list[str] | None = None, keep: bool = False, *, guard: Guard | None = None,
                 **_ignored) -> None:
        self.shards = [Path(s).resolve() for s in shards]
        self.entity_names = entity_names or [p.stem for p in self.shards]
        self.workdir = workdir
        self.keep = keep
        self.guard = guard
        self._own_guard = False
        self.proc: subprocess.Popen | None = None
        self.dir: Path | None = None

    def report_path(self, h: int) -> Path:
        return self.dir / "reports" / f"entity_{h:03d}.report.json"

    def start(self) -> "SimulatedFederation":
        ok, why = available()
        if not ok:
            raise DeploymentError(why)
        self._open_dir()
        return self

    def __enter__(self) -> "SimulatedFederation":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def processes(self) -> list:
        return [self.proc] if self.proc is not None else []

    def run(self, config_json: str, n_entities: int, *, round_timeout: float = 600.0,
            connect_timeout: float = 120.0, timeout: float = 3600.0, dump_dir: str | None = None,
            progress: Callable[[dict], None] | None = None) -> dict:
        """One run under the Simulation Engine; returns what :meth:`LocalFederation.run` returns."""
        t0 = time.perf_counter()
        for h in range(len(self.shards)):  # this run's reports only (its run id is internal to Flower)
            self.report_path(h).unlink(missing_ok=True)
        tag = f"{int(time.time() * 1000)}_{os.getpid()}"
        out = self.dir / f"result_{tag}.npz"
        prog = self.dir / f"progress_{tag}.jsonl"
        prog.touch()
        job = self.dir / f"job_{tag}.json"
        job.write_text(json.dumps({
            "shards": [str(p) for p in self.shards],
            "reports": [str(self.report_path(h)) for h in range(len(self.shards))],
            "run_config": {"config": config_json, "n-entities": int(n_entities), "out": str(out),
                           "progress": str(prog), "round-timeout": float(round_timeout),
                           "connect-timeout": float(connect_timeout), "dump-dir": str(dump_dir or ""),
                           "doorbells": ""}}), encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = str(PACKAGE_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env["FLWR_TELEMETRY_ENABLED"] = "0"
        env["FLWR_DISABLE_UPDATE_CHECK"] = "1"
        env["RAY_USAGE_STATS_ENABLED"] = "0"  # nothing leaves the machine
        env["FLWR_HOME"] = str(self.dir / "flwr_home")
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(var, "1")
        log = self.dir / f"simulation_{tag}.log"
        with open(log, "w", encoding="utf-8") as f:
            self.proc = subprocess.Popen([sys.executable, "-m", "dpfed_core.deployment.simulation_engine", str(job)],
                                         stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT, env=env,
                                         cwd=self.dir, preexec_fn=_child_setup)
        self.guard.watch(self.proc)
        if progress:
            progress({"event": "submitted", "run_id": tag})
        events = ProgressFile(prog, progress, "simulation run")
        end = time.monotonic() + timeout
        try:
            while True:
                events.read()
                code = self.proc.poll()
                if code is not None:
                    events.read()  # what the run wrote before it exited (an error raises here)
                    if code != 0 or not out.exists():
                        raise DeploymentError(f"the Simulation Engine exited with code {code} (last step: "
                                              f"{events.last}); see {log}")
                    break
                if time.monotonic() > end:
                    raise DeploymentError(f"simulation run did not finish within {timeout:g} s "
                                          f"(last step: {events.last})")
                time.sleep(0.05)
            result = read_result(out)
        finally:
            self._stop()
        result["run_id"] = None  # the Simulation Engine's run id is internal; reports carry theirs
        result["wall_seconds"] = time.perf_counter() - t0
        return result

    def _stop(self) -> None:
        if self.proc is not None:
            if self.proc.poll() is None:
                _kill_group(self.proc, signal.SIGKILL)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None

    def close(self) -> None:
        self._stop()
        self._release_guard()


def _run_job(job_path: str) -> None:
    """In the child: run the ServerApp and H ClientApps under ``flwr.simulation.run_simulation``."""
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    from dpfed_core.deployment.client_app import SIM_REPORTS_ENV, SIM_SHARDS_ENV

    # The simulated nodes' own data: set before Ray starts, so its worker processes inherit it
    # (and passed again as Ray's runtime environment below).
    os.environ[SIM_SHARDS_ENV] = os.pathsep.join(job["shards"])
    os.environ[SIM_REPORTS_ENV] = os.pathsep.join(job["reports"])

    from flwr.serverapp import ServerApp
    from flwr.simulation import run_simulation

    from dpfed_core.deployment import client_app, server_app

    run_config = dict(job["run_config"])
    wrapped = ServerApp()

    @wrapped.main()
    def _main(grid, context) -> None:
        # run_simulation gives the ServerApp an empty run config; the run's keys are the same ones
        # the deployment passes through the SuperLink (``override_config``).
        context.run_config.update(run_config)
        server_app.main(grid, context)

    # Ray's worker processes inherit this process's environment (the shard list, PYTHONPATH,
    # DPFED_PLUGINS, one BLAS thread); Flower sets Ray's runtime_env itself.
    ncpu = os.cpu_count() or 1
    backend_config = {"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                      "init_args": {"num_cpus": ncpu, "num_gpus": 0, "include_dashboard": False,
                                    "logging_level": "ERROR", "log_to_driver": True}}
    try:
        run_simulation(server_app=wrapped, client_app=client_app.app, num_supernodes=len(job["shards"]),
                       backend_name="ray", backend_config=backend_config)
    except BaseException as exc:  # noqa: BLE001 — reported as one line; the ServerApp thread may still wait
        import traceback

        traceback.print_exc()
        with open(run_config["progress"], "a", encoding="utf-8") as f:
            f.write(json.dumps({"event": "error", "time": time.time(),
                                "message": f"Flower's Simulation Engine failed: {type(exc).__name__}: {exc}"}) + "\n")
        sys.stdout.flush()
        os._exit(1)  # not sys.exit: a ServerApp thread still waiting for nodes would keep the process alive
    sys.stdout.flush()
    os._exit(0)  # Ray's shutdown hooks already ran; no thread may keep the process (and its group) alive


if __name__ == "__main__":
    _run_job(sys.argv[1])
