"""Long computations of the dashboard as background jobs with a process-wide result cache.

Why not ``st.cache_data`` / ``st.cache_resource`` with a progress callback: Streamlit records every
element a cached function creates and replays it on a cache hit; a callback that writes into an
``st.status`` created *outside* the cached function cannot be replayed and the page crashed with
``CacheReplayClosureError`` the second time a configuration ran (in any session, since the cache is
shared). Here the computation is a pure function run in a worker thread: it never touches Streamlit,
its progress goes into the :class:`Job` object (fraction done, last event, time left), and the page
polls that object from its own script thread to draw a progress bar. The cache is keyed by a content
hash of the *whole* dataset and the *whole* configuration (the caller builds the key), and a second
session asking for the same key while the job runs waits for the same job instead of starting (or
crashing on) a second one.

Nothing in this module imports Streamlit, so it is tested without a browser.
"""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

#: Phases of one federation run as fractions of the whole (so the bar moves evenly across rounds):
#: round 1 (prototypes) dominates; the server's fit and round 2 are cheaper; evaluation last.
_PHASES = {
    "round1_start": (0.0, 0.6), "round1_done": (0.0, 0.6),
    "round2_start": (0.75, 0.9), "round2_done": (0.75, 0.9),
    "individual_entity": (0.0, 0.9),
}
_POINTS = {"server_start": 0.6, "server_done": 0.72, "broadcast": 0.75, "central_start": 0.05,
           "central_done": 0.9, "evaluate_start": 0.9, "evaluate_done": 1.0}


def fraction_of(event: str, info: dict) -> float | None:
    """Fraction of the work done after ``event`` (None when the event says nothing about it)."""
    if "done" in info and "total" in info and info["total"]:
        return min(1.0, float(info["done"]) / float(info["total"]))
    if event in _PHASES and "index" in info and info.get("total"):
        lo, hi = _PHASES[event]
        step = int(info["index"]) + (1 if event.endswith("_done") else 0)
        return lo + (hi - lo) * min(1.0, step / float(info["total"]))
    if event == "fcf_round" and info.get("total"):
        return 0.9 * min(1.0, float(info.get("round", 0)) / float(info["total"]))
    return _POINTS.get(event)


@dataclass
class Job:
    """One computation: its progress while it runs and its result (or error) once it is done."""

    key: str
    label: str
    started: float = field(default_factory=time.monotonic)
    fraction: float = 0.0
    last_event: str = ""
    last_info: dict = field(default_factory=dict)
    events: list = field(default_factory=list)
    result: Any = None
    error: BaseException | None = None
    finished: float | None = None
    #: the cost model's clock (:class:`dpfed_core.evaluation.cost.RunClock`): stage and time left
    clock: Any = None
    _done: threading.Event = field(default_factory=threading.Event, repr=False)

    # -- called from the worker thread (no Streamlit here)
    def progress(self, event: str, **info) -> None:
        if self.clock is not None:
            self.clock.event(event, **info)
            if self.clock.measured:
                self.fraction = max(self.fraction, self.clock.fraction() or 0.0)
                self.last_event, self.last_info = event, info
                if len(self.events) < 10_000:
                    self.events.append((event, info))
                return
        frac = fraction_of(event, info)
        if frac is not None:
            self.fraction = max(self.fraction, frac)  # never moves backwards
        self.last_event, self.last_info = event, info
        if len(self.events) < 10_000:
            self.events.append((event, info))

    # -- called from the page
    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    @property
    def elapsed(self) -> float:
        return (self.finished or time.monotonic()) - self.started

    def seconds_left(self) -> float | None:
        """The cost model's time left when the job has a measured clock, else a linear extrapolation
        of the time left (None until 2 % of the work is done)."""
        if self.done:
            return 0.0
        if self.clock is not None and self.clock.measured:
            return self.clock.seconds_left(self.elapsed)
        if self.fraction < 0.02:
            return None
        return self.elapsed * (1.0 - self.fraction) / self.fraction

    def status_text(self) -> str:
        """e.g. ``"42 % · round 1 · hospital 03 (4/30) · 3 s elapsed · about 5 s left"``."""
        if self.clock is not None:
            return f"{self.fraction:.0%} · {self.clock.text(self.elapsed)}"
        left = self.seconds_left()
        eta = "estimating time left" if left is None else f"about {format_seconds(left)} left"
        return f"{self.fraction:.0%} · {format_seconds(self.elapsed)} elapsed · {eta}"


from dpfed_core.evaluation.cost import format_seconds  # noqa: E402,F401  (the pages' name for it)


class JobCache:
    """Process-wide LRU of jobs keyed by a caller-built content key.

    ``submit`` returns the running or finished job of a key, or starts one. Failed jobs are not kept
    (a corrected input must be able to retry). Results are shared between sessions and must be treated
    as read-only.
    """

    def __init__(self, max_entries: int = 64):
        self.max_entries = max_entries
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> Job | None:
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                self._jobs.move_to_end(key)
            return job

    def submit(self, key: str, fn: Callable[[Callable], Any], label: str = "", clock: Any = None) -> tuple[Job, bool]:
        """The job of ``key`` and whether it was already there (True: cached or already running).

        ``fn(progress)`` runs in a daemon thread; ``progress(event, **info)`` is the job's own
        recorder. It must not call Streamlit.
        """
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and not (job.done and job.error is not None):
                self._jobs.move_to_end(key)
                return job, True
            job = Job(key=key, label=label, clock=clock)
            self._jobs[key] = job
            while len(self._jobs) > self.max_entries:
                old_key, old = next(iter(self._jobs.items()))
                if not old.done:  # never evict a running job; stop trimming instead
                    break
                del self._jobs[old_key]

        def work() -> None:
            try:
                job.result = fn(job.progress)
                job.fraction = 1.0
            except BaseException as exc:  # delivered to the page, which shows it as one message
                job.error = exc
                with self._lock:
                    if self._jobs.get(key) is job:
                        del self._jobs[key]
            finally:
                job.finished = time.monotonic()
                job._done.set()

        threading.Thread(target=work, name=f"dpfed-job-{key[:12]}", daemon=True).start()
        return job, False

    def clear(self) -> None:
        with self._lock:
            self._jobs = OrderedDict((k, j) for k, j in self._jobs.items() if not j.done)

    def __len__(self) -> int:
        return len(self._jobs)


#: The dashboard's one cache (module state survives Streamlit reruns; shared by all sessions).
JOBS = JobCache()
