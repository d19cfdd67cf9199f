"""A self-contained HTML compliance report of one federation run.

Built only from the JSON result documents (:mod:`dpfed_core.evaluation.experiments`, :mod:`dpfed_core.audit.membership`),
so it can be produced from files (``python -m dpfed_core report``) as well as from the dashboard.
The file has inline CSS and one inline copy of plotly.js: it opens offline and fetches nothing.

Sections (each an ``<section id=…>``; the ids are stable and tested):

``overview``    in plain words: who sees what, what ε means for one person, the guarantee against
                the server and against the server with every other entity side by side, and the
                data's cumulative spend (when the run was charged to a budget store) with every other
                release the report includes (comparisons, sweep, audit) and each entity a
                non-private one left without an overall guarantee;
``summary``     what was run, the (ε, δ) guarantee (ledger) with its assumptions, date, version;
``scope``       what the guarantee covers and what it does not — every statement true of the
                engine: user-level DP per entity, users assumed disjoint across entities, server
                and round 2 are post-processing, which numbers are released and which are computed
                on private data for the analyst only, non-private methods labelled;
``data``        per-entity counts (users, test users, items used, interactions) — counts only;
``parameters``  every configuration value, the method's own parameters, the data's public bounds;
``privacy``     the ledger (one row per mechanism invocation) and ε per stage;
``messages``    the message log: what crossed each entity's boundary, shapes and bytes;
``utility``     the metrics of the run next to the comparison methods, with each one's privacy model;
``tradeoff``    the privacy–utility sweep (if given): chart, table, crossing ε;
``audit``       the membership-inference audit (if given): empirical ε lower bounds vs claimed ε,
                ROC curves, AUC, TPR at low FPR;
``provenance``  SHA-256 of the source documents, generation date and ``dpfed_core.__version__``.

CLI::

    python -m dpfed_core run   --data sample:clinic --method dp-prototypes --epsilon 1 --k 10 \\
        --compare central,individual,random-v,popularity,kmeans --out r.json
    python -m dpfed_core sweep --data sample:clinic --method dp-prototypes --k 10 --out s.json
    python -m dpfed_core audit --data sample:clinic --entity 0 --out a.json
    python -m dpfed_core report --run r.json --sweep s.json --audit a.json --out report.html

This module is the report's public face: it puts the sections
(:mod:`dpfed_core.reporting.report_sections`) on one self-contained page and writes it. The names
callers use alongside it — the section ids and titles, the metrics, the number formats
(:mod:`dpfed_core.reporting.report_format`) and the audit figures
(:mod:`dpfed_core.reporting.report_figures`) — are re-exported here, so one import serves the CLI, the
dashboard's pages and the tests.
"""
from __future__ import annotations

import datetime as _dt
import json
from pathlib import Path

from dpfed_core import __version__
from dpfed_core.errors import DataError
from dpfed_core.reporting.report_figures import audit_epsilon_figure, audit_roc_figure
from dpfed_core.reporting.report_format import CSS, _esc, fmt_eps, fmt_num
from dpfed_core.reporting.report_sections import (METRICS, SECTION_TITLES, SECTIONS, _audit, _data, _messages,
                                                  _overview, _parameters, _privacy, _provenance, _scope, _summary,
                                                  _tradeoff, _utility, other_releases, void_lines)

__all__ = [
    "build_report", "write_report", "report_from_session", "load_doc",
    # re-exported from their homes for the callers of this module
    "SECTIONS", "SECTION_TITLES", "METRICS", "fmt_num", "fmt_eps", "audit_roc_figure", "audit_epsilon_figure",
]


def load_doc(path: str | Path) -> dict:
    """Read a JSON result document with a clear error if it is missing or not one."""
    p = Path(path)
    if not p.is_file():
        raise DataError(f"no such result document: {p}")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{p} is not a JSON result document ({exc})") from None


def _data_words(doc: dict) -> str:
    d = doc.get("dataset", {}) or {}
    return (f"{d.get('name', '?')}: {d.get('n_users', '?')} users, {d.get('n_items', '?')} items, "
            f"{d.get('n_entities', '?')} entities")


def same_data(run_doc: dict, other: dict) -> bool:
    """Whether two result documents were computed on the same data: the name of the data's account in the
    budget store when both were charged and named alike (a store names data by its content under the store's
    secret; an older document's ``ds-`` name and a newer ``dk-`` one are not comparable), else the same shape
    (users, items, entities, interactions)."""
    keys = [(d.get("odometer") or {}).get("dataset_key") for d in (run_doc, other)]
    if all(isinstance(k, str) and k for k in keys) and keys[0][:3] == keys[1][:3]:
        return keys[0] == keys[1]
    shape = ("n_users", "n_items", "n_entities", "n_interactions")
    a, b = run_doc.get("dataset", {}) or {}, other.get("dataset", {}) or {}
    return all(a.get(k) == b.get(k) for k in shape if k in a and k in b)


def _store_of(doc: dict) -> str | None:
    return (doc.get("odometer") or {}).get("store") or None


def check_one_store(run_doc: dict, others: dict[str, dict | None]) -> None:
    """Refuse documents charged to different budget stores: each states the spend "in total" its own
    store had recorded, and a report of both would read two stores' partial totals as one history
    (neither store holds both releases). ``others``: the flag that gives each document → the document."""
    here = _store_of(run_doc)
    for flag, doc in others.items():
        there = None if doc is None else _store_of(doc)
        if here and there and here != there:
            raise DataError(f"the {flag[2:]} document was charged to the budget store {there}, the run to {here}: "
                            "each states the spend its own store recorded, so neither total would count the other's "
                            f"releases. Give documents charged to one store ({flag}), or make a report of each",
                            param=flag[2:])


def build_report(run_doc: dict, *, sweep_doc: dict | None = None, audit_doc: dict | None = None,
                 comparison: dict[str, dict] | None = None, data_summary: list[dict] | None = None,
                 dataset=None, metric: str = "mar", title: str | None = None,
                 include_plotlyjs: bool = True, generated: str | None = None, public: bool = False) -> str:
    """The compliance report as one self-contained HTML string.

    Parameters
    ----------
    run_doc : result document of one run (:func:`dpfed_core.evaluation.experiments.run_method`; may carry a
        ``comparison`` key as written by ``python -m dpfed_core run --compare …``).
    sweep_doc, audit_doc : optional sweep (:func:`~dpfed_core.evaluation.experiments.sweep`) and audit
        (:func:`~dpfed_core.audit.run_audit`) documents.
    comparison : {method: document} of comparison methods on the same split (overrides
        ``run_doc["comparison"]``), e.g. the dashboard's comparison docs.
    data_summary : per-entity counts (:meth:`FederatedDataset.summary`); taken from ``dataset`` if
        given, else from ``run_doc["entity_summary"]`` if present, else users only.
    metric : metric of the trade-off chart.
    include_plotlyjs : embed one inline copy of plotly.js (≈ 4.8 MB) and the charts; ``False``
        gives a small tables-only report.
    generated : timestamp to print (default: now, UTC).
    public : the public version: only DP outputs and public facts. No exact count, no loader notes,
        no utility metric (overall or per entity), no sweep or audit result (all computed on private
        data without noise); the guarantee, trust model, ledger and message log as in the analyst's.
    """
    if isinstance(run_doc, dict) and ("runs" in run_doc or run_doc.get("kind") in ("sweep", "audit")):
        # a sweep holds many runs: read as one it would have no ε and be called non-private
        raise DataError("the run document is a sweep's (or an audit's) result: give it as --sweep (or --audit), "
                        "and a `python -m dpfed_core run` result as --run")
    if not isinstance(run_doc, dict) or "privacy" not in run_doc or "config" not in run_doc:
        raise DataError("the run document must be a result document of `python -m dpfed_core run` "
                        "(with 'config' and 'privacy')")
    if sweep_doc is not None and "runs" not in sweep_doc:
        raise DataError("the sweep document has no 'runs'; is it a `python -m dpfed_core sweep` result?",
                        param="sweep")
    if sweep_doc is not None and not same_data(run_doc, sweep_doc):
        raise DataError(f"the sweep was computed on other data ({_data_words(sweep_doc)}) than the run "
                        f"({_data_words(run_doc)}); give a sweep of the run's data (--sweep)")
    if sweep_doc is not None:
        check_sweep_metric(sweep_doc, metric)
    if audit_doc is not None and audit_doc.get("kind") != "audit":
        raise DataError("the audit document is not a `python -m dpfed_core audit` result", param="audit")
    if audit_doc is not None and not same_data(run_doc, audit_doc):
        # its entity's void line and its charge would be stated as the run's data's
        raise DataError(f"the audit was computed on other data ({_data_words(audit_doc)}) than the run "
                        f"({_data_words(run_doc)}); give an audit of the run's data", param="audit")
    check_one_store(run_doc, {"--sweep": sweep_doc, "--audit": audit_doc})
    check_stated_guarantee(run_doc, "the run document")
    for name, doc in (comparison if comparison is not None else run_doc.get("comparison") or {}).items():
        if isinstance(doc, dict) and "privacy" in doc:
            check_stated_guarantee(doc, f"the run document's comparison {name!r}")
    if data_summary is None and dataset is not None:
        data_summary = dataset.summary()
    if data_summary is None:
        data_summary = run_doc.get("entity_summary")
    generated = generated or _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    m = run_doc.get("method", {})
    title = title or (f"dpfed compliance report — {m.get('name', run_doc['config'].get('method', ''))}"
                      + (" (public version)" if public else ""))
    # every release the spend figures count besides the run's own method, named in both versions
    others = other_releases(run_doc, comparison, sweep_doc, audit_doc)
    audit_void = void_lines([r for r in others if r["kind"] == "audit"])
    parts = [
        _overview(run_doc, public, others),
        _summary(run_doc, generated, sweep_doc, audit_doc, public, others),
        _scope(run_doc, public),
        _data(run_doc, data_summary, public),
        _parameters(run_doc),
        _privacy(run_doc, include_plotlyjs, comparison),
        _messages(run_doc, others),
        _utility(run_doc, comparison, include_plotlyjs, public),
        _tradeoff(sweep_doc, metric, include_plotlyjs, public),
        _audit(audit_doc, include_plotlyjs, public, audit_void),
        _provenance(run_doc, sweep_doc, audit_doc, generated, comparison),
    ]
    js = ""
    if include_plotlyjs:
        from plotly.offline import get_plotlyjs

        js = f"<script type='text/javascript'>{get_plotlyjs()}</script>"
    return (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<meta name='generator' content='dpfed_core {__version__}'>"
        f"<title>{_esc(title)}</title><style>{CSS}</style>{js}</head><body><main>"
        f"<header><h1>{_esc(title)}</h1><div class='muted'>Generated {generated} · dpfed_core "
        f"{__version__} · {_esc(run_doc.get('dataset', {}).get('name', ''))}</div></header>\n"
        + "\n".join(parts) + "\n</main></body></html>\n"
    )


def measured_metrics(overall: dict | None) -> list[str]:
    """The metrics of a result's ``overall`` figures, sorted: every number but the counts, a null one (undefined:
    no entity had a test user) included, as it is still one of the result's metrics."""
    return sorted(k for k, v in (overall or {}).items()
                  if k not in ("name", "n_users", "n_test_users") and (v is None or isinstance(v, (int, float))))


def check_sweep_metric(sweep_doc: dict, metric: str) -> None:
    """Refuse a trade-off metric the sweep's runs did not measure (a run ranked at another N than the
    sweep, ``--top-n``, has precision@N the sweep has not), naming the metrics they have."""
    runs = [r for r in sweep_doc.get("runs") or [] if isinstance(r, dict)]
    if all(metric in (r.get("overall") or {}) for r in runs):
        return
    have = sorted({k for r in runs for k in measured_metrics(r.get("overall"))})
    raise DataError(f"the metric {metric!r} is not one the sweep's runs measured; choose one of {', '.join(have)}",
                    param="metric")


def check_stated_guarantee(doc: dict, what: str) -> None:
    """Refuse a result document whose stated (ε, δ) — overall or per entity — is not what its own
    ledger composes to: the report prints the guarantee, so an edited or damaged figure would be
    stated as the run's. (A ledger edited consistently with it cannot be told from the document
    alone; the budget store keeps the charges that were made.)"""
    import math

    from dpfed_core.privacy.ledger import LedgerRow, compose

    p = doc.get("privacy") if isinstance(doc, dict) else None
    records = p.get("ledger") if isinstance(p, dict) else None
    if not isinstance(records, list):
        raise DataError(f"{what} has no privacy ledger (privacy.ledger), so its stated ε cannot be checked; "
                        "give the document `python -m dpfed_core run` wrote")
    try:
        delta_budget = float(p.get("requested_delta", p.get("delta", 0.0)))
        by: dict[str, list[LedgerRow]] = {}
        for r in records:
            row = LedgerRow.from_record(r)
            by.setdefault(row.entity, []).append(row)
        # each entity's rows composed as the run composed them, at its requested δ
        composed = {e: compose(rows, delta_budget)[:2] for e, rows in by.items()}
        stated = (float(p["epsilon"]), float(p["delta"]))
        per_entity = {str(r["entity"]): (float(r["epsilon"]), float(r["delta"]))
                      for r in p.get("per_entity") or []}
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DataError(f"{what} has a damaged privacy section ({type(exc).__name__}: {exc}); give the "
                        "document `python -m dpfed_core run` wrote") from None
    overall = (max((c[0] for c in composed.values()), default=0.0),
               max((c[1] for c in composed.values()), default=0.0))

    def same(a: tuple[float, float], b: tuple[float, float]) -> bool:
        return all(x == y or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-15) for x, y in zip(a, b))

    wrong = [("the run", stated, overall)] if not same(stated, overall) else []
    wrong += [(f"entity {e!r}", per_entity[e], composed.get(e, (0.0, 0.0)))
              for e in per_entity if not same(per_entity[e], composed.get(e, (0.0, 0.0)))]
    if wrong:
        who, (se, sd), (le, ld) = wrong[0]
        raise DataError(f"{what} states ε = {se:.6g}, δ = {sd:.3g} for {who}, but its own ledger composes to "
                        f"ε = {le:.6g}, δ = {ld:.3g}{f' (and {len(wrong) - 1} more figures)' if len(wrong) > 1 else ''}: "
                        "the document was edited or damaged, and a report states only what the run's ledger holds; give the document "
                        "`python -m dpfed_core run` wrote")


def write_report(path: str | Path, run_doc: dict, **kwargs) -> Path:
    """:func:`build_report` written to ``path`` (UTF-8), atomically: the report is built in memory
    and replaces ``path`` only when complete (never a 0-byte or truncated HTML). Returns the path."""
    from dpfed_core.data.atomic import atomic_write

    return atomic_write(path, build_report(run_doc, **kwargs))


def report_from_session(run: dict, *, comparison: dict | None = None, sweep: dict | None = None,
                        audit: dict | None = None, dataset=None, public: bool = False) -> bytes:
    """Report bytes for a dashboard download button from the session's objects.

    run : ``st.session_state["run"]`` (``{"doc", …}``) or a run document.
    comparison : ``st.session_state["comparison"]`` (``{"docs": {method: doc}}``) or {method: doc}.
    sweep : ``st.session_state["sweep"]`` (``{"doc"}``) or a sweep document. audit : audit document.
    """
    run_doc = run.get("doc", run) if isinstance(run, dict) else run
    comp = comparison.get("docs", comparison) if isinstance(comparison, dict) else None
    sw = sweep.get("doc", sweep) if isinstance(sweep, dict) and "runs" not in sweep else sweep
    return build_report(run_doc, comparison=comp, sweep_doc=sw, audit_doc=audit, dataset=dataset,
                        public=public).encode("utf-8")
