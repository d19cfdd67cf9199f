"""The watchdog of a local deployment: nothing outlives the launcher.

``python …/dpfed_core/deployment/watchdog.py`` (the standard library only, started by its path so
that the package is not imported) runs in a session of its own and reads commands from
its standard input, a pipe whose other end only the launcher holds:

* ``group PGID`` — a process group the launcher started (a SuperLink, a SuperNode, an executor …);
* ``path DIR`` — a private folder to remove (shard copies, keys, logs);
* ``release`` — the launcher cleaned up itself; forget everything and exit.

When the pipe closes without ``release`` — the launcher ended by SIGKILL, a crash, or any exit
that skipped its clean-up — the watchdog sends SIGTERM to every group, SIGKILL to what is left
after :data:`GRACE` seconds, and removes every folder. A parent-death signal on each child
(``PR_SET_PDEATHSIG``) covers only direct children; Flower's own processes start grandchildren
(the executor's ClientApp/ServerApp tasks), which the process groups cover.
"""
from __future__ import annotations

import os
import shutil
import signal
import sys
import time

#: Seconds between SIGTERM and SIGKILL.
GRACE = 2.0


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except (ProcessLookupError, PermissionError):
        return False


def clean(groups: list[int], paths: list[str], grace: float = GRACE) -> None:
    """End every process group (SIGTERM, then SIGKILL) and remove every folder."""
    for g in groups:
        try:
            os.killpg(g, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            pass
    end = time.monotonic() + grace
    while time.monotonic() < end and any(_alive(g) for g in groups):
        time.sleep(0.05)
    for g in groups:
        try:
            os.killpg(g, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)


def main() -> None:
    # Ctrl-C in the launcher's terminal must not stop the watchdog before it has cleaned up.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    groups: list[int] = []
    paths: list[str] = []
    for line in sys.stdin:
        cmd, _, arg = line.strip().partition(" ")
        if cmd == "group":
            groups.append(int(arg))
        elif cmd == "path":
            paths.append(arg)
        elif cmd == "release":
            return
    clean(groups, paths)


if __name__ == "__main__":
    main()
