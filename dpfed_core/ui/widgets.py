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
}


def page_setup(title: str, icon: str = ":material/lock:") -> None:
    st.set_page_config(page_title=f"{title} · dpfed", page_icon=icon, layout="wide")


#: Python parameter names → the dashboard controls that set them, so an engine error names the control
#: to change (the CLI renders the same errors with its flags: dpfed_core.cli.args.CLI_NAMES).
CONTROL_NAMES = {
    "user_col": "“User” column", "item_col": "“Item” column", "value_col": "“Value” column",
    "entity_col": "“Entity from column”", "entity_from": "“Entity from column”",
    "entity_transform": "“Derived as”", "item_name_col": "“Item name” column", "value_kind": "“Values are”",
    "value_max": "“Declared maximum of one value”", "federation": "“Federation key”", "entity": "“Federation key”",
    "event_table": "“Event tables”", "events": "“Event tables”", "exclude_entities": "“Leave out entities”",
    "items": "“Item catalogue”", "drop_missing": "(fix the empty cells in the file)",
    "duplicates": "(remove the repeated rows)", "top_n": "“Top N”", "n_jobs": "parallel workers",
    "prototype_params": "the method's parameters",
}


def show_error(exc: BaseException) -> None:
    """A user-facing error as one message (never a traceback), naming the page's controls."""
    render = getattr(exc, "render", None)
    st.error(render(CONTROL_NAMES) if render else str(exc), icon=":material/error:")


# ------------------------------------------------------------------------------ caches
@st.cache_resource(max_entries=8, show_spinner=False)
def load_spec(spec: str, opts_json: str) -> FederatedDataset:
    """A dataset from a loader spec, cached by the spec and every option."""
    from dpfed_core.data.loaders import load_data

    return load_data(spec, **json.loads(opts_json))


@st.cache_resource(max_entries=8, show_spinner=False)
def load_upload(data: bytes, filename: str, opts_json: str) -> FederatedDataset:
    """A dataset from uploaded bytes (the bytes are passed as is; the loader never changes them)."""
    from dpfed_core.data.loaders import load_long_table

    return load_long_table(bytes(data), filename=filename, **json.loads(opts_json))


@st.cache_resource(max_entries=64, show_spinner=False)
def _run_cached(dataset_key: str, config_key: str, _dataset: FederatedDataset, _config: RunConfig,
                _progress: Callable | None = None):
    # Keyed by the data's content hash and the full config (seed, split and budget split included);
    # the underscore arguments are not hashed. Results are read-only by convention.
    from dpfed_core.evaluation.experiments import run_method

    return run_method(_dataset, _config, None, _progress)


def run(dataset: FederatedDataset, config: RunConfig, progress: Callable | None = None):
    """``run_method`` through the cache: (doc, MethodResult). Progress events only on a cache miss."""
    from dpfed_core.ui import engine as dash

    return _run_cached(dash.dataset_fingerprint(dataset), dash.config_key(config), dataset, config,
                       progress)


@st.cache_data(max_entries=16, show_spinner=False)
def _sweep_cached(dataset_key: str, config_key: str, epsilons: tuple, seeds: tuple, references: tuple,
                  _dataset: FederatedDataset, _config: RunConfig, _progress: Callable | None = None):
    from dpfed_core.evaluation.experiments import sweep

    return sweep(_dataset, _config, list(epsilons), list(seeds), list(references), _progress)


def run_sweep(dataset, config, epsilons, seeds, references, progress=None) -> dict:
    from dpfed_core.ui import engine as dash

    return _sweep_cached(dash.dataset_fingerprint(dataset), dash.config_key(config), tuple(epsilons),
                         tuple(seeds), tuple(references), dataset, config, progress)


# ------------------------------------------------------------------------------ state
def set_dataset(ds: FederatedDataset, source: str) -> None:
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
        set_dataset(ds, dash.SAMPLES[dash.DEFAULT_SAMPLE])
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
    with st.sidebar:
        ds = st.session_state.get(DATASET)
        if ds is not None:
            st.caption(f"**Data:** {st.session_state.get(DATASET_SOURCE, ds.name)} — "
                       f"{ds.n_users} users × {ds.n_items} items, {ds.n_entities} entities")
        r = st.session_state.get(RUN)
        if r is not None:
            from dpfed_core.ui import engine as dash

            cfg: RunConfig = r["config"]
            st.caption(f"**Last run:** {cfg.method}, ε = {dash.format_epsilon(cfg.epsilon)}, "
                       f"k = {cfg.k}, rank = {cfg.rank}, seed = {cfg.seed}")


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
