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
