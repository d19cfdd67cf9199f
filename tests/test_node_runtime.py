"""The executor's wake-up clock of a local deployment: a SIGUSR1 is never lost."""
import os
import signal
import sys
import threading
import time
import types

import pytest

from dpfed_core.deployment.node_runtime import _ExecClock


def _with_clock(cap):
    old = signal.getsignal(signal.SIGUSR1)
    return _ExecClock(cap, wakeable=True), old


def test_a_signal_before_the_sleep_ends_the_next_sleep_at_once():
    clock, old = _with_clock(5.0)
    try:
        os.kill(os.getpid(), signal.SIGUSR1)  # arrives while the loop is "polling"
        t = time.monotonic()
        clock.sleep(3)
        assert time.monotonic() - t < 0.5
        clock.cap = 0.3
        t = time.monotonic()
        clock.sleep(3)  # the wake-up was consumed: this one waits the cap
        assert time.monotonic() - t >= 0.25
    finally:
        signal.signal(signal.SIGUSR1, old)


def test_a_signal_during_the_sleep_ends_it_and_an_unsignalled_sleep_waits_the_cap():
    clock, old = _with_clock(0.3)
    try:
        t = time.monotonic()
        clock.sleep(3)
        assert 0.25 < time.monotonic() - t < 2.0  # no signal: the cap, not Flower's argument
        clock.cap = 5.0
        threading.Timer(0.2, os.kill, (os.getpid(), signal.SIGUSR1)).start()
        t = time.monotonic()
        clock.sleep(3)
        assert time.monotonic() - t < 2.0
    finally:
        signal.signal(signal.SIGUSR1, old)


def test_every_replaced_flower_internal_is_the_pinned_code():
    """At the pinned versions every internal dpfed replaces is the code its replacement was written
    against (the fingerprints in flower_internals); a different Flower shows up here first."""
    from dpfed_core.deployment import flower_internals as fi

    assert fi.report() == {name: "ok" for name in fi.INTERNALS}


def test_a_changed_internal_keeps_the_stock_code_and_says_why(monkeypatch, capsys):
    """A Flower whose reconstruction function differs (or another version): dpfed does not replace
    it, the stock function stays in place, and one line names the internal and the reason."""
    import flwr.common.secure_aggregation.crypto.shamir as flwr_shamir

    from dpfed_core.deployment import flower_internals as fi, shamir

    def their_combine(shares):  # a "new Flower" body
        return b"\0" * 16

    monkeypatch.setattr(flwr_shamir, "_shamir_combine", their_combine)
    monkeypatch.setattr(fi, "_WARNED", set())
    assert "changed (source fingerprint" in fi.check("shamir-combine")
    shamir.install()
    assert flwr_shamir._shamir_combine is their_combine
    err = capsys.readouterr().err
    assert "'shamir-combine'" in err and "stock code path" in err
    monkeypatch.setitem(fi.PINNED, "flwr", "1.41.0")
    assert "flwr 1.42.0 is installed" in fi.check("supernode-sleeps")
    assert not fi.usable("supernode-sleeps")


def test_an_internal_is_taken_as_replaced_only_by_the_object_recorded_and_every_other_state_is_named(
        monkeypatch, capsys):
    """A check after dpfed's replacement is in place finds dpfed's own object (a fork of a process that replaced
    it), and only that object: any other code there is fingerprinted. A missing package, a missing name, another
    version and changed code each say what differs, in the check, the report and one stderr line per
    internal, however often it is asked."""
    import importlib.metadata

    import flwr.supernode.start_client_internal as sci

    from dpfed_core.deployment import flower_internals as fi

    monkeypatch.setattr(fi, "_REPLACED", {})
    monkeypatch.setattr(fi, "_WARNED", set())

    def ours(*a, **k):
        return None

    def theirs(*a, **k):  # code of another Flower in the same place
        return 1

    monkeypatch.setattr(sci, "_push_messages", ours)
    assert "changed (source fingerprint" in fi.check("supernode-push")  # ours, but not recorded as ours
    fi.replaced("supernode-push", ours)
    assert fi.check("supernode-push") is None
    monkeypatch.setattr(sci, "_push_messages", theirs)
    assert "changed (source fingerprint" in fi.check("supernode-push")
    assert fi.report()["supernode-push"].startswith("flwr.supernode.start_client_internal._push_messages changed")
    assert not fi.usable("supernode-push") and not fi.usable("supernode-push")
    lines = [ln for ln in capsys.readouterr().err.splitlines() if "'supernode-push'" in ln]
    assert len(lines) == 1 and "stock code path" in lines[0]

    monkeypatch.delattr(sci, "_pull_and_store_message")
    assert "_pull_and_store_message is gone" in fi.check("supernode-pull")

    def not_installed(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(fi, "version", not_installed)
    assert fi.check("gf128-mul") == "pycryptodome is not installed"


def test_a_flags_value_is_read_in_either_form_and_a_flag_without_one_is_none():
    from dpfed_core.deployment.node_runtime import _flag_value

    assert _flag_value(["--insecure", "--port", "9093"], "--port") == "9093"
    assert _flag_value(["--port=9093", "--superlink", "127.0.0.1:9092"], "--port") == "9093"
    assert _flag_value(["--superlink=127.0.0.1:9092"], "--superlink") == "127.0.0.1:9092"
    assert _flag_value(["--insecure", "--port"], "--port") is None  # the last word: no value follows
    assert _flag_value(["--portal", "1"], "--port") is None


def test_a_summable_runs_zygote_warms_without_the_prototype_methods_libraries():
    from dpfed_core.config import RunConfig
    from dpfed_core.deployment.node_runtime import PROTOTYPE_WARM_MODULES, WARM_MODULES, warm_modules
    from dpfed_core.deployment.wire import run_json

    assert warm_modules(run_json(RunConfig(method="dp-popularity", epsilon=1.0), "declared", 10)) == WARM_MODULES
    every = WARM_MODULES + PROTOTYPE_WARM_MODULES
    assert warm_modules(run_json(RunConfig(method="kmeans"), "declared", 10)) == every
    assert warm_modules(None) == every and warm_modules("not json") == every


class _Bell:
    """A doorbell that never rings: every wait times out at once (and says how long it was asked)."""

    def __init__(self):
        self.waits = []

    def wait(self, timeout):
        self.waits.append(timeout)
        return False


def test_a_nodes_idle_poll_backs_off_from_its_floor_to_its_cap_and_a_message_resets_it(monkeypatch):
    from dpfed_core.deployment import node_runtime as nr

    slept = []
    monkeypatch.setattr(nr.time, "sleep", slept.append)
    clock = nr._Clock()
    for _ in range(7):
        clock.sleep(nr._FLOWER_IDLE_SLEEP)
    assert slept == pytest.approx([0.02, 0.04, 0.08, 0.16, 0.32, 0.5, 0.5])
    clock.activity()
    slept.clear()
    clock.sleep(nr._FLOWER_IDLE_SLEEP)
    clock.sleep(nr._FLOWER_REPLY_SLEEP)  # Flower's check for the ClientApp's reply: 5 ms
    clock.sleep(1.25)  # any other wait is Flower's own
    assert slept == pytest.approx([0.02, 0.005, 1.25])
    # with a doorbell the poll is only the fallback: no fast ramp, the rung cap from the start
    bell = _Bell()
    rung = nr._Clock(bell)
    rung.sleep(nr._FLOWER_IDLE_SLEEP)
    rung.activity()
    rung.sleep(nr._FLOWER_IDLE_SLEEP)
    assert bell.waits == [nr.IDLE_POLL_RUNG_MAX, nr.IDLE_POLL_RUNG_MAX]


def test_a_node_reports_no_run_time_of_its_tasks_to_the_superlink(monkeypatch):
    """Flower sends each reply with the ClientApp's run time: how long a site's task took depends on
    its data (its rows, its items), which is not the coordinator's to know. A node started by dpfed
    reports 0 for every message, and still pulls and pushes through Flower's own functions."""
    import flwr.supernode.cli.flower_supernode  # noqa: F401 (the package's name is also its function's)
    import flwr.supernode.start_client_internal as sci
    from flwr.supernode.nodestate.in_memory_nodestate import InMemoryNodeState

    from dpfed_core.deployment import flower_internals as fi
    from dpfed_core.deployment import node_runtime as rt

    # every Flower internal the node replaces is put back after the test
    for attr in ("time", "_push_messages", "_pull_and_store_message"):
        monkeypatch.setattr(sci, attr, getattr(sci, attr))
    monkeypatch.setattr(InMemoryNodeState, "get_message_processing_duration",
                        InMemoryNodeState.get_message_processing_duration)
    monkeypatch.setattr(fi, "_REPLACED", dict(fi._REPLACED))
    monkeypatch.setattr(sys, "argv", list(sys.argv))
    started = []
    monkeypatch.setattr(sys.modules["flwr.supernode.cli.flower_supernode"], "flower_supernode",
                        lambda: started.append(list(sys.argv)))
    rt.run_supernode(["--insecure"])
    assert started == [["flower-supernode", "--insecure"]]
    assert InMemoryNodeState.get_message_processing_duration(object(), "a message id") == 0.0


def _free_udp_port():
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_doorbell_listens_on_loopback_only_and_only_when_doorbells_are_on_and_a_port_is_given(monkeypatch):
    from dpfed_core.deployment import doorbell

    port = _free_udp_port()
    monkeypatch.delenv(doorbell.ENV, raising=False)
    assert not doorbell.enabled() and doorbell.Doorbell.open(port) is None  # a real site: no doorbell
    monkeypatch.setenv(doorbell.ENV, "0")
    assert not doorbell.enabled() and doorbell.Doorbell.open(port) is None
    monkeypatch.setenv(doorbell.ENV, "1")
    assert doorbell.Doorbell.open(None) is None and doorbell.Doorbell.open(0) is None  # no port: just poll
    bell = doorbell.Doorbell.open(port)
    try:
        assert bell.sock.getsockname() == ("127.0.0.1", port)  # never reachable from another host
        assert doorbell.Doorbell.open(port) is None  # a port taken: the caller polls, nothing raises
    finally:
        bell.close()


def test_a_ring_ends_one_wait_of_every_bell_rung_and_several_rings_are_one(monkeypatch):
    from dpfed_core.deployment import doorbell

    monkeypatch.setenv(doorbell.ENV, "1")
    a, b = doorbell.Doorbell(_free_udp_port()), doorbell.Doorbell(_free_udp_port())
    pa, pb = a.sock.getsockname()[1], b.sock.getsockname()[1]
    try:
        assert not a.wait(0.05)  # not rung: the wait times out
        assert not a.wait(-1.0)  # a deadline already past is a poll, not an error
        doorbell.ring([0, pa, pb])  # a port no datagram can reach does not stop the others
        time.sleep(0.05)
        assert a.wait(1.0) and b.wait(1.0)
        for _ in range(3):
            doorbell.ring([pa])
        time.sleep(0.05)
        assert a.wait(1.0)
        assert not a.wait(0.05)  # the three rings were drained by the first wait
        monkeypatch.delenv(doorbell.ENV)
        doorbell.ring([pa])  # doorbells off: nothing is sent
        time.sleep(0.05)
        assert not a.wait(0.05)
    finally:
        a.close()
        b.close()


_TERM_SCRIPTS = {
    # ends at SIGTERM at once (the default action)
    "quick": "print('ready', flush=True)\nimport time\ntime.sleep(60)",
    # cleans up for a moment after SIGTERM, then exits 0
    "graceful": ("import signal, sys, time\n"
                 "def stop(*_):\n    time.sleep(0.5)\n    sys.exit(0)\n"
                 "signal.signal(signal.SIGTERM, stop)\nprint('ready', flush=True)\ntime.sleep(60)"),
    # ignores SIGTERM: only SIGKILL ends it
    "stubborn": ("import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                 "print('ready', flush=True)\ntime.sleep(60)"),
}


def _groups(*kinds):
    """Each kind's process in a session (and process group) of its own, reaped by a thread as soon as it
    ends (the watchdog's groups are never its children: a zombie of ours would look alive to it)."""
    import subprocess

    procs = []
    for kind in kinds:
        p = subprocess.Popen([sys.executable, "-c", _TERM_SCRIPTS[kind]], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
        assert p.stdout.readline().strip() == "ready"
        procs.append(p)
    reapers = [threading.Thread(target=p.wait, daemon=True) for p in procs]
    for t in reapers:
        t.start()
    return procs, reapers


def test_the_watchdog_gives_every_group_its_grace_after_sigterm_then_kills_what_is_left_and_removes_folders(
        tmp_path):
    from dpfed_core.deployment import watchdog

    folder = tmp_path / "run"
    (folder / "keys").mkdir(parents=True)
    (folder / "keys" / "node.key").write_text("secret")
    procs, reapers = _groups("quick", "graceful", "stubborn")
    try:
        watchdog.clean([p.pid for p in procs], [str(folder)], grace=3.0)
        for t in reapers:
            t.join(timeout=5)
        quick, graceful, stubborn = (p.returncode for p in procs)
        assert quick == -signal.SIGTERM
        assert graceful == 0  # its clean-up ran to the end within the grace
        assert stubborn == -signal.SIGKILL
        assert not folder.exists()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def test_the_watchdog_stops_waiting_once_every_group_has_ended():
    from dpfed_core.deployment import watchdog

    procs, reapers = _groups("quick")
    try:
        t = time.monotonic()
        watchdog.clean([procs[0].pid], [], grace=20.0)
        assert time.monotonic() - t < 10.0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()


def test_the_watchdog_cleans_what_its_pipe_named_unless_released_and_ignores_ctrl_c(monkeypatch, tmp_path):
    import io

    from dpfed_core.deployment import watchdog

    cleaned = []
    monkeypatch.setattr(watchdog, "clean", lambda groups, paths: cleaned.append((groups, paths)))
    old = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        monkeypatch.setattr(sys, "stdin", io.StringIO(f"group 41\ngroup 42\npath {tmp_path}/a b\nrelease\n"))
        watchdog.main()
        assert cleaned == []  # the launcher cleaned up itself
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
        monkeypatch.setattr(sys, "stdin", io.StringIO(f"group 41\ngroup 42\npath {tmp_path}/a b\n"))
        watchdog.main()  # the pipe closed without "release": the launcher died
        assert cleaned == [([41, 42], [f"{tmp_path}/a b"])]
    finally:
        signal.signal(signal.SIGINT, old)


class _Client:
    """The Control API client a forked request makes, recording what it was asked."""

    made: list = []

    def __init__(self, port, ca):
        self.port, self.ca, self.calls, self.closed = port, ca, [], False
        _Client.made.append(self)

    def register(self, keys):
        self.calls.append(("register", keys))

    def start_run(self, app_dir, overrides):
        self.calls.append(("start", app_dir, overrides))
        if "fail" in overrides:
            raise RuntimeError(overrides["fail"])
        return 7

    def stop_run(self, run_id):
        self.calls.append(("stop", run_id))

    def close(self):
        self.closed = True


def test_a_forked_control_request_is_sent_over_the_tls_it_names_and_answers_in_one_line(monkeypatch, tmp_path):
    import json
    from pathlib import Path

    from dpfed_core.deployment import control

    monkeypatch.setattr(control, "ControlClient", _Client)
    ca, answer = tmp_path / "ca.pem", tmp_path / "answer.json"

    def ask(ca, action, **args):
        control.run_control([control.control_request(5, ca, action, **args), str(answer)])
        return json.loads(answer.read_text()), _Client.made[-1]

    assert json.loads(control.control_request(5, ca, "stop", run_id=1))["ca"] == str(ca)
    out, client = ask(ca, "start", app_dir=tmp_path / "app", overrides={"config": "{}"})
    assert out == {"run_id": 7} and (client.port, client.ca) == (5, ca) and client.closed
    assert client.calls == [("start", tmp_path / "app", {"config": "{}"})]
    out, client = ask(None, "register", keys=[str(tmp_path / "n1.pub")])  # as the launcher sends them
    assert out == {} and client.ca is None and client.calls == [("register", [Path(tmp_path / "n1.pub")])]
    out, client = ask(ca, "stop", run_id=9)
    assert out == {} and client.calls == [("stop", 9)] and client.closed
    for message, said in [("the SuperLink\n  said no", "the SuperLink said no"), ("", "RuntimeError")]:
        with pytest.raises(SystemExit) as code:
            ask(ca, "start", app_dir=tmp_path / "app", overrides={"fail": message})
        assert code.value.code == 1 and _Client.made[-1].closed
        assert json.loads(answer.read_text()) == {"error": said}


class _Http:
    """A SuperLink's Control API answering as told."""

    def __init__(self, node_id=1, run_id=None, error=None):
        self.node_id, self.run_id, self.error = node_id, run_id, error

    def RegisterNode(self, request):  # noqa: N802 — Flower's names
        return types.SimpleNamespace(node_id=self.node_id)

    def StartRun(self, request):  # noqa: N802
        if self.error:
            raise self.error
        return types.SimpleNamespace(run_id=self.run_id, HasField=lambda f: f == "run_id" and self.run_id is not None)

    def StopRun(self, request):  # noqa: N802
        raise RuntimeError("run 9 is over")


def test_a_refused_node_key_a_run_without_id_and_a_rejected_app_are_errors_naming_why(tmp_path):
    pytest.importorskip("flwr")
    from flwr.supercore.fab import Fab

    from dpfed_core.deployment.control import ControlClient
    from dpfed_core.deployment.security import make_node_key
    from dpfed_core.errors import DeploymentError

    def client(**answers):
        c = ControlClient.__new__(ControlClient)
        c.client, c._fab = _Http(**answers), Fab("0" * 64, b"", {})
        return c

    key = make_node_key(tmp_path, "site_a")
    client(node_id=3).register([key.public])
    with pytest.raises(DeploymentError, match="refused the SuperNode key .*site_a.pub"):
        client(node_id=0).register([key.public])
    assert client(run_id=12).start_run(tmp_path, {}) == 12
    with pytest.raises(DeploymentError, match="no run id"):
        client(run_id=None).start_run(tmp_path, {})
    with pytest.raises(DeploymentError, match="did not accept the ServerApp: the FAB is too large"):
        client(error=RuntimeError("the FAB is too large")).start_run(tmp_path, {})
    client().stop_run(9)  # a run that is over: nothing to stop, nothing raised


def _task_spec(task_type, token: str, task_id: int):
    from flwr.supercore.superexec.executor.types import ExecutionSpec

    return ExecutionSpec(task_type=task_type, runtime_api_address="127.0.0.1:9", token=token, insecure=True,
                         root_certificates_path=None, runtime_dependency_install=False, parent_pid=None,
                         suppress_output=True, task_id=task_id)


def test_a_nodes_clientapp_task_starts_only_once_its_earlier_one_has_exited(tmp_path):
    """A ClientApp task pushes its reply, then, as it exits, the node's context (SecAgg+'s state among it);
    the next message can arrive in between, and a task started then would read the state as it was before
    the last one. The warm executor starts a node's next ClientApp task only once the earlier one has
    exited; a ServerApp task waits for nothing, and an earlier task that hangs is waited for only so long."""
    from flwr.supercore.constant import TaskType

    from dpfed_core.deployment.node_runtime import fork_executor

    log = tmp_path / "events"
    pauses = {"a": 0.4, "b": 0.0, "c": 0.4, "d": 0.0, "e": 3.0, "f": 0.0}

    def task():
        token = sys.argv[sys.argv.index("--token") + 1]
        with open(log, "a") as f:
            f.write(f"start {token}\n")
        time.sleep(pauses[token])
        with open(log, "a") as f:
            f.write(f"end {token}\n")

    def run(executor, *specs):
        log.write_text("")
        for spec in specs:
            executor.launch(spec)
        deadline = time.monotonic() + 20
        while executor.children and time.monotonic() < deadline:
            executor.reconcile()
            time.sleep(0.01)
        return log.read_text().split("\n")[:-1]

    entry = {TaskType.CLIENT_APP: ("flwr-clientapp", task), TaskType.SERVER_APP: ("flwr-serverapp", task)}
    executor = fork_executor(entry)
    assert run(executor, _task_spec(TaskType.CLIENT_APP, "a", 1), _task_spec(TaskType.CLIENT_APP, "b", 2)) == [
        "start a", "end a", "start b", "end b"]
    assert run(executor, _task_spec(TaskType.SERVER_APP, "c", 3), _task_spec(TaskType.CLIENT_APP, "d", 4)) == [
        "start c", "start d", "end d", "end c"]
    impatient = fork_executor(entry, earlier_task_wait=0.3)
    assert run(impatient, _task_spec(TaskType.CLIENT_APP, "e", 5), _task_spec(TaskType.CLIENT_APP, "f", 6)) == [
        "start e", "start f", "end f", "end e"]
