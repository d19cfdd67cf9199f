"""Start a real Flower deployment on the loopback interface, run one job on it, stop everything.

:class:`LocalFederation` starts one ``flower-superlink`` (insecure, 127.0.0.1, a free port) and one
``flower-supernode`` per entity shard (``--node-config "data-path='…'"``), each in its own process
session; :meth:`LocalFederation.run` submits the ServerApp with ``flwr run`` (FLWR_HOME in a private
temporary directory) and follows the ServerApp's progress file until the result file appears.

How a dead node is noticed: Flower's SuperLink marks a node unavailable only after two missed
heartbeats (2 × 30 s) and the ServerApp's ``send_and_receive`` waits up to ``round_timeout``; the
launcher owns the node processes, so it checks them every poll (0.2 s) and stops the run as soon as
one exits, naming the entity. :meth:`close` (also on any error) ends every process it started.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

from dpfed_core.errors import DpfedError

APP_DIR = Path(__file__).resolve().parent / "app"
#: The directory that holds the ``dpfed_core`` package (put on the nodes' PYTHONPATH).
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


class DeploymentError(DpfedError):
    """A deployment could not start or did not finish; the message says what and where."""


def flower_available() -> tuple[bool, str]:
    """(True, version) if flwr and its executables are installed next to this Python."""
    try:
        from importlib.metadata import version

        v = version("flwr")
    except Exception:  # PackageNotFoundError
        return False, "flwr is not installed (pip install -r requirements-deploy.txt)"
    bindir = Path(sys.executable).parent
    for exe in ("flower-superlink", "flower-supernode", "flwr"):
        if not (bindir / exe).exists():
            return False, f"flwr {v} is installed but {exe} is not in {bindir}"
    return True, v


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float, proc: subprocess.Popen, log: Path) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise DeploymentError(f"flower-superlink exited with code {proc.returncode} at start-up; see {log}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise DeploymentError(f"flower-superlink did not open port {port} within {timeout:g} s; see {log}")


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(str(v))  # a JSON string is a valid TOML basic string


class LocalFederation:
    """One SuperLink and one SuperNode per shard on 127.0.0.1. Use as a context manager.

    shards : shard files in entity order (one SuperNode each). workdir : logs, FLWR_HOME, progress
    and result files (a fresh temporary directory if None; removed on close unless ``keep``).
    """

    def __init__(self, shards: list[str | os.PathLike], workdir: str | os.PathLike | None = None,
                 entity_names: list[str] | None = None, keep: bool = False) -> None:
        self.shards = [Path(s).resolve() for s in shards]
        self.entity_names = entity_names or [p.stem for p in self.shards]
        self.workdir = workdir
        self.keep = keep
        self.superlink: subprocess.Popen | None = None
        self.nodes: list[subprocess.Popen] = []
        self.port: int | None = None
        self._tmp: tempfile.TemporaryDirectory | None = None

    # ------------------------------------------------------------------ processes
    def _env(self) -> dict:
        env = dict(os.environ)
        env["FLWR_HOME"] = str(self.dir / "flwr_home")
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        env["PYTHONPATH"] = str(PACKAGE_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        # One BLAS thread per process: H nodes share the machine's cores.
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(var, "1")
        return env

    def _spawn(self, args: list[str], log: Path) -> subprocess.Popen:
        f = open(log, "w", encoding="utf-8")
        try:
            # A new session per process: close() ends it with its children (SuperExec, app processes).
            return subprocess.Popen(args, env=self._env(), stdout=f, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd=self.dir, start_new_session=True)
        finally:
            f.close()

    def start(self, timeout: float = 60.0) -> "LocalFederation":
        ok, info = flower_available()
        if not ok:
            raise DeploymentError(info)
        if self.workdir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="dpfed_flower_")
            self.dir = Path(self._tmp.name)
        else:
            self.dir = Path(self.workdir)
            self.dir.mkdir(parents=True, exist_ok=True)
        for p in self.shards:
            if "'" in str(p):
                raise DeploymentError(f"shard path {p} contains a quote; use a path without quotes")
        bindir = Path(sys.executable).parent
        self.port = free_port()
        self.superlink = self._spawn(
            [str(bindir / "flower-superlink"), "--insecure", "--host", "127.0.0.1", "--port", str(self.port),
             "--disable-runtime-dependency-installation"], self.dir / "superlink.log")
        _wait_port(self.port, timeout, self.superlink, self.dir / "superlink.log")
        for h, shard in enumerate(self.shards):
            self.nodes.append(self._spawn(
                [str(bindir / "flower-supernode"), "--insecure", "--superlink", f"127.0.0.1:{self.port}",
                 "--port", str(free_port()), "--node-config", f"data-path='{shard}'"],
                self.dir / f"supernode_{h:03d}.log"))
        home = self.dir / "flwr_home"
        home.mkdir(parents=True, exist_ok=True)
        (home / "config.toml").write_text(
            f'[superlink]\ndefault = "dpfed-local"\n\n[superlink.dpfed-local]\n'
            f'address = "127.0.0.1:{self.port}"\ninsecure = true\n', encoding="utf-8")
        return self

    def dead_nodes(self) -> list[tuple[str, int]]:
        return [(self.entity_names[h], p.returncode) for h, p in enumerate(self.nodes) if p.poll() is not None]

    def kill_node(self, h: int) -> None:
        """End entity ``h``'s SuperNode (and its app processes) at once, as a crashed site would."""
        _kill_group(self.nodes[h], signal.SIGKILL)

    def close(self) -> None:
        for p in [*self.nodes, self.superlink]:
            if p is not None and p.poll() is None:
                _kill_group(p, signal.SIGTERM)
        end = time.monotonic() + 10
        for p in [*self.nodes, self.superlink]:
            if p is None:
                continue
            try:
                p.wait(max(end - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                _kill_group(p, signal.SIGKILL)
                p.wait(5)
            # Children that outlived their parent (same session) go too.
            _kill_group(p, signal.SIGKILL)
        self.nodes = []
        self.superlink = None
        if self._tmp is not None and not self.keep:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "LocalFederation":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ one run
    def run(self, config_json: str, n_entities: int, *, round_timeout: float = 600.0,
            connect_timeout: float = 120.0, timeout: float = 3600.0, dump_dir: str | None = None,
            progress: Callable[[dict], None] | None = None, evaluator: str | None = None) -> dict:
        """Submit one run and wait for it. Returns ``{"V": ndarray, **server result, "run_id", "wall_seconds"}``.
        Raises :class:`DeploymentError` (nothing written) if a node dies, the server reports an error
        or ``timeout`` passes."""
        import numpy as np

        from dpfed_core.deployment.wire import DEFAULT_EVALUATOR, loads

        t0 = time.perf_counter()
        tag = f"{int(time.time() * 1000)}_{os.getpid()}"
        out = self.dir / f"result_{tag}.npz"
        prog = self.dir / f"progress_{tag}.jsonl"
        prog.touch()
        overrides = {"config": config_json, "n-entities": int(n_entities), "out": str(out), "progress": str(prog),
                     "round-timeout": float(round_timeout), "connect-timeout": float(connect_timeout),
                     "evaluator": evaluator or DEFAULT_EVALUATOR, "dump-dir": str(dump_dir or "")}
        toml = self.dir / f"run_{tag}.toml"
        toml.write_text("".join(f"{k} = {_toml_value(v)}\n" for k, v in overrides.items()), encoding="utf-8")
        flwr = str(Path(sys.executable).parent / "flwr")
        proc = subprocess.run([flwr, "run", str(APP_DIR), "dpfed-local", "--run-config", str(toml), "--format", "json"],
                              env=self._env(), cwd=self.dir, capture_output=True, text=True, timeout=300)
        try:
            submitted = json.loads(proc.stdout[proc.stdout.find("{"):]) if "{" in proc.stdout else {}
        except json.JSONDecodeError:
            submitted = {}
        if not submitted.get("success"):
            raise DeploymentError("flwr run could not submit the ServerApp: "
                                  + (submitted.get("error-message") or proc.stderr.strip()[-500:] or proc.stdout[-500:]))
        run_id = submitted.get("run-id")
        if progress:
            progress({"event": "submitted", "run_id": run_id})
        seen = 0
        last = "submitted"
        end = time.monotonic() + timeout
        while True:
            lines = prog.read_text(encoding="utf-8").splitlines()
            for line in lines[seen:]:
                ev = json.loads(line)
                last = ev["event"]
                if progress:
                    progress(ev)
                if ev["event"] == "error":
                    raise DeploymentError(f"run {run_id} failed: {ev['message']}")
                if ev["event"] == "done" and out.exists():
                    with np.load(out, allow_pickle=False) as z:
                        result = loads(str(z["result"]))
                        result["V"] = np.array(z["V"])
                    out.unlink()
                    result["run_id"] = run_id
                    result["wall_seconds"] = time.perf_counter() - t0
                    return result
            seen = len(lines)
            dead = self.dead_nodes()
            if dead:
                who = ", ".join(f"{name!r} (exit code {code})" for name, code in dead)
                raise DeploymentError(f"run {run_id} stopped: the SuperNode of entity {who} died during the run "
                                      f"(last step: {last}); no result was written")
            if self.superlink is not None and self.superlink.poll() is not None:
                raise DeploymentError(f"run {run_id} stopped: the SuperLink exited with code "
                                      f"{self.superlink.returncode} (last step: {last}); see {self.dir / 'superlink.log'}")
            if time.monotonic() > end:
                raise DeploymentError(f"run {run_id} did not finish within {timeout:g} s (last step: {last})")
            time.sleep(0.2)


def _kill_group(p: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(p.pid, sig)  # the session this launcher created for p (start_new_session=True)
    except (ProcessLookupError, PermissionError):
        pass
