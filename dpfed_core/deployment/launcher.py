"""Start a real Flower deployment on the loopback interface, run one job on it, stop everything.

:class:`LocalFederation` starts, each in a process group of its own:

* one ``flower-superlink`` (127.0.0.1; TLS with a certificate made for the run and node
  authentication, unless ``insecure``; ``--isolation process``) and its ServerApp executor;
* per entity shard, one SuperNode (``--isolation process``, ``--node-config "data-path='…'
  report-path='…'"``) and its ClientApp executor — a long-lived process that forks a warm child
  per message instead of starting a fresh ``flwr-clientapp`` (:mod:`.node_runtime`).

:meth:`LocalFederation.run` submits the ServerApp through the SuperLink's Control API (the request
``flwr run`` sends) and follows the ServerApp's progress file until the result file appears.

Nothing is left behind: processes get a parent-death signal and are ended by process group on
close; a watchdog (:mod:`.watchdog`) ends them and removes the private folder (shard copies!) when
the launcher dies without closing (SIGKILL); stale folders of killed runs are swept at the next start.

How a dead node is noticed: Flower's SuperLink marks a node unavailable only after two missed
heartbeats (2 × 30 s) and the ServerApp waits up to ``round_timeout``; the launcher owns the node
processes, so it checks them every poll (0.05 s) and stops the run as soon as one exits, naming
the entity. :meth:`close` (also on any error) ends every process it started.
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

from dpfed_core.errors import DeploymentError, DpfedError

APP_DIR = Path(__file__).resolve().parent / "app"
#: The directory that holds the ``dpfed_core`` package (put on the nodes' PYTHONPATH).
PACKAGE_ROOT = Path(__file__).resolve().parents[2]


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


def see_log(path: Path | str, lines: int = 6) -> str:
    """"see LOG" with the log's last lines quoted: the folder of a run without ``--workdir`` is removed
    when the run ends, so an error that only named the file would point at nothing."""
    try:
        tail = Path(path).read_text(encoding="utf-8", errors="replace").strip().splitlines()[-lines:]
    except OSError:
        tail = []
    quoted = " | ".join(t.strip() for t in tail if t.strip())[-800:]
    return (f"see {path} (kept with --workdir)" + (f"; its last lines: {quoted}" if quoted else ""))


def private_run_dir(workdir: str | os.PathLike) -> Path:
    """The run's own folder under a ``--workdir`` the operator gave, as an absolute path (Flower's
    processes start in other folders): the folder itself when this run creates it (made 0700, the
    operator's only), else a private (0700) ``dpfed-run-*`` folder inside it — a folder the user already
    has (perhaps shared, perhaps their home) never has its mode changed."""
    base = Path(workdir).expanduser().absolute()
    if base.exists():
        return Path(tempfile.mkdtemp(prefix="dpfed-run-", dir=base))
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o700)
    return base


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, timeout: float, proc: subprocess.Popen, log: Path) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        # the SuperLink starts before any node: nothing was drawn anywhere (ledger_rows = 0 gives the
        # coordinator's reservation back)
        if proc.poll() is not None:
            raise DeploymentError(f"flower-superlink exited with code {proc.returncode} at start-up; {see_log(log)}",
                                  ledger_rows=0)
        try:
            socket.create_connection(("127.0.0.1", port), 0.5).close()
            return
        except OSError:
            time.sleep(0.1)
    raise DeploymentError(f"flower-superlink did not open port {port} within {timeout:g} s; {see_log(log)}",
                          ledger_rows=0)


#: Pause of the launcher between two checks of a running deployment (progress, dead processes), s.
FOLLOW_POLL = 0.25
#: Prefix of a deployment's private temporary folder (shard copies, keys, logs, Flower's state).
PRIVATE_PREFIX = "dpfed_deploy_"
#: Poll of the SuperExec executors (FLWR_SUPEREXEC_TASK_POLL_INTERVAL, seconds; Flower's default is 1).
TASK_POLL = 0.02


def _child_setup() -> None:
    """In each child before exec: a session (and process group) of its own, so the group can be
    ended as one; and SIGKILL when the launcher dies (Linux ``PR_SET_PDEATHSIG``)."""
    os.setsid()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the watchdog still covers it
        pass


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def sweep_stale(root: str | os.PathLike | None = None) -> list[Path]:
    """Remove the private folders of deployments whose launcher is gone (e.g. killed with SIGKILL
    before its watchdog could act). A folder counts as stale when its ``owner`` file names a process
    that no longer runs."""
    import shutil

    removed = []
    base = Path(root or tempfile.gettempdir())
    for d in base.glob(PRIVATE_PREFIX + "*"):
        try:
            if not d.is_dir() or d.stat().st_uid != os.getuid():
                continue
            owner = d / "owner"
            # Only folders this launcher's code made (they name their owner): a folder without one
            # may be another program's live run.
            stale = owner.exists() and not _pid_alive(int(owner.read_text().split()[0]))
        except (OSError, ValueError):
            continue
        if stale:
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


class Guard:
    """A deployment's private folder (mode 0700, under the system's temporary directory) and the
    watchdog that ends its processes and removes the folder if the launcher dies (:mod:`.watchdog`).

    ``path=None`` and ``own_dir=False``: watch processes only (a caller-chosen ``--workdir``)."""

    def __init__(self, own_dir: bool = True) -> None:
        sweep_stale()
        self.path: Path | None = None
        if own_dir:
            self.path = Path(tempfile.mkdtemp(prefix=PRIVATE_PREFIX))  # mkdtemp: mode 0700
            (self.path / "owner").write_text(f"{os.getpid()}\n", encoding="utf-8")
        # The watchdog is the standard library only, started by its file's path: ``-m`` would import
        # the dpfed_core package first (NumPy, SciPy, pandas: ≈ 0.4 CPU-s per deployment for nothing).
        self.watchdog = subprocess.Popen([sys.executable, str(Path(__file__).with_name("watchdog.py"))],
                                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL, start_new_session=True, text=True)
        if self.path is not None:
            self._tell(f"path {self.path}")

    def _tell(self, line: str) -> None:
        if self.watchdog.poll() is None and self.watchdog.stdin is not None:
            try:
                self.watchdog.stdin.write(line + "\n")
                self.watchdog.stdin.flush()
            except (BrokenPipeError, ValueError):
                pass

    def watch(self, proc) -> None:
        self._tell(f"group {proc.pid}")  # the child called setsid: its pid is its group id

    def close(self) -> None:
        """Normal exit: the caller ended its processes; remove the folder and dismiss the watchdog."""
        import shutil

        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
        self._tell("release")
        if self.watchdog.stdin is not None:
            try:
                self.watchdog.stdin.close()
            except (BrokenPipeError, ValueError, OSError):
                pass
        try:
            self.watchdog.wait(5)
        except subprocess.TimeoutExpired:
            self.watchdog.kill()


def _policy_paths(site_policy, n: int) -> list[Path]:
    """One policy path per site (one file given for all, or a list of n); [] without a policy (the
    nodes then refuse every run, naming the missing --node-config "policy-path='…'")."""
    if site_policy is None:
        return []
    paths = [Path(p).resolve() for p in site_policy] if isinstance(site_policy, (list, tuple)) else \
        [Path(site_policy).resolve()] * n
    if len(paths) != n:
        raise DeploymentError(f"{len(paths)} site policies for {n} sites; give one file, or one per site")
    for p in paths:
        if "'" in str(p):
            raise DeploymentError(f"site policy path {p} contains a quote; use a path without quotes")
    return paths


def parse_port_range(text: str) -> tuple[int, int]:
    """``"20000-20100"`` → (20000, 20100); a :class:`DeploymentError` naming ``--port-range`` otherwise."""
    from dpfed_core.data.inputs import strict_int

    try:  # ASCII digits only: '3_0000' and full-width digits are no port numbers
        lo, hi = (strict_int(x) for x in str(text).split("-", 1))
    except ValueError:
        raise DeploymentError(f"--port-range {text!r}: expected LOW-HIGH, e.g. 20000-20100") from None
    if not (1024 <= lo <= hi <= 65535):
        raise DeploymentError(f"--port-range {text!r}: expected 1024 ≤ LOW ≤ HIGH ≤ 65535")
    return lo, hi


def free_ports(n: int, port_range: tuple[int, int] | None = None) -> list[int]:
    """``n`` distinct free TCP ports on 127.0.0.1 (from ``port_range`` if given, else the system's
    choice). Raises :class:`DeploymentError` naming ``--port-range`` when the range has too few."""
    if port_range is None:
        out: list[int] = []
        while len(out) < n:
            p = free_port()
            if p not in out:
                out.append(p)
        return out
    lo, hi = port_range
    out = []
    for p in range(lo, hi + 1):
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", p))
            except OSError:
                continue
        out.append(p)
        if len(out) == n:
            return out
    raise DeploymentError(f"--port-range {lo}-{hi}: {len(out)} free port(s), the deployment needs {n} "
                          f"(1 SuperLink + {n - 1} SuperNodes); widen the range")


class GuardedFolder:
    """The private folder and watchdog of an engine (:class:`LocalFederation`, the Simulation
    Engine's federation): ``guard``/``workdir``/``keep`` as their constructors take them."""

    guard: Guard | None
    workdir: str | os.PathLike | None
    keep: bool
    _own_guard: bool = False

    def _open_dir(self) -> None:
        """``self.dir``: ``workdir`` if given (made 0700 when this run creates it; inside an existing one a
        private ``dpfed-run-*`` folder, the existing folder's mode untouched), else a folder inside the
        guard's private folder (a guard of our own when none was given); mode 0700 — logs, keys and
        reports are the operator's only."""
        if self.guard is None:
            self.guard = Guard(own_dir=self.workdir is None)
            self._own_guard = True
        if self.workdir is None:
            self.dir = (self.guard.path / "flower") if self.guard.path is not None else Path(
                tempfile.mkdtemp(prefix=PRIVATE_PREFIX))
            self.dir.mkdir(parents=True, exist_ok=True)
            os.chmod(self.dir, 0o700)
        else:
            self.dir = private_run_dir(self.workdir)

    def _release_guard(self) -> None:
        """Remove our own guard's folder (unless ``keep``) and dismiss its watchdog."""
        if self._own_guard and self.guard is not None:
            if self.keep and self.guard.path is not None:
                self.guard.path = None  # keep the folder (asked for), still dismiss the watchdog
            self.guard.close()
            self.guard = None
            self._own_guard = False


class LocalFederation(GuardedFolder):
    """One SuperLink and one SuperNode per shard on 127.0.0.1. Use as a context manager.

    shards : shard files in entity order (one SuperNode each). workdir : logs, keys, FLWR_HOME,
    progress and result files (default: a private temporary folder, removed on close unless ``keep``).
    insecure : plain HTTP and no node authentication (only when asked for; the result says so).
    port_range : (low, high) for the SuperLink's port and each SuperNode's Runtime API port.
    guard : the :class:`Guard` whose folder holds the shards (then ``workdir`` is inside it).

    By default every connection uses TLS (a CA and certificate made for this run) and the SuperLink
    accepts only the SuperNodes whose public keys the launcher registered (Flower's node
    authentication). Every process runs in a process group of its own; :meth:`close`, the
    parent-death signal and the watchdog end them on every exit path.
    """

    def __init__(self, shards: list[str | os.PathLike], workdir: str | os.PathLike | None = None,
                 entity_names: list[str] | None = None, keep: bool = False, *, insecure: bool = False,
                 port_range: tuple[int, int] | None = None, guard: Guard | None = None,
                 item_features: str | os.PathLike | None = None,
                 warm_run: tuple[str, int, float] | None = None,
                 site_policy: str | os.PathLike | list | None = None) -> None:
        self.shards = [Path(s).resolve() for s in shards]
        # each site's policy file (one for all, or one per site): the node's own law (site_policy)
        self.site_policies = _policy_paths(site_policy, len(self.shards))
        # the public item features file every node is given (shards.write_item_features), or None
        self.item_features = Path(item_features).resolve() if item_features else None
        # (config JSON, H, Λ∞) of the run to come: the warm interpreter computes its public noise
        # calibration once for every fork (node_runtime.WARM_RUN_ENV); None: each task computes it.
        self.warm_run = warm_run
        self.entity_names = entity_names or [p.stem for p in self.shards]
        self.workdir = workdir
        self.keep = keep
        self.insecure = bool(insecure)
        self.port_range = port_range
        self.guard = guard
        self._own_guard = False
        self.superlink: _Forked | None = None
        self.nodes: list[_Forked] = []
        self.control: _ForkedControl | None = None
        self.zygote: _Zygote | None = None
        self.port: int | None = None
        self.node_ports: list[int] = []
        self.tls = None

    def report_path(self, h: int) -> Path:
        """Where entity ``h``'s node writes its local evaluation report."""
        return self.dir / "reports" / f"entity_{h:03d}.report.json"

    # ------------------------------------------------------------------ processes
    def _env(self) -> dict:
        env = dict(os.environ)
        env["FLWR_HOME"] = str(self.dir / "flwr_home")
        env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
        # This clone's dpfed_core first, whatever else is installed.
        env["PYTHONPATH"] = str(PACKAGE_ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env["FLWR_SUPEREXEC_TASK_POLL_INTERVAL"] = str(TASK_POLL)
        # Nothing leaves the machine besides the protocol: no telemetry, no update check.
        env["FLWR_TELEMETRY_ENABLED"] = "0"
        env["FLWR_DISABLE_UPDATE_CHECK"] = "1"
        # Loopback doorbells between the ServerApp and the nodes (deployment/doorbell.py).
        env["DPFED_DOORBELL"] = "1"
        if self.warm_run is not None:
            from dpfed_core.deployment.node_runtime import WARM_RUN_ENV

            config, n_entities, value_max = self.warm_run  # value_max: the data's public Λ∞, as every shard states it
            env[WARM_RUN_ENV] = json.dumps({"config": config, "n_entities": int(n_entities),
                                            "value_max": float(value_max)})
        # One BLAS thread per process: H nodes share the machine's cores.
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env.setdefault(var, "1")
        return env

    def _tls_client_args(self, flag: str = "--root-certificates") -> list[str]:
        return ["--insecure"] if self.insecure else [flag, str(self.tls.ca)]

    def start(self, timeout: float = 60.0) -> "LocalFederation":
        ok, info = flower_available()
        if not ok:
            raise DeploymentError(info)
        for p in self.shards:
            if "'" in str(p):
                raise DeploymentError(f"shard path {p} contains a quote; use a path without quotes")
        ports = free_ports(1 + len(self.shards), self.port_range)
        self._open_dir()
        try:
            self._start(ports, timeout)
        except BaseException:
            self.close()
            raise
        return self

    def _start(self, ports: list[int], timeout: float) -> None:
        from dpfed_core.deployment.security import make_node_key, make_tls

        self.port = ports[0]
        link = ["--host", "127.0.0.1", "--port", str(self.port),
                "--isolation", "process", "--disable-runtime-dependency-installation"]
        if self.insecure:
            link.append("--insecure")
        else:
            self.tls = make_tls(self.dir / "tls")
            link += ["--ssl-ca-certfile", str(self.tls.ca), "--ssl-certfile", str(self.tls.cert),
                     "--ssl-keyfile", str(self.tls.key), "--enable-supernode-auth"]
        exec_tls = self._tls_client_args()
        # One warm interpreter forks every site (node_runtime.run_zygote): Python and the libraries
        # are loaded once, not once per process.
        self.zygote = _Zygote(self._env(), self.dir, self.dir / "zygote.log", self.guard, timeout)
        # The SuperLink and, forked before it starts, its ServerApp executor.
        self.superlink = self.zygote.spawn(
            "link", ["--runtime-api-address", f"127.0.0.1:{self.port}", *exec_tls, "--", *link],
            self.dir / "superlink.log")
        _wait_port(self.port, timeout, self.superlink, self.dir / "superlink.log")
        self.control = _ForkedControl(self.zygote, self.port, None if self.insecure else self.tls.ca, self.dir,
                                      timeout)
        keys = []
        if not self.insecure:
            # Node authentication: the SuperLink accepts only these keys (`flwr supernode register`).
            keys = [make_node_key(self.dir / "node_keys", f"entity_{h:03d}") for h in range(len(self.shards))]
            self.control.register([k.public for k in keys])
        self.node_ports = list(ports[1:])
        for h, shard in enumerate(self.shards):
            port = ports[1 + h]
            report = self.report_path(h)
            node = ["--superlink", f"127.0.0.1:{self.port}", "--isolation", "process",
                    "--host", "127.0.0.1", "--port", str(port),
                    "--node-config", f"data-path='{shard}' report-path='{report}'"
                    + (f" item-features='{self.item_features}'" if self.item_features else "")
                    + (f" policy-path='{self.site_policies[h]}'" if self.site_policies else "")
                    + f" coordinator='SuperLink 127.0.0.1:{self.port}'"]
            if self.insecure:
                node.append("--insecure")
            else:
                node += ["--root-certificates", str(self.tls.ca), "--auth-supernode-private-key", str(keys[h].private),
                         "--ssl-certfile", str(self.tls.cert), "--ssl-keyfile", str(self.tls.key),
                         "--ssl-ca-certfile", str(self.tls.ca)]
            # The SuperNode and, forked from it before it starts, its ClientApp executor.
            self.nodes.append(self.zygote.spawn(
                "node", ["--runtime-api-address", f"127.0.0.1:{port}", *exec_tls, "--", *node],
                self.dir / f"supernode_{h:03d}.log"))

    def dead_nodes(self) -> list[tuple[str, int]]:
        return [(self.entity_names[h], p.returncode) for h, p in enumerate(self.nodes) if p.poll() is not None]

    def kill_node(self, h: int) -> None:
        """End entity ``h``'s SuperNode, its executor and their tasks at once, as a crashed site would."""
        _kill_group(self.nodes[h], signal.SIGKILL)

    def processes(self) -> list:
        return [p for p in [*self.nodes, self.superlink] if p is not None]

    def close(self) -> None:
        # SIGKILL at once: every process is throw-away (in-memory state, logs already written) and
        # Flower's graceful shutdown (HTTP servers draining connections) costs seconds per process.
        procs = self.processes()
        for p in procs:
            _kill_group(p, signal.SIGKILL)  # the whole group: the executor and its tasks too
        for p in procs:
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.nodes = []
        self.superlink = None
        if self.zygote is not None:
            self.zygote.close()
            self.zygote = None
        if self.control is not None:
            self.control.close()
            self.control = None
        self._release_guard()

    def __enter__(self) -> "LocalFederation":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ one run
    def run(self, config_json: str, n_entities: int, *, round_timeout: float = 600.0,
            connect_timeout: float = 120.0, timeout: float = 3600.0, dump_dir: str | None = None,
            progress: Callable[[dict], None] | None = None) -> dict:
        """Submit one run and wait for it. Returns ``{"V": ndarray, **server result, "run_id", "wall_seconds"}``.
        Raises :class:`DeploymentError` (nothing written) if a node dies, the server reports an error
        or ``timeout`` passes."""
        t0 = time.perf_counter()
        tag = f"{int(time.time() * 1000)}_{os.getpid()}"
        out = self.dir / f"result_{tag}.npz"
        prog = self.dir / f"progress_{tag}.jsonl"
        prog.touch()
        overrides = {"config": config_json, "n-entities": int(n_entities), "out": str(out), "progress": str(prog),
                     "round-timeout": float(round_timeout), "connect-timeout": float(connect_timeout),
                     "dump-dir": str(dump_dir or ""),
                     "doorbells": ",".join(str(p) for p in [self.port, *self.node_ports])}
        run_id = self.control.start_run(APP_DIR, overrides)
        self._wake_link_executor()
        if progress:
            progress({"event": "submitted", "run_id": run_id})
        try:
            from dpfed_core.deployment.wire import config_from_json

            # a secure sum survives max_dropouts lost sites: the ServerApp, not a node's exit, ends it
            tolerate = int(config_from_json(config_json).max_dropouts)
            return self._follow(run_id, prog, out, timeout, t0, progress, tolerate)
        except BaseException:
            # The ServerApp of a failed run must not keep waiting for a dead node until its round
            # timeout: the SuperLink stops the run (what `flwr stop` does).
            self.control.stop_run(run_id)
            raise

    def _wake_link_executor(self) -> None:
        """SIGUSR1 to the SuperLink's executor (the SuperLink process's child, node_runtime): it
        launches the ServerApp now instead of at its next poll (≤ LINK_EXEC_POLL s later)."""
        if self.superlink is None:
            return
        try:
            with open(f"/proc/{self.superlink.pid}/task/{self.superlink.pid}/children", encoding="ascii") as f:
                children = [int(c) for c in f.read().split()]
        except (OSError, ValueError):  # not Linux: the poll still finds the run
            return
        for pid in children:
            try:
                os.kill(pid, signal.SIGUSR1)
            except (ProcessLookupError, PermissionError):
                pass

    def _follow(self, run_id: int, prog: Path, out: Path, timeout: float, t0: float,
                progress: Callable[[dict], None] | None, tolerate: int = 0) -> dict:
        events = ProgressFile(prog, progress, f"run {run_id}")
        end = time.monotonic() + timeout
        while True:
            if any(ev["event"] == "done" for ev in events.read()) and out.exists():
                result = read_result(out)
                result["run_id"] = run_id
                result["wall_seconds"] = time.perf_counter() - t0
                return result
            last = events.last
            dead = self.dead_nodes()
            if len(dead) > tolerate:
                who = ", ".join(f"{name!r} (exit code {code})" for name, code in dead)
                h0 = self.entity_names.index(dead[0][0])
                raise DeploymentError(f"run {run_id} stopped: the SuperNode of entity {who} died during the run "
                                      f"(last step: {last}); no result was written; "
                                      f"{see_log(self.dir / f'supernode_{h0:03d}.log')}")
            if self.superlink is not None and self.superlink.poll() is not None:
                raise DeploymentError(f"run {run_id} stopped: the SuperLink exited with code "
                                      f"{self.superlink.returncode} (last step: {last}); {see_log(self.dir / 'superlink.log')}")
            if time.monotonic() > end:
                raise DeploymentError(f"run {run_id} did not finish within {timeout:g} s (last step: {last}); "
                                      f"{see_log(self.dir / 'superlink.log')}")
            # 4 checks a second: each reads the progress file and polls every site process, and at
            # 20 a second that was ≈ 2.6 CPU-s of a one-minute 30-node run, taken from the nodes
            time.sleep(FOLLOW_POLL)


class ProgressFile:
    """The ServerApp's progress file (one JSON event a line), read as it grows: :meth:`read`
    returns the new events (each also handed to ``progress``) and raises :class:`DeploymentError`
    on an ``error`` event; ``last`` is the latest event's name."""

    def __init__(self, path: Path, progress: Callable[[dict], None] | None, what: str) -> None:
        self.path, self.progress, self.what = path, progress, what
        self.seen = 0
        self.last = "submitted"

    def read(self) -> list[dict]:
        text = self.path.read_text(encoding="utf-8")
        # only whole lines: the ServerApp may be appending the next one while this reads
        lines = text[:text.rfind("\n") + 1].splitlines()
        new = [json.loads(line) for line in lines[self.seen:]]
        self.seen = len(lines)
        for ev in new:
            self.last = ev["event"]
            if self.progress:
                self.progress(ev)
            if ev["event"] == "error":
                raise DeploymentError(f"{self.what} failed: {ev['message']}", ledger_rows=ev.get("ledger_rows"))
        return new


def read_result(out: Path) -> dict:
    """The ServerApp's result file (``V`` and the JSON result), removed once read."""
    import numpy as np

    from dpfed_core.deployment.wire import loads

    with np.load(out, allow_pickle=False) as z:
        result = loads(str(z["result"]))
        result["V"] = np.array(z["V"])
    out.unlink()
    return result


class _ForkedControl:
    """The SuperLink's Control API for the launcher, each request sent by a fork of the zygote
    (:func:`~dpfed_core.deployment.control.run_control`), where Flower is loaded already: the
    launcher never imports Flower's control client (≈ 0.45 CPU-s of a ``deploy-local``). Same
    requests, same TLS as :class:`~dpfed_core.deployment.control.ControlClient`."""

    def __init__(self, zygote: "_Zygote", port: int, ca: Path | None, folder: Path, timeout: float) -> None:
        self.zygote, self.port, self.ca, self.folder, self.timeout = zygote, port, ca, Path(folder), timeout
        self._n = 0

    def _ask(self, action: str, timeout: float | None = None, **args) -> dict:
        from dpfed_core.deployment.control import control_request

        self._n += 1
        answer = self.folder / f"control_{self._n:03d}_{action}.json"
        log = self.folder / f"control_{self._n:03d}_{action}.log"
        fork = self.zygote.spawn("control", [control_request(self.port, self.ca, action, **args), str(answer)], log,
                                 watch=False)  # waited for here; dies with the zygote (parent-death signal)
        limit = self.timeout if timeout is None else timeout
        try:
            code = fork.wait(limit)
        except subprocess.TimeoutExpired:
            _kill_group(fork, signal.SIGKILL)
            raise DeploymentError(f"the SuperLink's Control API did not answer the {action} request "
                                  f"within {limit:g} s; {see_log(log)}") from None
        try:
            out = json.loads(answer.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            out = {"error": f"the {action} request ended without an answer (exit code {code}); {see_log(log)}"}
        if "error" in out:
            raise DeploymentError(out["error"])
        return out

    def register(self, public_keys: list[Path]) -> None:
        self._ask("register", keys=[str(p) for p in public_keys])

    def start_run(self, app_dir: Path, overrides: dict) -> int:
        return int(self._ask("start", app_dir=str(app_dir), overrides=overrides)["run_id"])

    def stop_run(self, run_id: int) -> None:
        """Best effort (the run may be over, the SuperLink gone): never raises."""
        try:
            self._ask("stop", timeout=min(self.timeout, 10.0), run_id=int(run_id))
        except DpfedError:
            pass

    def close(self) -> None:
        """Nothing held: each request was a process of its own."""


class _Forked:
    """A site process forked by the zygote: ``pid`` (= its process group), ``poll``/``wait`` like
    :class:`subprocess.Popen` (the zygote reports its exit)."""

    def __init__(self, zygote: "_Zygote", pid: int) -> None:
        self.zygote = zygote
        self.pid = pid

    @property
    def returncode(self) -> int | None:
        return self.zygote.exits.get(self.pid)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        with self.zygote.cond:
            while self.returncode is None:
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(f"site process {self.pid}", timeout)
                self.zygote.cond.wait(0.1 if left is None else min(left, 0.1))
        return self.returncode


class _Zygote:
    """The warm interpreter that forks the deployment's sites (``node_runtime zygote``)."""

    def __init__(self, env: dict, cwd: Path, log: Path, guard: Guard, timeout: float) -> None:
        import threading

        self.exits: dict[int, int] = {}
        self.pids: dict[int, int] = {}
        self.cond = threading.Condition()
        self._next = 0
        self.log = log
        with open(log, "w", encoding="utf-8") as f:
            self.proc = subprocess.Popen([sys.executable, "-m", "dpfed_core.deployment.node_runtime", "zygote"],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=f, env=env, cwd=cwd,
                                         preexec_fn=_child_setup, text=True, bufsize=1)
        guard.watch(self.proc)
        self.guard = guard
        self.ready = False
        threading.Thread(target=self._read, name="dpfed zygote", daemon=True).start()
        end = time.monotonic() + timeout
        with self.cond:
            while not self.ready:
                if self.proc.poll() is not None or time.monotonic() > end:
                    raise DeploymentError(f"the deployment's process starter did not come up; {see_log(log)}")
                self.cond.wait(0.1)

    def _read(self) -> None:
        for line in self.proc.stdout:
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            with self.cond:
                if ev.get("ready"):
                    self.ready = True
                elif "exit" in ev:
                    self.exits[int(ev["exit"])] = int(ev["code"])
                elif "id" in ev:
                    self.pids[int(ev["id"])] = int(ev["pid"])
                self.cond.notify_all()
        with self.cond:  # the zygote is gone: its children died with it (parent-death signal)
            for pid in self.pids.values():
                self.exits.setdefault(pid, -signal.SIGKILL)
            self.cond.notify_all()

    def spawn(self, role: str, argv: list[str], log: Path, watch: bool = True) -> _Forked:
        """Fork a ``role`` process; ``watch``: tell the watchdog its group (a short-lived fork that dies
        with the zygote anyway needs no watching, and a finished group's id could be reused)."""
        with self.cond:
            k = self._next
            self._next += 1
            try:
                self.proc.stdin.write(json.dumps({"id": k, "role": role, "argv": argv, "log": str(log)}) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, ValueError):
                raise DeploymentError(f"the deployment's process starter has exited; {see_log(self.log)}") from None
            end = time.monotonic() + 30
            while k not in self.pids:
                if time.monotonic() > end or self.proc.poll() is not None:
                    raise DeploymentError(f"could not start the {role} process; {see_log(self.log)}")
                self.cond.wait(0.1)
            forked = _Forked(self, self.pids[k])
        if watch:
            self.guard.watch(forked)
        return forked

    def close(self) -> None:
        try:
            self.proc.stdin.close()
        except (BrokenPipeError, ValueError, OSError):
            pass
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            _kill_group(self.proc, signal.SIGKILL)
            self.proc.wait(5)


def _kill_group(p: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(p.pid, sig)  # the process group _child_setup made for p
    except (ProcessLookupError, PermissionError):
        pass
