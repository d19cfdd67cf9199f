"""``deploy-local --engine simulation``: the same ServerApp and ClientApp under Flower's Simulation Engine.

Flower 1.42's Simulation Engine (``flwr.simulation.run_simulation``) runs the ServerApp in a thread,
keeps Flower's messages in an in-memory LinkState, and has its VCE worker threads hand each message
to a *backend* that runs the simulated SuperNode's ClientApp — no SuperLink, no network, no TLS.
The apps are the very objects the deployment runs (:mod:`.server_app`, :mod:`.client_app`, SecAgg+
and its ``secaggplus_mod`` included), so the protocol, the messages and the result document are the
same; only the transport differs (the document says which backend carried it).

Two backends (``--sim-backend``):

* ``inprocess`` (default): :class:`~dpfed_core.deployment.inprocess_backend.InProcessBackend` runs each
  ClientApp call in the engine's worker threads (one per core), on copies of the message and the
  node's Context — no Ray, so no 20–30 s cluster start and no actor processes.
* ``ray``: Flower's own ``RayBackend`` (Ray actor processes, from the pinned ``flwr[simulation]`` extra).

:class:`SimulatedFederation` has the interface :func:`~dpfed_core.deployment.deployed.run_deployed`
uses of :class:`~dpfed_core.deployment.launcher.LocalFederation` (``start``, ``run``,
``report_path``, ``close``). Each run executes in a child process
(``python -m dpfed_core.deployment.simulation_engine JOB``) in a process group of its own, with a
parent-death signal and the :class:`~dpfed_core.deployment.launcher.Guard`'s watchdog, so the child
(and Ray's processes, with that backend) and the shard copies go with it on every exit path.

A simulated node finds its shard by Flower's ``partition-id`` in ``DPFED_SIM_SHARDS`` (a JSON list), an
environment variable of the node processes set by the operator who holds every shard (never by a message).
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

from dpfed_core.deployment.launcher import (PACKAGE_ROOT, _policy_paths, DeploymentError, Guard, GuardedFolder, ProgressFile,
                                           see_log,
                                           _child_setup, _kill_group, read_result)


#: The Simulation Engine's backends (``--sim-backend``); the first is the default.
BACKENDS = ("inprocess", "ray")
DEFAULT_BACKEND = BACKENDS[0]


def available(backend: str = DEFAULT_BACKEND) -> tuple[bool, str]:
    """(True, what runs) if Flower's Simulation Engine can run here with ``backend``, else (False, why)."""
    import importlib.util
    from importlib.metadata import version

    if backend not in BACKENDS:
        return False, f"--sim-backend {backend!r}: choose {' or '.join(BACKENDS)}"
    if backend == "inprocess":
        return True, f"flwr {version('flwr')}, in-process backend"
    if importlib.util.find_spec("ray") is None:
        return False, ("Flower's Ray backend needs Ray, which is not installed "
                       "(pip install -r requirements-deploy.txt installs flwr[simulation]; "
                       "or use --sim-backend inprocess)")
    return True, f"ray {version('ray')}"


def transport(backend: str) -> str:
    """What the result document says of the transport under the Simulation Engine with ``backend``."""
    where = ("each simulated SuperNode's ClientApp runs in the engine's worker threads (in-process "
             "backend, no Ray)" if backend == "inprocess" else
             "each simulated SuperNode's ClientApp runs in a Ray actor process (Ray backend)")
    return (f"Flower Simulation Engine, {backend} backend: the ServerApp and the ClientApps exchange Flower "
            f"messages through in-memory queues in one process tree on this machine; {where}; no network, "
            "so no TLS and no node authentication")


#: The default backend's transport (kept for callers that do not name a backend).
TRANSPORT = transport(DEFAULT_BACKEND)


class SimulatedFederation(GuardedFolder):
    """H simulated SuperNodes (one per shard) under Flower's Simulation Engine. Use as a context manager."""

    insecure = False  # no network at all: nothing to secure (the document states the transport)
    engine = "simulation"

    def __init__(self, shards: list[str | os.PathLike], workdir: str | os.PathLike | None = None,
                 entity_names: list[str] | None = None, keep: bool = False, *, guard: Guard | None = None,
                 backend: str = DEFAULT_BACKEND, site_policy=None, item_features: str | os.PathLike | None = None,
                 **_ignored) -> None:
        if backend not in BACKENDS:
            raise DeploymentError(f"--sim-backend {backend!r}: choose {' or '.join(BACKENDS)}")
        self.backend = backend
        self.transport = transport(backend)
        self.shards = [Path(s).resolve() for s in shards]
        self.entity_names = entity_names or [p.stem for p in self.shards]
        self.site_policies = _policy_paths(site_policy, len(self.shards))
        # the public item features file every simulated node is given, as a SuperNode's item-features
        self.item_features = Path(item_features).resolve() if item_features else None
        self.workdir = workdir
        self.keep = keep
        self.guard = guard
        self._own_guard = False
        self.proc: subprocess.Popen | None = None
        self.dir: Path | None = None

    def report_path(self, h: int) -> Path:
        return self.dir / "reports" / f"entity_{h:03d}.report.json"

    def start(self) -> "SimulatedFederation":
        ok, why = available(self.backend)
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
            "policies": [str(p) for p in self.site_policies],
            "features": [str(self.item_features)] * len(self.shards) if self.item_features else [],
            "backend": self.backend,
            "run_config": {"config": config_json, "n-entities": int(n_entities), "out": str(out),
                           "progress": str(prog), "round-timeout": float(round_timeout),
                           "connect-timeout": float(connect_timeout), "dump-dir": str(dump_dir or ""),
                           "doorbells": ""}}), encoding="utf-8")
        env = dict(os.environ)
        env["PYTHONPATH"] = str(PACKAGE_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env["FLWR_TELEMETRY_ENABLED"] = "0"
        env["FLWR_DISABLE_UPDATE_CHECK"] = "1"
        env["RAY_USAGE_STATS_ENABLED"] = "0"  # Ray backend: nothing leaves the machine
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
                        raise DeploymentError(f"the Simulation Engine ({self.backend} backend) exited with code {code} (last step: "
                                              f"{events.last}); {see_log(log)}")
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


def _fail(progress: str, exc: BaseException) -> None:
    """The child's one-line error for the parent (progress file), then exit at once."""
    import traceback

    traceback.print_exc()
    with open(progress, "a", encoding="utf-8") as f:
        f.write(json.dumps({"event": "error", "time": time.time(),
                            "message": f"Flower's Simulation Engine failed: {type(exc).__name__}: {exc}"}) + "\n")
    sys.stdout.flush()
    os._exit(1)  # not sys.exit: a ServerApp thread still waiting for nodes would keep the process alive


def node_environment(job: dict) -> dict[str, str]:
    """The environment that tells each simulated node its shard, report, policy and item features files
    (by partition): JSON lists, as :func:`~dpfed_core.deployment.client_app._simulated` reads them."""
    from dpfed_core.deployment.client_app import SIM_FEATURES_ENV, SIM_POLICIES_ENV, SIM_REPORTS_ENV, SIM_SHARDS_ENV

    env = {SIM_SHARDS_ENV: json.dumps(job["shards"]), SIM_REPORTS_ENV: json.dumps(job["reports"])}
    if job.get("policies"):
        env[SIM_POLICIES_ENV] = json.dumps(job["policies"])
    if job.get("features"):
        env[SIM_FEATURES_ENV] = json.dumps(job["features"])
    return env


def _run_job(job_path: str) -> None:
    """In the child: run the ServerApp and H ClientApps under ``flwr.simulation.run_simulation``."""
    job = json.loads(Path(job_path).read_text(encoding="utf-8"))
    backend = job.get("backend", DEFAULT_BACKEND)

    # The simulated nodes' own data: set before the engine starts, so Ray's worker processes (Ray
    # backend) inherit it too.
    os.environ.update(node_environment(job))
    if backend == "inprocess":
        from dpfed_core.deployment.inprocess_backend import InProcessBackend, use_in_flower

        use_in_flower()  # before flwr.simulation: Flower must never import its Ray backend here

    from flwr.serverapp import ServerApp
    from flwr.simulation import run_simulation

    from dpfed_core.deployment import client_app, server_app, shamir

    # One operator's single process: SecAgg+'s Shamir arithmetic without the timing-attack
    # hardening that only a real node needs (same results, deployment.shamir's module doc).
    shamir.install_simulation_arithmetic()

    run_config = dict(job["run_config"])
    wrapped = ServerApp()

    @wrapped.main()
    def _main(grid, context) -> None:
        # run_simulation gives the ServerApp an empty run config; the run's keys are the same ones
        # the deployment passes through the SuperLink (``override_config``).
        context.run_config.update(run_config)
        server_app.main(grid, context)
        if backend == "inprocess":
            if InProcessBackend.built == 0:  # the run went through some other backend: say so, no result
                raise RuntimeError(f"Flower {_flwr_version()} did not build the in-process backend (its "
                                   "Simulation Engine no longer imports RayBackend from its raybackend "
                                   "module); use --sim-backend ray")
            # The result and every node's report are written (atomically) by now. Flower's engine
            # would still wait up to 1 s for its idle worker threads' queue timeouts; nothing else of
            # this process needs to outlive the run (no Ray to shut down), so end here.
            sys.stdout.flush()
            os._exit(0)

    ncpu = os.cpu_count() or 1
    if backend == "inprocess":
        # One message per core at a time, as Ray's pool of one-CPU actors would run them.
        backend_config = {"init_args": {"num_cpus": ncpu}, "client_resources": {"num_cpus": 1, "num_gpus": 0.0}}
    else:
        # Ray's worker processes inherit this process's environment (the shard list, PYTHONPATH,
        # DPFED_PLUGINS, one BLAS thread); Flower sets Ray's runtime_env itself.
        backend_config = {"client_resources": {"num_cpus": 1, "num_gpus": 0.0},
                          "init_args": {"num_cpus": ncpu, "num_gpus": 0, "include_dashboard": False,
                                        "logging_level": "ERROR", "log_to_driver": True}}
    try:
        run_simulation(server_app=wrapped, client_app=client_app.app, num_supernodes=len(job["shards"]),
                       backend_name=backend, backend_config=backend_config)
    except BaseException as exc:  # noqa: BLE001 — reported as one line; the ServerApp thread may still wait
        _fail(run_config["progress"], exc)
    sys.stdout.flush()
    os._exit(0)  # Ray's shutdown hooks already ran; no thread may keep the process (and its group) alive


def _flwr_version() -> str:
    from importlib.metadata import version

    return version("flwr")


if __name__ == "__main__":
    _run_job(sys.argv[1])
