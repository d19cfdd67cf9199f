"""Streamlit glue shared by the pages: session state, caches, error display.

This is the only module besides ``app.py`` and ``pages/`` that imports Streamlit. It lives at the
repository root (not in ``pages/``) because Streamlit would list any ``pages/*.py`` file as a page.
Nothing here computes a result: loading goes through :mod:`dpfed_core.data.loaders`, runs through
:mod:`dpfed_core.evaluation.experiments`.
"""
from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING, Any, Callable

import streamlit as st

if TYPE_CHECKING:  # the engine is imported lazily so that Home renders before scikit-learn loads
    from dpfed_core.config import RunConfig
    from dpfed_core.data.dataset import FederatedDataset

# Session-state keys (one place, so pages agree).
DATASET = "dataset"          # FederatedDataset
DATASET_KEY = "dataset_key"  # content fingerprint of it
DATASET_SOURCE = "dataset_source"  # human description of where it came from
CONFIG = "run_config"        # RunConfig of the last federation run
RUN = "run"                  # {"doc", "result", "config"} of the last federation run
COMPARISON = "comparison"    # {"config_key", "docs": {method: doc}}
SWEEP = "sweep"              # {"key", "doc"}

PAGES = {
    "home": "app.py",
    "data": "pages/1_Data.py",
    "federate": "pages/2_Federate.py",
    "evaluate": "pages/3_Evaluate.py",
    "recommend": "pages/4_Recommend.py",
    "tradeoff": "pages/5_Trade-off.py",
    "audit": "pages/7_Privacy_audit.py",
    "history": "pages/8_History.py",
}


def page_setup(title: str, icon: str = ":material/lock:") -> None:
    # The favicon is drawn here: a ":material/…:" page icon makes the browser fetch an SVG from
    # fonts.gstatic.com, and no request may leave the machine (the nav icons use the bundled font).
    st.set_page_config(page_title=f"{title} · dpfed", page_icon=app_icon(), layout="wide")


def app_icon():
    """The dashboard's favicon (a padlock, 64 × 64), drawn locally with Pillow; no network."""
    from PIL import Image, ImageDraw

    im = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
    d = ImageDraw.Draw(im)
    d.rounded_rectangle((10, 28, 54, 60), radius=6, fill=(76, 120, 168, 255))   # body
    d.arc((18, 6, 46, 40), start=180, end=360, fill=(76, 120, 168, 255), width=6)  # shackle
    d.line((18, 23, 18, 30), fill=(76, 120, 168, 255), width=6)
    d.line((45, 23, 45, 30), fill=(76, 120, 168, 255), width=6)
    d.ellipse((28, 38, 36, 46), fill=(255, 255, 255, 255))                        # keyhole
    return im


def show_error(exc: BaseException) -> None:
    """A user-facing error as one message in the page's words (never a traceback): engine parameter
    names are replaced by the controls that set them."""
    from dpfed_core.privacy.odometer import BudgetRefused
    from dpfed_core.ui import engine as dash

    if isinstance(exc, BudgetRefused):  # its fixes named as this dashboard's controls, not CLI flags
        from dpfed_core.ui.budget import refusal_text

        st.error(dash.escape_md(refusal_text(exc)), icon=":material/error:")
        return
    st.error(dash.friendly_message(exc), icon=":material/error:")



def run_messages(doc: dict, dataset_notes=()) -> None:
    """A run's warnings (a run that learned nothing is an error banner, never a plain success) and its
    notes (those the data did not already carry), in the page's words — the same for a run in this
    process and a Flower deployment, as the CLI prints them for ``run`` and ``deploy-local``."""
    from dpfed_core.errors import DpfedError
    from dpfed_core.ui import engine as dash

    for w in doc.get("warnings", []):
        nothing = w.get("code") in dash.LEARNED_NOTHING
        (st.error if nothing else st.warning)(dash.friendly_message(DpfedError(w["text"], param=w.get("param"))),
                                              icon=":material/error:" if nothing else ":material/warning:")
    notes = [n for n in doc.get("notes", []) if n not in dataset_notes]
    if notes:
        with st.expander(f"Notes from this run ({len(notes)})"):
            for note in notes:
                st.markdown(f"- {dash.friendly_text(note)}")

# ------------------------------------------------------------------------------ caches
@st.cache_resource(max_entries=8, show_spinner=False)
def load_spec(spec: str, opts_json: str) -> FederatedDataset:
    """A dataset from a loader spec, cached by the spec and every option."""
    from dpfed_core.data.loaders import load_data

    return load_data(spec, **json.loads(opts_json))


def run_job(key: str, fn: Callable[[Callable], Any], label: str, *,
            lines: Callable[[str, dict], str | None] | None = None, container=None,
            expected_seconds: float | None = None, cache=None, clock=None) -> tuple[Any, bool]:
    """Run ``fn(progress)`` as a background job (:mod:`dpfed_core.ui.jobs`) and show its progress
    here: a bar with % done, time elapsed and time left, plus one line per event that ``lines``
    turns into text (written into ``container``, e.g. an ``st.status``). ``fn`` never touches
    Streamlit, so a cached result can be shown any number of times in any session.

    Returns (result, from_cache). Raises the job's error (a DpfedError is shown by the caller).
    """
    from dpfed_core.ui import engine as dash
    from dpfed_core.ui.jobs import JOBS, format_seconds

    job, existed = (cache or JOBS).submit(key, fn, label, clock=clock)
    if not job.done:
        where = container if container is not None else st
        bar = where.progress(0.0, text=f"{label} — starting…")
        shown = 0
        while not job.wait(0.25):
            if job.fraction == 0 and expected_seconds:
                # work that reports no progress (reading a file): % and time left from its size
                frac = min(0.95, job.elapsed / expected_seconds)
                left = max(expected_seconds - job.elapsed, 0.0)
                bar.progress(frac, text=f"{label} — {frac:.0%} · {format_seconds(job.elapsed)} elapsed · about "
                                        f"{format_seconds(left)} left (estimated from the file size)")
            else:
                # the status names entities (the stage being worked on): data, shown as text
                bar.progress(min(job.fraction, 1.0), text=f"{label} — {dash.escape_md(job.status_text())}")
            if lines is not None and container is not None:
                new = job.events[shown:]
                shown += len(new)
                for event, info in new:
                    text = lines(event, info)
                    if text:
                        container.write(text)
        if lines is not None and container is not None:
            for event, info in job.events[shown:]:
                text = lines(event, info)
                if text:
                    container.write(text)
        bar.empty()
    if job.error is not None:
        raise job.error
    return job.result, existed


ALLOW_NP = "allow_non_private"  # session key of the "Allow non-private releases" checkbox


def allow_non_private() -> bool:
    return bool(st.session_state.get(ALLOW_NP, False))


def non_private_checkbox(where: str = "") -> bool:
    """The odometer's "Allow non-private releases" control (matters only once a budget cap is set)."""
    from dpfed_core.ui.budget import ALLOW_NON_PRIVATE_LABEL

    st.session_state.setdefault(ALLOW_NP, False)
    return st.checkbox(ALLOW_NON_PRIVATE_LABEL, key=f"{ALLOW_NP}_{where}", value=allow_non_private(),
                       on_change=lambda: st.session_state.__setitem__(
                           ALLOW_NP, st.session_state[f"{ALLOW_NP}_{where}"]),
                       help="Only matters when the data owner set a budget cap (History page): then runs that "
                            "let raw data or exact statistics leave an entity (central, audits, ε = ∞) are "
                            "refused unless this is ticked. Every release is recorded either way.")


def run(dataset: FederatedDataset, config: RunConfig, *, label: str | None = None, lines=None,
        container=None, comparison: bool = False):
    """``run_method`` as a cached background job, charged to the owner's budget before it computes
    (a cached result is not a new release and costs nothing): (doc, MethodResult, from_cache).
    ``comparison``: charged as a comparison of the page's run (the kind the CLI's ``--compare`` gives)."""
    from dpfed_core.ui import engine as dash

    allow = allow_non_private()

    def compute(progress):  # a worker thread: no Streamlit in here
        from dpfed_core.evaluation.service import charged_run
        from dpfed_core.ui import history

        # a simulation (no privacy claim) opens no store unless DPFED_STORE names one
        store = None if config.simulation else history.owner_store(dataset)[0]
        doc, result, _ = charged_run(store, dataset, config, None, progress, allow_non_private=allow, save=False,
                                     comparison=comparison)
        return doc, result

    (doc, result), cached = run_job(dash.run_key(dataset, config), compute,
                                    label or f"{config.method}", lines=lines, container=container,
                                    clock=dash.clock_for(dataset, [config]))
    return doc, result, cached


class KeptUpload:
    """An uploaded file kept in the session (name and bytes), read like Streamlit's UploadedFile."""

    def __init__(self, name: str, data: bytes) -> None:
        self.name, self._data = name, data

    def getvalue(self) -> bytes:
        return self._data


def kept_upload(where, label: str, types: list[str], key: str, help: str | None = None) -> KeptUpload | None:
    """A file uploader whose file stays in the session when the user leaves the page and comes back
    (Streamlit forgets an uploader's file with its widget): the last file uploaded under ``key`` is
    used until another replaces it or the user forgets it."""
    up = where.file_uploader(label, type=types, key=key, help=help)
    store = f"{key}__kept"
    if up is not None:
        st.session_state[store] = (up.name, up.getvalue())
        return KeptUpload(up.name, up.getvalue())
    kept = st.session_state.get(store)
    if kept is None:
        return None
    c1, c2 = where.columns([3, 1])
    c1.caption(f"Using **{kept[0]}**, uploaded earlier in this session ({len(kept[1]) / 1024:,.0f} KiB); "
               "upload another file to replace it.")
    if c2.button("Forget it", key=f"{key}__forget"):
        st.session_state.pop(store, None)
        st.rerun()
    return KeptUpload(*kept)


def is_cached_run(dataset: FederatedDataset, config: RunConfig) -> bool:
    """A finished run of the same data and configuration is in the cache (pressing Run shows it and
    releases nothing)."""
    from dpfed_core.ui import engine as dash
    from dpfed_core.ui.jobs import JOBS

    job = JOBS.get(dash.run_key(dataset, config))
    return job is not None and job.done and job.error is None


def run_sweep(dataset, config, epsilons, seeds, references) -> tuple[dict, bool]:
    """``sweep`` as a cached background job, every point charged before it computes: (doc, from_cache)."""
    from dpfed_core.ui import engine as dash

    allow = allow_non_private()

    def compute(progress):  # a worker thread: no Streamlit in here
        from dpfed_core.evaluation.service import charged_sweep
        from dpfed_core.ui import history

        store = None if config.simulation else history.owner_store(dataset)[0]
        return charged_sweep(store, dataset, config, list(epsilons), list(seeds), list(references), progress,
                             allow_non_private=allow, save=False)[0]

    return run_job(dash.sweep_key(dataset, config, epsilons, seeds, references), compute,
                   f"Sweep of {config.method}",
                   clock=dash.clock_for(dataset, dash.sweep_configs(config, epsilons, seeds, references)))


#: Uploads being read / read (a few: datasets are large).
_LOADS = None
#: Reading speed of an upload (MB/s) for the time-left estimate, the geometric middle of what the loader
#: measured on an idle 2-core machine (2026-12-04): 24–30 MB/s on tables whose ids repeat (4.4 and
#: 15.4 MB of bench_intake_memory's table), 1.4 MB/s on the row limit's worst case (500,000 rows, every
#: id distinct) and 6.8 MB/s on the byte limit's (16 MiB of distinct 33-character ids). So the hint is
#: within about 4× of both ends; the file's size alone cannot tell them apart.
UPLOAD_MB_PER_S = 12.0


def _session_token() -> str:
    """A random token of this browser session (kept in its session state)."""
    import secrets

    token = st.session_state.get("_upload_owner")
    if token is None:
        token = st.session_state["_upload_owner"] = secrets.token_hex(16)
    return token


def load_upload_job(data: bytes, filename: str, opts_json: str, headerless: bool = False,
                    attributes: dict | None = None) -> FederatedDataset:
    """Build a dataset from an upload as a background job with % and time left (estimated from the
    file size: the reader reports no progress); cached by the whole upload and every option.

    ``attributes`` (``{"data", "filename", "user_col"}``): a user-attribute table joined on the user id
    (:func:`dpfed_core.data.upload.join_user_attributes`) before the entities are built, so that the
    entity can be one of its columns."""
    import hashlib

    from dpfed_core.ui.jobs import JobCache

    global _LOADS
    if _LOADS is None:
        _LOADS = JobCache(max_entries=4)
    # One session's upload is its own: keyed by this session and the file's name too, so another
    # session with the same bytes neither sees this one's file name nor learns from a cached reply that
    # these bytes were uploaded before.
    h = hashlib.sha256(bytes(data) + b"\0" + opts_json.encode() + bytes([headerless]))
    h.update(b"\0" + _session_token().encode() + b"\0" + str(filename).encode())
    if attributes is not None:
        h.update(b"\0attributes\0" + bytes(attributes["data"]) + b"\0" + str(attributes["user_col"]).encode()
                 + b"\0" + str(attributes.get("filename")).encode())
    key = "load:" + h.hexdigest()

    def compute(progress):  # a worker thread: no Streamlit in here
        from dpfed_core.data.long_table import load_long_table
        from dpfed_core.ui.upload import read_upload

        opts = json.loads(opts_json)
        if isinstance(opts.get("items"), dict):  # a declared catalogue with its names (JSON has no tuples)
            opts["items"] = (list(opts["items"]["ids"]), opts["items"]["names"])
        if attributes is not None:
            # joined by the loader, after the file is read as the CLI reads it: its lines keep their
            # numbers, and a line repeating the header is skipped before it could be a user to join
            attrs, _ = read_upload(bytes(attributes["data"]), attributes["filename"], 2, "user-attribute table")
            return load_long_table(bytes(data), filename=filename, header=not headerless,
                                   user_attributes=(attrs, attributes["user_col"]), **opts)
        if not headerless:
            return load_long_table(bytes(data), filename=filename, **opts)
        df, _ = read_upload(bytes(data), filename, encoding=opts.get("encoding"))
        return load_long_table(df, filename=filename, **opts)

    size = len(data) + (len(attributes["data"]) if attributes is not None else 0)
    expected = 1.0 + size / (UPLOAD_MB_PER_S * 1e6)
    return run_job(key, compute, f"Reading {filename}", expected_seconds=expected, cache=_LOADS)[0]


# ------------------------------------------------------------------------------ state
DATA_CLI = "dataset_cli"  # (loader spec, loader options) of the loaded data, for the CLI's --data flags


def data_cli_args() -> tuple[str | None, dict | None]:
    """(``--data`` value, loader options) of the session's data, (None, None) for an upload."""
    return st.session_state.get(DATA_CLI) or (None, None)


def set_dataset(ds: FederatedDataset, source: str, cli: tuple[str, dict] | None = None) -> None:
    from dpfed_core.ui import engine as dash

    key = dash.dataset_fingerprint(ds)
    if st.session_state.get(DATASET_KEY) != key:
        # New data: results of the old data no longer apply.
        for k in (RUN, COMPARISON, SWEEP, CONFIG, "audit_result"):
            st.session_state.pop(k, None)
        forget("fed_")
        forget("sweep_")
        forget("rec_")
        forget("audit_")
    st.session_state[DATASET] = ds
    st.session_state[DATASET_KEY] = key
    st.session_state[DATASET_SOURCE] = source
    st.session_state[DATA_CLI] = cli


def get_dataset(auto_default: bool = True) -> FederatedDataset | None:
    """The session's dataset; loads the default sample on first use so every page works directly."""
    from dpfed_core.ui import engine as dash
    from dpfed_core.errors import DpfedError

    ds = st.session_state.get(DATASET)
    if ds is None and auto_default:
        try:
            ds = load_spec(dash.DEFAULT_SAMPLE, "{}")
        except DpfedError as exc:
            show_error(exc)
            return None
        set_dataset(ds, dash.SAMPLES[dash.DEFAULT_SAMPLE], (dash.DEFAULT_SAMPLE, {}))
    return ds


def require_dataset() -> FederatedDataset:
    ds = get_dataset()
    if ds is None:
        st.page_link(PAGES["data"], label="Choose data first", icon=":material/folder_open:")
        st.stop()
    return ds


def current_config(ds: FederatedDataset) -> RunConfig:
    from dpfed_core.ui import engine as dash

    cfg = st.session_state.get(CONFIG)
    return cfg if cfg is not None else dash.default_config(ds)


def get_run() -> dict | None:
    return st.session_state.get(RUN)


def require_run(what: str) -> dict:
    r = get_run()
    if r is None:
        st.info(f"No federation run yet. Run one on the Federate page to {what}.", icon=":material/info:")
        st.page_link(PAGES["federate"], label="Go to Federate", icon=":material/hub:")
        st.stop()
    return r


def sidebar_status() -> None:
    """Data, last run and budget, on every page (called by app.py after the page ran, and on stop)."""
    from dpfed_core.ui import engine as dash

    if True:  # the caller places this (app.py: a sidebar slot)
        ds = st.session_state.get(DATASET)
        if ds is not None:
            st.caption(f"**Data:** {dash.escape_md(st.session_state.get(DATASET_SOURCE, ds.name))} — "
                       f"{ds.n_users:,} users × {ds.items_phrase()}, {ds.n_entities} entities")
        else:
            st.caption("**Data:** none loaded yet (the clinic sample loads on first use)")
        r = st.session_state.get(RUN)
        if r is not None:
            cfg: RunConfig = r["config"]
            p = r["doc"]["privacy"]
            st.caption(f"**Last run:** {dash.escape_md(dash.settings_line(cfg))}"
                       + (" · *simulation: noise reproducible, no privacy claim*" if cfg.simulation else ""))
            spent = "∞ (not private)" if not p.get("private") else \
                f"ε = {dash.format_epsilon(p['epsilon'])}, δ = {p['delta']:.3g} per entity"
            st.caption(f"**Budget of the last run (ledger):** {spent}")
        else:
            st.caption("**Last run:** none yet")
        odo = _odometer_line()
        if odo:
            st.caption(odo)


def _odometer_line() -> str | None:
    """The budget odometer's spent / cap for this dataset (one line), or None."""
    ds = st.session_state.get(DATASET)
    if ds is None:
        return None
    try:
        from dpfed_core.ui import engine as dash
        from dpfed_core.ui.budget import budget_line
        from dpfed_core.ui.history import reading_store

        with reading_store(ds, owner_key()) as (store, key):
            return f"**{dash.escape_md(budget_line(store, ds, key))}**"
    except Exception:  # the odometer must never take a page down
        return None


# ------------------------------------------------------------------------------ history
def owner_key() -> str | None:
    """The data owner's key (the odometer's content key of the session's dataset), computed once per
    dataset."""
    ds = st.session_state.get(DATASET)
    if ds is None:
        return None
    memo = st.session_state.get("_owner_key")
    if memo and memo[0] == st.session_state.get(DATASET_KEY):
        return memo[1]
    from dpfed_core.ui import history

    key = history.owner_key(ds)
    from dpfed_core.privacy.odometer import BudgetOdometer

    if not BudgetOdometer.names_no_account(ds, key):  # a store with no secret yet gets one at the first charge
        st.session_state["_owner_key"] = (st.session_state.get(DATASET_KEY), key)
    return key


def record(kind: str, doc: dict, result=None) -> None:
    """Keep a result in the owner's history (labelled from the document, as the command line's are); a
    store problem is a warning, not a crash."""
    from dpfed_core.ui import history

    ds = st.session_state.get(DATASET)
    if ds is None:
        return
    if isinstance(doc, dict) and isinstance(doc.get("odometer"), dict) and doc["odometer"].get("store", "") is None:
        return  # a simulation that opened no store (no privacy claim): not kept either
    try:
        history.save(ds, kind, doc, result, key=owner_key())
    except Exception as exc:  # e.g. a read-only disk: the result is still shown, just not kept
        st.warning(f"This result could not be saved to the history ({type(exc).__name__}); it is shown "
                   "but will not survive a reload.", icon=":material/warning:")


def fmt(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


# ------------------------------------------------------------------------------ widget memory
# Streamlit forgets a widget's value when its page is left; these keep a page's choices for the
# session (and drop them when the data changes, since their defaults depend on the data).
_STORE = "_widget_store"


def widget_default(key: str, default: Any) -> None:
    """Give a keyed widget its remembered value (or ``default``) before it is created."""
    store = st.session_state.setdefault(_STORE, {})
    if key not in st.session_state:
        st.session_state[key] = store.get(key, default)


def remember(*keys: str) -> None:
    store = st.session_state.setdefault(_STORE, {})
    for k in keys:
        if k in st.session_state:
            store[k] = st.session_state[k]


def forget(prefix: str) -> None:
    store = st.session_state.setdefault(_STORE, {})
    for k in [k for k in store if k.startswith(prefix)]:
        del store[k]
    for k in [k for k in st.session_state if isinstance(k, str) and k.startswith(prefix)]:
        del st.session_state[k]
