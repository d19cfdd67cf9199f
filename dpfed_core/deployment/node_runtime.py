"""The processes a local deployment starts: Flower's own commands, tuned for one machine.

``python -m dpfed_core.deployment.node_runtime zygote``
    One warm interpreter per deployment (:func:`run_zygote`): imports Flower, NumPy/SciPy, OpenDP,
    scikit-learn and the apps once, then forks every site process on the launcher's request, each
    in a session (process group) of its own. Starting ~30 Python processes that each import the same
    libraries is most of a small deployment's cost on a 2-core machine.

``node EXEC_ARGS… -- SUPERNODE_ARGS…`` (forked by the zygote, or run directly)
    Flower's ``flower-supernode`` (``--isolation process``) and, forked from it before it starts,
    its executor: Flower's ``flower-superexec`` loop with a warm executor that runs each ClientApp
    task in a fork of itself (the same ``flwr-clientapp`` entry point) instead of a fresh
    ``flwr-clientapp`` process (≈ 1 s of interpreter start and imports per message). Two of the
    SuperNode's hard-coded waits are shortened (flwr 1.42, ``flwr/supernode/start_client_internal.py``):
    the 3 s idle poll of the SuperLink backs off from :data:`IDLE_POLL_MIN` to :data:`IDLE_POLL_MAX`
    after each message, the 0.5 s check for the ClientApp's reply takes 5 ms; the SuperNode wakes
    its executor with SIGUSR1 when a message arrives. The node reports a ClientApp run time of 0 to
    the SuperLink (no timing leaves a node).

``link EXEC_ARGS… -- SUPERLINK_ARGS…``
    The stock ``flower-superlink`` (``--isolation process``) and its ServerApp executor, likewise.

``supernode …`` / ``superexec …``
    Each half alone.

A real site can run the stock ``flower-supernode`` / ``flower-superexec`` instead (docs/DEPLOYMENT.md)
— the protocol and the messages are the same.
"""
from __future__ import annotations

import os
import sys
import time

#: Idle poll of a SuperNode, right after a message and at most (seconds).
#: Every poll is a TLS request the SuperLink answers (and verifies the node's signature on): with
#: H nodes on 2 shared cores the SuperLink's CPU, not the network, bounds a run, so the idle poll
#: doubles from 20 ms after each message up to 0.5 s (≈ 6 polls in the first second).
IDLE_POLL_MIN = 0.02
IDLE_POLL_MAX = 0.5
#: The idle poll when the node has a doorbell (the ServerApp rings it when it pushes a message; the
#: poll is only the fallback for a lost datagram, and the doorbell is bound before the node
#: connects, so the first message's ring cannot come too early). 5 s measured no faster than 2 s on
#: the 30-hospital sample (61.5–66.0 s against 60.4–60.7 s).
IDLE_POLL_RUNG_MAX = 2.0
#: Flower's hard-coded waits that :class:`_Clock` replaces.
_FLOWER_IDLE_SLEEP = 3
_FLOWER_REPLY_SLEEP = 0.5


class _Clock:
    """Stands in for the ``time`` module inside ``start_client_internal`` (everything else passes
    through to :mod:`time`). With a doorbell (:mod:`.doorbell`, local deployments) an idle wait ends
    as soon as the ServerApp rings, so the fallback poll can be slow (:data:`IDLE_POLL_RUNG_MAX`)."""

    def __init__(self, doorbell=None) -> None:
        self.doorbell = doorbell
        self.cap = IDLE_POLL_RUNG_MAX if doorbell is not None else IDLE_POLL_MAX
        # With a doorbell the poll is only the fallback for a lost datagram: no fast ramp after a
        # message (30 nodes ramping from 20 ms made most of the SuperLink's requests).
        self.floor = self.cap if doorbell is not None else IDLE_POLL_MIN
        self.pause = self.floor

    def activity(self) -> None:
        self.pause = self.floor

    def sleep(self, seconds: float) -> None:
        if seconds == _FLOWER_IDLE_SLEEP:
            if self.doorbell is not None and self.doorbell.wait(self.pause):
                return  # rung: a message is waiting, poll now
            if self.doorbell is None:
                time.sleep(self.pause)
            self.pause = min(self.pause * 2.0, self.cap)
        elif seconds == _FLOWER_REPLY_SLEEP:
            time.sleep(0.005)
        else:
            time.sleep(seconds)

    def __getattr__(self, name: str):
        return getattr(time, name)


#: Longest pause of an executor between two task polls (seconds): a node's executor is woken at
#: once by its SuperNode (SIGUSR1) when a message arrives (a signal that comes while it polls is
#: kept, :class:`_ExecClock`), so the poll is only a fallback. Each poll is a TLS request its
#: SuperNode answers: at 1 s, 30 idle executors cost ≈ 15 CPU-s of a 90 s run (theirs and the nodes').
EXEC_POLL_MAX = 5.0
#: The ServerApp executor's longest pause between task polls (seconds): the launcher wakes it with
#: SIGUSR1 right after it submits a run (the stock SuperLink does not), so the pause only bounds a
#: run's start when that signal is lost. Each poll is a request the SuperLink answers.
LINK_EXEC_POLL = 1.0


class _ExecClock:
    """Stands in for ``time`` in Flower's SuperExec loop: sleeps up to ``cap`` seconds, or until
    SIGUSR1 (sent by the SuperNode when it stores a message for this node).

    The signal handler writes a byte to a pipe and :meth:`sleep` waits on that pipe, so a signal that
    comes at any moment — while the loop polls, or just before it sleeps — ends the next wait at
    once (a flag checked before sleeping would lose a signal arriving between the check and the
    sleep, and stall the node for a whole ``cap``)."""

    def __init__(self, cap: float, wakeable: bool) -> None:
        import signal

        self.cap = cap
        self.rfd, self.wfd = os.pipe()
        os.set_blocking(self.rfd, False)
        os.set_blocking(self.wfd, False)
        if wakeable:
            signal.signal(signal.SIGUSR1, self._wake)

    def _wake(self, signum, frame) -> None:
        try:
            os.write(self.wfd, b"!")
        except BlockingIOError:  # the pipe is full of wake-ups already
            pass

    def sleep(self, seconds: float) -> None:
        import select

        try:
            select.select([self.rfd], [], [], self.cap)
        except InterruptedError:  # the signal itself interrupted the wait; its byte is in the pipe
            pass
        try:
            while os.read(self.rfd, 4096):
                pass
        except BlockingIOError:
            pass

    def __getattr__(self, name: str):
        return getattr(time, name)


def run_supernode(argv: list[str], executor_pid: int | None = None) -> None:
    """``flower-supernode`` with the waits above shortened; ``executor_pid`` gets SIGUSR1 whenever
    a message for this node has been stored (so its executor picks the task up at once)."""
    import signal
    import flwr.supernode.start_client_internal as sci
    from flwr.supernode.cli.flower_supernode import flower_supernode
    from flwr.supernode.nodestate.in_memory_nodestate import InMemoryNodeState

    from dpfed_core.deployment import flower_internals as fi
    from dpfed_core.deployment.doorbell import Doorbell, ring

    # The doorbells of a local deployment: this node's on its own port number (UDP), the
    # ServerApp's on the SuperLink's port number.
    own = _flag_value(argv, "--port")
    link = _flag_value(argv, "--superlink")
    server_bell = [link.rsplit(":", 1)[1]] if link and ":" in link else []
    clock = _Clock(Doorbell.open(int(own)) if own else None)
    if fi.usable("supernode-sleeps"):  # each replacement only where the code is what it was written for
        sci.time = clock
    pull = sci._pull_and_store_message
    push = sci._push_messages

    def pull_and_note(*args, **kwargs):
        run_id = pull(*args, **kwargs)
        if run_id is not None:
            clock.activity()
            if executor_pid is not None:
                try:
                    os.kill(executor_pid, signal.SIGUSR1)
                except ProcessLookupError:
                    pass
        return run_id

    def push_and_ring(*args, **kwargs):
        out = push(*args, **kwargs)
        ring(server_bell)  # the ServerApp pulls the reply now instead of at its next poll
        return out

    if fi.usable("supernode-push"):
        sci._push_messages = push_and_ring
        fi.replaced("supernode-push", push_and_ring)
    if fi.usable("supernode-pull"):
        sci._pull_and_store_message = pull_and_note
        fi.replaced("supernode-pull", pull_and_note)
    # Flower sends each reply with the ClientApp's run time; a node's timing is not the server's
    # business, so the node reports 0.
    if fi.usable("node-timing"):
        def no_duration(self, message_id):
            return 0.0

        InMemoryNodeState.get_message_processing_duration = no_duration
        fi.replaced("node-timing", no_duration)
    sys.argv = ["flower-supernode", *argv]
    flower_supernode()


def _flag_value(argv: list[str], flag: str) -> str | None:
    """The value after ``flag`` in ``argv`` (``--flag v`` or ``--flag=v``), else None."""
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            return argv[i + 1]
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
    return None


def run_superexec(argv: list[str], poll: float | None = None, wakeable: bool = False) -> None:
    """``flower-superexec`` whose tasks run in forks of this warm process. ``poll``: pause between
    task polls (default FLWR_SUPEREXEC_TASK_POLL_INTERVAL); ``wakeable``: SIGUSR1 ends a pause."""
    import flwr.supercore.superexec.run_superexec as rs
    from flwr.supercore.cli.flower_superexec import flower_superexec
    from flwr.supercore.constant import TaskType

    # Imported once here, so each fork starts with Flower, NumPy, SciPy and the apps loaded.
    from flwr.superlink.cli import flwr_serverapp
    from flwr.supernode.cli.flwr_clientapp import flwr_clientapp

    _warm_up()

    entry = {TaskType.CLIENT_APP: ("flwr-clientapp", flwr_clientapp),
             TaskType.SERVER_APP: ("flwr-serverapp", flwr_serverapp)}

    from dpfed_core.deployment import flower_internals as fi

    if fi.usable("superexec-loop") and fi.usable("superexec-launch"):
        rs.get_executor = lambda *a, **k: fork_executor(entry)
        if poll is not None:
            rs.time = _ExecClock(poll, wakeable)
    sys.argv = ["flower-superexec", *argv]
    flower_superexec()


#: Longest wait of a node's executor for its earlier ClientApp tasks to exit before it starts the next
#: (seconds): they exit right after pushing their reply; only a task that hangs is waited for this long.
EARLIER_TASK_WAIT = 10.0


def fork_executor(entry: dict, earlier_task_wait: float = EARLIER_TASK_WAIT):
    """The warm executor of :func:`run_superexec`: runs each ClientApp/ServerApp task (``entry``: task type →
    (command name, its main function)) in a fork of this process; other task types by Flower's subprocess
    executor. The child runs exactly the command line Flower's executor would.

    A ClientApp task pushes its reply, then — as it exits — the node's context (the SecAgg+ state among it).
    Without the waits Flower has, the next message can reach the node in between, and a task started then
    reads the context as it was before the previous task: SecAgg+ aborts ("expect share_keys stage, but
    receive collect_masked_vectors stage"; seen on a loaded machine). So a ClientApp task starts only once
    the node's earlier ones have exited (at most ``earlier_task_wait`` seconds: a task that hangs does not
    stop the node); a node's tasks run one after another anyway, each answering the server's last message."""
    import gc

    from flwr.supercore.constant import TASK_TYPE_TO_APPIO_API_ADDRESS_ARG, TaskType
    from flwr.supercore.superexec.executor.subprocess_executor import SubprocessExecutor
    from flwr.supercore.superexec.executor.types import LaunchResult

    class ForkExecutor(SubprocessExecutor):
        def __init__(self) -> None:
            self.children: dict[int, object] = {}  # pid → task type

        def launch(self, spec):
            if spec.task_type not in entry:
                return super().launch(spec)
            if spec.task_type == TaskType.CLIENT_APP:
                self._await_earlier(TaskType.CLIENT_APP)
            name, main = entry[spec.task_type]
            args = [TASK_TYPE_TO_APPIO_API_ADDRESS_ARG[spec.task_type], spec.runtime_api_address, "--token", spec.token]
            if spec.insecure:
                args.append("--insecure")
            elif spec.root_certificates_path is not None:
                args += ["--root-certificates", spec.root_certificates_path]
            # Every object the warm executor holds stays out of the collector's reach: a child's
            # collection would otherwise touch (and so copy) every page the parent's objects are on.
            gc.freeze()
            pid = os.fork()
            if pid == 0:  # the child: one task, then exit without the parent's clean-up handlers
                code = 0
                try:
                    _die_with_parent()
                    sys.argv = [name, *args]
                    main()
                except SystemExit as exc:
                    code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
                except BaseException:  # noqa: BLE001 — logged by Flower; the exit code says it failed
                    code = 1
                finally:
                    sys.stdout.flush()
                    sys.stderr.flush()
                    os._exit(code)
            self.children[pid] = spec.task_type
            return LaunchResult.accepted()

        def _await_earlier(self, task_type) -> None:
            deadline = time.monotonic() + earlier_task_wait
            while True:
                self.reconcile()
                if task_type not in self.children.values() or time.monotonic() >= deadline:
                    return
                time.sleep(0.002)

        def reconcile(self) -> None:
            for pid in list(self.children):
                try:
                    done, _ = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    done = pid
                if done:
                    self.children.pop(pid, None)

    return ForkExecutor()


def run_with_executor(role: str, argv: list[str]) -> None:
    """``node``/``link``: a SuperNode (or SuperLink) and its executor from one interpreter start.

    ``argv`` = ``EXEC_ARGS… -- FLOWER_ARGS…``. The process imports Flower and the apps once, then
    forks: the child is the executor (:func:`run_superexec` with ``EXEC_ARGS``; it retries until the
    Runtime API is up, and gets SIGKILL when its parent dies), the parent the SuperNode
    (:func:`run_supernode`) or the stock ``flower-superlink``. Both stay in the process group the
    launcher made, so ending the group ends both. One interpreter start and import per site instead
    of two: on a shared 2-core machine starting Python is most of a small run's cost."""
    if "--" not in argv:
        raise SystemExit(f"usage: python -m dpfed_core.deployment.node_runtime {role} EXEC_ARGS… -- FLOWER_ARGS…")
    cut = argv.index("--")
    exec_args, flower_args = argv[:cut], argv[cut + 1:]
    _warm_up()  # loaded before the fork, shared by both (a no-op in a fork of the zygote)

    import signal

    # Blocked until the executor has installed its handler: an early SIGUSR1 would kill it.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
    pid = os.fork()
    if pid == 0:
        _die_with_parent()
        code = 0
        try:
            if role == "node":
                clock_args = {"poll": EXEC_POLL_MAX, "wakeable": True}
            else:
                clock_args = {"poll": LINK_EXEC_POLL, "wakeable": True}
            if clock_args["wakeable"]:
                _ExecClock(0, True)  # install the handler before unblocking
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
            run_superexec(exec_args, **clock_args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0
        finally:
            os._exit(code)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})
    if role == "node":
        run_supernode(flower_args, executor_pid=pid)
    else:
        from flwr.superlink.cli import flower_superlink

        sys.argv = ["flower-superlink", *flower_args]
        flower_superlink()


def _die_with_parent() -> None:
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


#: Imported once by the zygote before it forks: what every method's tasks load lazily (OpenDP's
#: samplers — its submodules, not ``opendp.prelude``, which imports OpenDP's scikit-learn extras and
#: with them scikit-learn, pandas and pyarrow —, the accountant, a site's budget store and ledger,
#: the local model). A fork inherits them; without this every task process would import them again.
WARM_MODULES = ("opendp.combinators", "opendp.domains", "opendp.measurements", "opendp.measures", "opendp.metrics",
                "opendp.typing", "opendp._data", "dp_accounting", "sqlite3", "threadpoolctl",
                "dpfed_core.privacy.store", "dpfed_core.privacy.odometer", "dpfed_core.privacy.fingerprint",
                "dpfed_core.privacy.budget_records", "dpfed_core.privacy.accounting", "dpfed_core.privacy.catalogue",
                "dpfed_core.models.blend", "dpfed_core.models.factorization", "dpfed_core.models.shared_items")
#: What a prototype method's tasks load besides (k-means, the prototypes' recovery). Not warmed for
#: a summable method: its tasks never import them, and scikit-learn alone (with the pandas and
#: pyarrow it pulls in) is ≈ 1 CPU-s of the zygote's start.
PROTOTYPE_WARM_MODULES = ("sklearn.cluster", "scipy.stats", "scipy.optimize", "scipy.sparse.linalg", "scipy.linalg")


#: Environment variable with the run's public config and entity count (JSON, set by the launcher):
#: the warm interpreter computes the method's noise calibration once, and every task fork inherits it.
WARM_RUN_ENV = "DPFED_WARM_RUN"


def warm_modules(run_json: str | None) -> tuple[str, ...]:
    """The modules the zygote imports for a run (``run_json``: the run's public JSON, None when not
    known): every method's, and a prototype method's extra ones unless the run is a summable one."""
    if run_json:
        from dpfed_core.deployment.wire import config_from_json
        from dpfed_core.federation.protocol import is_summable

        try:
            if is_summable(config_from_json(run_json).method):
                return WARM_MODULES
        except Exception:  # noqa: BLE001 — not readable here: warm everything, the task reports it
            pass
    return WARM_MODULES + PROTOTYPE_WARM_MODULES


def _warm_up() -> None:
    import importlib
    import json

    import flwr.supercore.cli.flower_superexec  # noqa: F401
    import flwr.superlink.cli  # noqa: F401
    import flwr.supernode.cli.flower_supernode  # noqa: F401

    import dpfed_core.deployment.client_app  # noqa: F401
    import dpfed_core.deployment.server_app  # noqa: F401
    from dpfed_core.deployment import control, shamir

    control.warm()  # the launcher's Control API requests are forks of this interpreter too

    # A local deployment is one operator's processes on one machine: no other party can time a
    # node's Shamir arithmetic, so it runs without the timing hardening (bit-identical results,
    # deployment.shamir). A real site runs the stock flower-supernode and keeps pycryptodome's.
    shamir.install_simulation_arithmetic()
    warm = os.environ.get(WARM_RUN_ENV)
    try:
        run = json.loads(warm) if warm else None
    except ValueError:
        run = None
    for name in warm_modules(run["config"] if isinstance(run, dict) and "config" in run else None):
        try:
            importlib.import_module(name)
        except ImportError:  # optional for some methods; imported by the task if it needs it
            pass
    if isinstance(run, dict):
        from dpfed_core.deployment.hooks import warm_calibration

        try:
            warm_calibration(run["config"], run["n_entities"], run.get("value_max"))
        except Exception:  # noqa: BLE001 — only a cache: a task computes (and reports) it itself
            pass


def run_zygote(argv: list[str]) -> None:
    """One warm interpreter that forks every site of a local deployment.

    Reads JSON requests on stdin — ``{"id", "role": "node"|"link"|"control", "argv", "log"}`` — and
    forks a child per request that starts a session of its own (its own process group), gets SIGKILL
    when the zygote dies, sends its output to ``log`` and runs :func:`run_with_executor` (a site or
    the SuperLink) or :func:`~dpfed_core.deployment.control.run_control` (one Control API request). Answers
    ``{"id", "pid"}`` on stdout, and ``{"exit": pid, "code"}`` when a child ends. Exits when stdin
    closes (the launcher is gone or done); its children then die with it (parent-death signal).
    Python, Flower, NumPy/SciPy, OpenDP, scikit-learn and the apps are imported once for all sites
    instead of once per process: on a 2-core machine that is most of a deployment's start-up."""
    import json
    import select

    _die_with_parent()
    _warm_up()
    out = sys.stdout

    def say(obj: dict) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    say({"ready": True, "pid": os.getpid()})
    stdin = sys.stdin
    while True:
        ready, _, _ = select.select([stdin], [], [], 0.1)
        if ready:
            line = stdin.readline()
            if not line:
                return
            req = json.loads(line)
            pid = os.fork()
            if pid == 0:
                _child(req)
            say({"id": req["id"], "pid": pid})
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            say({"exit": pid, "code": os.waitstatus_to_exitcode(status)})


def _child(req: dict) -> None:
    """In a fork of the zygote: become a site process (never returns)."""
    code = 0
    try:
        os.setsid()
        _die_with_parent()
        fd = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        sys.stdin = open(0, closefd=False)
        if req["role"] == "control":  # one Control API request for the launcher (deployment.control)
            from dpfed_core.deployment.control import run_control

            run_control(list(req["argv"]))
        else:
            run_with_executor(req["role"], list(req["argv"]))
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 — printed to the site's log
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


ROLES = {"zygote": run_zygote, "supernode": run_supernode, "superexec": run_superexec,
         "node": lambda a: run_with_executor("node", a), "link": lambda a: run_with_executor("link", a)}


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in ROLES:
        raise SystemExit(f"usage: python -m dpfed_core.deployment.node_runtime {{{'|'.join(ROLES)}}} <args>")
    ROLES[argv[0]](argv[1:])


if __name__ == "__main__":
    main()
