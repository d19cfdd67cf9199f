"""The executor's wake-up clock of a local deployment: a SIGUSR1 is never lost."""
import os
import signal
import threading
import time

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
