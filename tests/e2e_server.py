"""Start the real app (``streamlit run app.py``) on a free local port for browser tests and the
screenshot script. Everything it writes (server log, the SQLite store) goes under ``workdir``."""
from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def streamlit_server(workdir: Path, timeout: float = 60.0):
    """Yields (url, seconds until healthy). The store lives in ``workdir`` (env ``DPFED_STORE``)."""
    workdir = Path(workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    env = dict(os.environ, DPFED_STORE=str(workdir / "store.sqlite3"), PYTHONDONTWRITEBYTECODE="1")
    log_path = workdir / "server.log"
    t0 = time.perf_counter()
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
             "--server.port", str(port), "--server.address", "127.0.0.1",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"],
            cwd=REPO, stdout=log, stderr=subprocess.STDOUT, env=env)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.time() + timeout
            while True:
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit exited with {proc.returncode}; see {log_path}")
                try:
                    with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                        if r.read().strip() == b"ok":
                            break
                except OSError:
                    pass
                if time.time() > deadline:
                    raise RuntimeError(f"streamlit did not become healthy within {timeout:.0f} s")
                time.sleep(0.1)
            yield url, time.perf_counter() - t0
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
