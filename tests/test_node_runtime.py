"""The executor's wake-up clock of a local deployment: a SIGUSR1 is never lost."""
import os
import signal
import sys
import threading
import time

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
