"""The content of the compliance report: one function per section, in page order.

Each section states what one part of the run means — the guarantee in plain words and its scope, the
data, the parameters, the ledger, the message log, utility, the trade-off, the audit, provenance — and
is badged by where its numbers come from (:data:`PUBLIC`, :data:`RELEASED`, :data:`ANALYST_ONLY`), so
the public version can leave out exactly what was computed on private data without noise. The
sections read only the result documents; :mod:`dpfed_core.reporting.report` puts them on one page.
"""
from __future__ import annotations

import hashlib
import json
import math
from typing import Sequence

from dpfed_core import __version__
from dpfed_core.evaluation.verdicts import (VERDICT_BASELINES, crossing_epsilon, crossing_lines, entity_verdict,
                                            metric_at, unproved_sweep_text, verdict_sentence)
from dpfed_core.privacy.noise import PRODUCTION_SAMPLER_LABEL, SIMULATION_LABEL
from dpfed_core.privacy.statement import FLOAT_SAMPLER_NOTE, GUARANTEE_NAME, trust_model_text
from dpfed_core.reporting.report_figures import _layout, _method_color, audit_epsilon_figure, audit_roc_figure
from dpfed_core.reporting.report_format import _badge, _esc, _f, _fig_html, fmt_eps, fmt_num, html_table, shape_text
from dpfed_core.audit.membership import UNRESOLVED_TPR, resolved

__all__ = [
    "SECTIONS", "SECTION_TITLES", "METRICS", "METRIC_LABELS", "metric_label", "run_metrics", "ANALYST_ONLY",
    "RELEASED", "PUBLIC",
    "ANALYST_NOTE", "PUBLIC_NOTE", "PUBLIC_NOT_PRIVATE_NOTE", "WITHHELD", "WITHHELD_NUMBERS", "accountant_text", "coalition_text",
    "epsilon_in_words", "who_sees_what", "cumulative_text", "released_from_messages", "k_explanation",
    "trust_text", "other_releases", "SIMULATION_NO_EPSILON",
]

#: Section ids in page order (the e2e test and the dashboard rely on them).
SECTIONS = ("overview", "summary", "scope", "data", "parameters", "privacy", "messages", "utility", "tradeoff",
            "audit", "provenance")
SECTION_TITLES = {
    "overview": "In plain words",
    "summary": "Summary",
    "scope": "Scope of the guarantee",
    "data": "Data summary per entity",
    "parameters": "Parameters",
    "privacy": "Privacy ledger and guarantee (ledger)",
    "messages": "Message log: what left each entity",
    "utility": "Utility against the comparison methods",
    "tradeoff": "Privacy–utility trade-off",
    "audit": "Empirical privacy audit (membership inference)",
    "provenance": "Provenance",
}
METRICS = ("mar", "test_rmse", "train_rmse", "precision_at_10", "recall_at_10", "ndcg_at_10")
METRIC_LABELS = {
    "mar": "MAR (↓)", "test_rmse": "test RMSE (↓)", "train_rmse": "train RMSE (↓)",
    "precision_at_10": "precision@10 (↑)", "recall_at_10": "recall@10 (↑)", "ndcg_at_10": "NDCG@10 (↑)",
}


def metric_label(metric: str) -> str:
    """A metric's header in the report: its label, a ranking metric at the run's own N (``--top-n``)
    included ("precision@5 (↑)"); an unknown name as it is."""
    return metric_at(metric, METRIC_LABELS)


def run_metrics(run: dict) -> list[str]:
    """The metrics the run measured, in the report's order: the ranking ones at the run's own N
    (``--top-n``), so none the command line printed is left out."""
    overall = run.get("overall") or {}
    top_n = (run.get("config") or {}).get("top_n", 10)
    names = [k.replace("_at_10", f"_at_{top_n}") for k in METRICS]
    return [k for k in names if k in overall]


ANALYST_ONLY = ("analyst only", "Computed on the entities' private data for the analyst's eyes only. "
                "Not released by the protocol; do not publish without separate protection.")
RELEASED = ("released", "Left the entity in the protocol (the only data-derived output the server sees).")
PUBLIC = ("public", "Parameters and accounting: chosen by the user, not computed from private data.")
#: The two downloads: the analyst's full report and a public one.
ANALYST_NOTE = ("analyst's full report: contains exact per-entity counts and named audit targets computed on "
                "private data; do not publish it")
PUBLIC_NOTE = ("public version: only differentially private outputs and public facts; exact counts, utility "
               "metrics, the sweep's and the audit's results (computed on private data without noise) are "
               "withheld; the guarantee, trust model, ledger and message log are as in the full report")
#: The public version of a run whose releases carry no guarantee (simulation noise, or none at all).
PUBLIC_NOT_PRIVATE_NOTE = ("public version of a run WITHOUT a privacy guarantee: its releases are {why}, so the "
                           "outputs shown are not differentially private; exact counts, utility metrics, the "
                           "sweep's and the audit's results are withheld as in any public version")
WITHHELD = ("Exact per-entity counts and named users are withheld from this public version (they are computed "
            "on private data without noise); the analyst's full report has them.")
#: What the public version says in place of a number computed on private data without noise.
WITHHELD_NUMBERS = ("Withheld from this public version: {what} computed on the entities' private data without "
                    "noise, which the guarantee does not cover. The analyst's full report has them.")


def _section(sid: str, body: str, badges: Sequence[tuple[str, str]] = ()) -> str:
    b = "".join(_badge(k) for k in badges)
    return (f"<section id='{sid}' data-section='{sid}'><h2>{_esc(SECTION_TITLES[sid])}{b}</h2>\n"
            f"{body}\n</section>")


def _sha(doc: dict | None) -> str:
    if doc is None:
        return "—"
    from dpfed_core.evaluation.experiments import json_safe

    return hashlib.sha256(json.dumps(json_safe(doc), sort_keys=True).encode()).hexdigest()


def _privacy_model(doc: dict) -> str:
    m = doc.get("method") or {}
    return str(m.get("privacy_model") or doc.get("privacy", {}).get("label", ""))


def _is_private(doc: dict) -> bool:
    p = doc.get("privacy") or {}
    return bool(p.get("private")) and math.isfinite(_f(p.get("epsilon")))


def accountant_text(privacy: dict) -> str:
    """How the guarantee was composed: within the run (the ledger's rows per entity) and, for a
    charged run, across the data's releases (the budget odometer)."""
    acct = privacy.get("accountant") or {}
    if isinstance(acct, str):  # documents of an earlier version
        acct = {"within_run": acct}
    text = f"within this run: {acct.get('within_run') or 'basic composition (ε and δ add up)'}"
    if acct.get("across_releases"):
        text += f"; across the data's releases: {acct['across_releases']}"
    return text


#: What a simulation states in place of an ε: noise reproducible from the seed protects no one.
SIMULATION_NO_EPSILON = "none: simulation noise is reproducible from the seed"


def coalition_text(privacy: dict) -> str:
    """ε against the server colluding with every other entity (secure aggregation weakens it to each
    entity's own noise share); the same as the guarantee without secure aggregation. A simulation
    states none (:data:`SIMULATION_NO_EPSILON`): its ε is only what production noise would give, and
    said as that."""
    t = privacy.get("trust") or {}
    c = t.get("against_server_and_other_entities") or {}
    if privacy.get("simulation"):
        would = ("" if c.get("epsilon") is None else
                 f" (would be ε = {fmt_eps(c.get('epsilon'))}, δ = {fmt_num(c.get('delta'))} with production noise)")
        return SIMULATION_NO_EPSILON + would
    if c.get("epsilon") is None:
        return "the same as the guarantee (no secure aggregation: nothing to collude against)"
    return f"ε = {fmt_eps(c.get('epsilon'))}, δ = {fmt_num(c.get('delta'))}"


def trust_text(privacy: dict) -> str:
    """The trust model in one sentence, as the report's summary and the CLI state it: that of
    :func:`~dpfed_core.privacy.statement.trust_model_text`, except for a simulation, whose seeded noise
    gives no ε against anyone — the coalition's figure is then :func:`coalition_text`'s "none"."""
    if not privacy.get("simulation"):
        return trust_model_text(privacy)
    t = privacy.get("trust") or {}
    if t.get("aggregation") == "secure":
        where = "formed in-process" if t.get("in_process") else "formed by Flower's SecAgg+"
        head = f"secure aggregation: the server learns only the sum of the entities' releases ({where})"
    else:
        head = "no secure aggregation: the server sees every entity's release"
    return f"{head}; ε against the server colluding with all other entities: {coalition_text(privacy)}"


def epsilon_in_words(eps: float, delta: float) -> str:
    """What (ε, δ) means for one person, without the vocabulary of the accounting."""
    if not math.isfinite(eps):
        return ("No protection: what left the entities can reveal a person's records exactly.")
    factor = math.exp(eps)
    ftxt = f"{factor:.3g}" if factor < 1e6 else f"{factor:.1e}"
    strength = ("strong" if eps <= 1 else "moderate" if eps <= 3 else "weak" if eps <= 10 else "very weak")
    return (f"Whatever anyone concludes from what left the entities, that conclusion is at most {ftxt} times "
            f"(e^ε, ε = {fmt_eps(eps)}) more likely because one given person's records were used than if they "
            f"had not been — except with a chance of δ = {fmt_num(delta)}. In common practice ε ≤ 1 is "
            f"strong protection, 1–3 moderate, 3–10 weak and above 10 very weak; this is {strength}.")


def _version_note(run: dict, public: bool) -> str:
    if not public:
        return ANALYST_NOTE
    p = run.get("privacy", {})
    if not _is_private(run):
        return PUBLIC_NOT_PRIVATE_NOTE.format(why="exact (a non-private method or ε = ∞)")
    if p.get("simulation"):
        return PUBLIC_NOT_PRIVATE_NOTE.format(why="noisy with noise reproducible from the seed (simulation)")
    return PUBLIC_NOTE


def who_sees_what(run: dict, public: bool) -> list[tuple[str, str]]:
    """(who, what they see) for the first screen, from the run's trust model and message log."""
    p = run.get("privacy", {})
    private = _is_private(run)
    secure = (p.get("trust") or {}).get("aggregation") == "secure"
    to_server = [m for m in run.get("messages") or [] if m.get("receiver") == "server"]
    # a message logged with no array (a decision, an acknowledgement, SecAgg+'s keys) releases no data
    contents = sorted({str(m.get("content", "")) for m in to_server if m.get("shape", []) is not None})
    protocol = sorted({str(m.get("content", "")) for m in to_server if m.get("shape", []) is None})
    sent = ", ".join(contents) or "nothing"
    kind = ("exact (NOT private)" if not private else
            "noisy (simulation: noise reproducible from the seed, NOT private)" if p.get("simulation") else
            "noisy (differentially private)")
    server = (f"only the sum over entities of their {kind} releases ({sent}); no single entity's release"
              if secure else f"each entity's {kind} release ({sent})")
    if protocol:
        server += f"; and the protocol's messages, which carry no data array ({', '.join(protocol)})"
    rows = [("Each entity (site)", "its own people's records, its own model and its own recommendations; none "
                                   "of these ever leave it"),
            ("The server", server),
            ("Every entity, in return", "the shared item representation the server computed from what it "
                                        "received (no new privacy cost)")]
    if public:
        rows.append(("Readers of this report", "the guarantee, the privacy ledger, the messages' shapes and sizes "
                                               "and the parameters; no number computed on the private data"
                     + ("" if private and not p.get("simulation") else
                        " without noise — but the run's releases are " + (
                            "noisy with noise reproducible from its seed (simulation)" if private
                            else "exact (non-private)") + ": nothing in it is differentially private")))
    else:
        rows.append(("Readers of this report (analyst's version)",
                     "also exact counts, utility metrics and audit results computed on the private data; "
                     "those are not covered by the guarantee — publish the public version instead"))
    return rows


def _most_spent(acct: dict, name=str) -> str:
    """Who the store's figure is of: every entity when they all spent alike, else the most-spent one."""
    if acct.get("every_entity_alike"):
        return "every entity"
    ent = acct.get("most_spent_entity")
    return f"the most-spent entity{f' ({name(ent)})' if ent else ''}"


def cumulative_text(privacy: dict) -> str:
    """The data's cumulative spend as the budget store recorded it, or why it is not known here."""
    acct = privacy.get("accountant") or {}
    if isinstance(acct, dict) and acct.get("across_releases"):
        dlt = acct.get("delta")
        at = f" at δ = {float(dlt):.3g} (the budget's δ, at which every release composes)" if dlt else ""
        spent = (f"{_most_spent(acct, _esc)} has spent ε = {fmt_eps(acct.get('spent_epsilon'))}{at} on these data "
                 "in total, over every release recorded in the budget store up to this run")
        later = ("(how releases compose: the summary's accountant, below; a later release is not counted here — "
                 "<code>python -m dpfed_core budget show --data …</code> prints the spend as it stands)")
        void = [str(e) for e in acct.get("non_private_entities") or []]
        if not void:
            return (f"After this run {spent}: this is what one person there is protected at by everything released "
                    f"until then {later}.")
        # a non-private release (a simulation run on people's records included) voids the guarantee of the
        # entities it touched: said first, and the ε said to be the DP releases' alone
        names = ", ".join(_esc(e) for e in void[:5]) + (f" and {len(void) - 5} more" if len(void) > 5 else "")
        return (f"<b>After this run there is no overall guarantee for the people of {len(void)} "
                f"entit{'y' if len(void) == 1 else 'ies'} ({names}): non-private releases (ε = ∞) are recorded on "
                f"these data for them.</b> Counting the DP releases alone, {spent}; for an entity without a "
                f"non-private release this is what one person there is protected at {later}.")
    return ("This run was not charged to a budget store, so the data's cumulative spend is not known to this "
            "report; <code>python -m dpfed_core budget show --data …</code> prints it for a dataset.")


def _entity_names(run: dict) -> list[str]:
    names = [str(e.get("name")) for e in run.get("entities") or [] if e.get("name") is not None]
    return names or sorted({str(r.get("entity")) for r in (run.get("privacy") or {}).get("ledger") or []})


def _charge_kind(doc: dict) -> str:
    """How a release is charged to a budget: "none" (nothing left an entity), "dp" (its ledger's
    (ε, δ) per entity) or "void" (exact data or no user-level claim left the entities: ε = ∞)."""
    model = (doc.get("method") or {}).get("privacy_model_type")
    p = doc.get("privacy") or {}
    if model == "NO_RELEASE" or (model is None and _is_private(doc) and _f(p.get("epsilon")) == 0
                                 and not p.get("ledger")):
        return "none"
    return "dp" if model in (None, "FEDERATED_USER_DP") and _is_private(doc) else "void"


def _spend_after(doc: dict) -> str:
    """The budget store's figure a document recorded after its own release ("" when it has none)."""
    acct = (doc.get("privacy") or {}).get("accountant") or {}
    if not isinstance(acct, dict) or not acct.get("across_releases"):
        return ""
    return (f"after it {_most_spent(acct)} had spent ε = "
            f"{fmt_eps(acct.get('spent_epsilon'))} on these data in total (budget store)")


def other_releases(run: dict, comparison: dict[str, dict] | None = None, sweep: dict | None = None,
                   audit: dict | None = None) -> list[dict]:
    """Every release this report includes besides the run's own method, one row each: the comparison
    methods, the sweep, the audit — what was released, by which method, at which ε, what the budget
    store says of it, and ``void``: the entities a non-private release left without an overall
    guarantee. Built from public facts only (methods, ε, δ, the grid, entity names): the report's
    spend figures count these releases, so they are named in both versions. ``kind``: "comparison",
    "sweep" or "audit"."""
    rows: list[dict] = []
    names = _entity_names(run)
    simulation = bool((run.get("privacy") or {}).get("simulation"))
    charged_with_run = bool((run.get("odometer") or {}).get("store"))
    # a simulation on generated data has its releases recorded in the store, and charged nothing
    recorded_only = simulation and bool((run.get("odometer") or {}).get("simulation_not_charged"))
    main = next(iter(_comparison_docs(run, comparison)))
    for name, d in _comparison_docs(run, comparison).items():
        if name == main:
            continue
        p = d.get("privacy") or {}
        kind = _charge_kind(d)
        if kind == "none":  # e.g. local: nothing left an entity, so nothing to name or count
            continue
        spend = _spend_after(d) or (
            "simulation: not charged" if recorded_only and comparison is None
            else "charged with this run: counted in the run's figure" if charged_with_run and comparison is None
            else "not charged to a budget store")
        if kind == "dp":
            eps = f"ε = {fmt_eps(p.get('epsilon'))}, δ = {fmt_num(p.get('delta'))}"
            void = []
        else:
            eps, void = "∞ (non-private release)", names
        if simulation:
            eps += f" — {SIMULATION_LABEL}"
        rows.append({"kind": "comparison", "release": f"comparison {name}", "method": f"{name} — {_privacy_model(d)}",
                     "epsilon": eps, "spend": spend, "void": void, "what": f"the comparison {name}"})
    if sweep:
        cfg = sweep.get("config") or {}
        grid = sweep.get("epsilons") or sweep.get("grid") or []
        refs = [str(r) for r in sweep.get("references") or []]
        # an ε = ∞ point or a non-private reference released every entity's exact data (the store's
        # list of voided entities would also name those of earlier releases: read the sweep's own runs)
        void = names if any(not _is_private(r) for r in sweep.get("runs") or []) else []
        rows.append({"kind": "sweep", "release": "sweep", "method": f"{cfg.get('method', '—')}"
                                                   + (f", references {', '.join(refs)}" if refs else ""),
                     "epsilon": f"ε ∈ {{{', '.join(fmt_num(e) for e in grid)}}} × {len(sweep.get('seeds') or [])} "
                                f"seed(s), δ = {fmt_num(cfg.get('delta'))}"
                                + (f" — {SIMULATION_LABEL}" if cfg.get("simulation") else ""),
                     "spend": _spend_after(sweep) or ("simulation: not charged" if cfg.get("simulation")
                                                      else _sweep_not_recorded(sweep)),
                     "void": void, "what": "a point or reference of the sweep included here"})
    if audit:
        cfg = audit.get("config") or {}
        target = str((audit.get("entity") or {}).get("name", "?"))
        methods = [str(m) for m in cfg.get("methods") or []]
        reads_all = cfg.get("others") == "data" and _any_summable(methods)
        rows.append({"kind": "audit", "release": f"membership-inference audit of entity {target}",
                     "method": ", ".join(methods),
                     "epsilon": "∞ (non-private: the audit reruns the mechanism on the exact rows)",
                     "spend": ("recorded in the budget store as ε = ∞" if (audit.get("odometer") or {}).get("store")
                               else "not recorded in a budget store"),
                     "void": (names or [target]) if reads_all else [target],
                     "what": "the membership-inference audit included here"})
    return rows


def audit_attacker_view(cfg: dict) -> str:
    """What the audit's attacker sees, from the audit's own configuration: a prototype method's released
    prototypes; a summable method's noisy statistics — the entity's own release without secure
    aggregation, only the sum over the entities with it (and who the other entities were)."""
    methods = list(cfg.get("methods") or [])
    summable = [m for m in methods if _any_summable([m])]
    prototype = [m for m in methods if m not in summable]
    parts = []
    if prototype:
        parts.append("the released prototypes" + (f" ({', '.join(prototype)})" if summable else ""))
    if summable:
        if cfg.get("aggregation") == "secure":
            others = cfg.get("others_label")
            seen = ("the sum of every entity's noisy statistics under secure aggregation"
                    + (f", the other entities being {others}" if others else ""))
        else:
            seen = "the entity's own noisy statistics (no secure aggregation)"
        parts.append(f"{seen} ({', '.join(summable)})" if prototype else seen)
    return " or ".join(parts) if parts else "what the method releases"


def _any_summable(methods: list[str]) -> bool:
    from dpfed_core.audit.membership import is_summable

    return any(is_summable(m) for m in methods)


def void_lines(rows: list[dict]) -> list[str]:
    """"Entity X has no overall guarantee: a non-private release (…)", one line per release that voided
    an entity's guarantee, naming its entities (HTML-escaped); entity names are public inputs."""
    out = []
    for r in rows:
        void = [str(e) for e in r["void"]]
        if void:
            one = len(void) == 1
            out.append(f"Entit{'y' if one else 'ies'} {_esc(', '.join(void))} {'has' if one else 'have'} no overall "
                       f"guarantee: a non-private release ({_esc(r['what'])}).")
    return out


def _releases_table(rows: list[dict]) -> str:
    return html_table(rows, [("release", "release"), ("method", "method"), ("epsilon", "ε per entity"),
                             ("spend", "budget store")], scroll=True)


def _overview(run: dict, public: bool, others: list[dict] | None = None) -> str:
    p = run.get("privacy", {})
    eps, dlt = _f(p.get("epsilon")), _f(p.get("delta"))
    trust = p.get("trust") or {}
    secure = trust.get("aggregation") == "secure"
    coal = (trust.get("against_server_and_other_entities") or {})
    c_eps = _f(coal.get("epsilon")) if secure and coal.get("epsilon") is not None else eps
    c_dlt = _f(coal.get("delta")) if secure and coal.get("delta") is not None else dlt
    sim = bool(p.get("simulation"))
    if not _is_private(run):
        head = ("<div class='callout bad'><b>This run is NOT private.</b> Exact data-derived values left the "
                "entities; no one is protected by a privacy guarantee.</div>")
    elif sim:
        head = (f"<div class='callout bad'><b>{_esc(SIMULATION_LABEL)}.</b> The noise was drawn from the seed: "
                "no privacy guarantee holds for this run.</div>")
    else:
        head = ""
    boxes = ""
    if _is_private(run) and not sim:
        same = not secure or c_eps == eps
        boxes = (
            "<div class='figures'>"
            f"<div class='figure'><span class='muted small'>Against the server and anyone reading what it "
            f"received</span><span class='num'>ε = {fmt_eps(eps)}</span>δ = {fmt_num(dlt)} per person, "
            "per entity</div>"
            f"<div class='figure{'' if same else ' bad'}'><span class='muted small'>If the server and all other "
            f"entities collude against one entity</span><span class='num'>ε = {fmt_eps(c_eps)}</span>δ = "
            f"{fmt_num(c_dlt)} per person"
            + ("" if not secure else " — secure aggregation hides each entity's release only while the others "
               "do not reveal their shares") + "</div></div>")
        boxes += f"<p><b>What ε means for one person.</b> {_esc(epsilon_in_words(eps, dlt))}</p>"
        if not same:
            boxes += f"<p>Under collusion: {_esc(epsilon_in_words(c_eps, c_dlt))}</p>"
        boxes += ("<p>A person with records at two entities is protected at each separately; together their "
                  "protection is the sum of the two ε.</p>")
    rows = [{"who": a, "what": b} for a, b in who_sees_what(run, public)]
    others = others or []
    more = ""
    if others:
        more = ("<p>Besides the run's own method this report includes these releases of the same data; the "
                "budget store's figures count each one that was charged:</p><ul>"
                + "".join(f"<li>{_esc(r['release'])} ({_esc(r['method'])}; {_esc(r['epsilon'])}): {_esc(r['spend'])}"
                          "</li>" for r in others) + "</ul>")
        more += "".join(f"<p class='verdict-bad'><b>{line}</b></p>" for line in void_lines(others))
    body = (head + boxes + "<h3>Who sees what</h3>" + html_table(rows, [("who", "who"), ("what", "sees")], cls="kv")
            + f"<h3>The data's cumulative spend</h3><p>{cumulative_text(p)}</p>" + more
            + "<p class='muted small'>The accounting behind these figures (ledger, composition, message log) "
              "follows below.</p>")
    return _section("overview", body, [PUBLIC])


def _summary(run: dict, generated: str, sweep: dict | None, audit: dict | None, public: bool = False,
             others: list[dict] | None = None) -> str:
    p = run.get("privacy", {})
    ds = run.get("dataset", {})
    m = run.get("method", {})
    cfg = run.get("config", {})
    if _is_private(run) and p.get("simulation"):
        g = (f"<div class='callout bad'><b>{_esc(SIMULATION_LABEL)}.</b> The noise of this run is a function "
             f"of the seed; no differential-privacy guarantee holds (configured budget "
             f"({fmt_eps(p.get('epsilon'))}, {fmt_num(p.get('delta'))})).</div>")
    elif _is_private(run):
        g = (f"<div class='callout ok'><b>{GUARANTEE_NAME.capitalize()}: ({fmt_eps(p.get('epsilon'))}, "
             f"{fmt_num(p.get('delta'))})-differential privacy</b> for every user of every entity "
             f"(user-level, per entity; requested ε = {fmt_eps(p.get('requested_epsilon'))}, "
             f"δ = {fmt_num(p.get('requested_delta'))}). Computed from the ledger "
             "(<a href='#privacy'>below</a>), under these assumptions:<ul>"
             + "".join(f"<li>{_esc(a)}</li>" for a in p.get("assumptions") or [])
             + "</ul>"
             + "".join(f"<p class='verdict-bad'>{_esc(w)}</p>" for w in p.get("warnings") or [])
             + "</div>")
    else:
        g = (f"<div class='callout bad'><b>NOT PRIVATE.</b> {_esc(p.get('label', 'non-private'))}. "
             "No differential-privacy guarantee holds for this run.</div>")
    # the run's guarantee is its own release's; an included release that voided an entity's says so here
    g += "".join(f"<p class='verdict-bad'>{line}</p>" for line in void_lines(others or []))
    rows = [
        {"k": "dataset", "v": ds.get("name", "—")},
        {"k": "trust model", "v": trust_text(p)},
        {"k": "ε against the server + all other entities (coalition)", "v": coalition_text(p)},
        {"k": "accountant", "v": accountant_text(p)},
        # the exact user count is private: it is shown only in the analyst-only data section
        {"k": "entities / items", "v": f"{fmt_num(ds.get('n_entities'))} / {items_text(ds, public)}"},
        {"k": "method", "v": f"{m.get('name', cfg.get('method', '—'))} — {m.get('label', '')}"},
        {"k": "privacy model", "v": _privacy_model(run)},
        {"k": "run created", "v": run.get("created", "—")},
        {"k": "report generated", "v": generated},
        {"k": "dpfed version", "v": f"{__version__} (run made with {run.get('version', '—')})"},
        {"k": "included", "v": ", ".join(["run"] + [r["release"] for r in others or []])},
        {"k": "version of this report", "v": _version_note(run, public)},
    ]
    nav = "".join(f"<li><a href='#{s}'>{_esc(SECTION_TITLES[s])}</a></li>" for s in SECTIONS)
    return _section("summary", g + html_table(rows, [("k", "item"), ("v", "value")], cls="kv")
                    + f"<nav><ol>{nav}</ol></nav>", [PUBLIC])


def released_from_messages(run: dict) -> list[dict]:
    """"What is released", generated from the run's message log: one row per (round,
    direction, content) with how many messages, their shapes and bytes. Entity → server messages are
    releases of private data (DP for a private run); server → entity messages are post-processing of
    what the server received."""
    private = _is_private(run)
    simulation = bool(run.get("privacy", {}).get("simulation"))
    groups: dict[tuple, dict] = {}
    for m in run.get("messages") or []:
        to_server = m.get("receiver") == "server"
        key = (int(m.get("round", 0)), to_server, str(m.get("content", "")))
        g = groups.setdefault(key, {"n": 0, "shapes": set(), "bytes": 0})
        g["n"] += _copies(m)
        g["shapes"].add(shape_text(m.get("shape", [])))
        g["bytes"] += int(m.get("bytes", 0))
    rows = []
    for (rnd, to_server, content), g in sorted(groups.items(), key=lambda kv: (kv[0][0], not kv[0][1], kv[0][2])):
        shapes = sorted(g["shapes"])
        shape = shapes[0] if len(shapes) == 1 else f"{len(shapes)} shapes ({shapes[0]} … {shapes[-1]})"
        status = (("released" + ("" if private else " — NON-PRIVATE for this method")) if to_server
                  else "released (post-processing of what the server received: no extra privacy cost)")
        if shapes == ["no array"]:  # either direction: policy, acknowledgements, SecAgg+ setup and keys
            status = "a protocol message: no data array, nothing released"
        elif to_server and private and simulation:
            status = "released — simulation: noise reproducible from the seed, NOT private"
        rows.append({"what": f"Round {rnd}, {'entity → server' if to_server else 'server → entity'}",
                     "content": f"{content} ({g['n']} message{'s' if g['n'] != 1 else ''}, shape {shape}, "
                                f"{fmt_num(g['bytes'])} bytes)",
                     "status": status})
    return rows


def _scope(run: dict, public: bool = False) -> str:
    private = _is_private(run)
    eps = fmt_eps(run.get("privacy", {}).get("epsilon")).removesuffix(" (non-private)")
    released = [(r["what"], r["content"], r["status"]) for r in released_from_messages(run)] + [
        ("Round 2 inside each entity", "user factors U_h, entity-local model parts and predictions",
         "never leave the entity"),
        ("This report: data summary", "user, test-user, item and interaction counts",
         "withheld from this public version" if public else "analyst only (exact, private)"),
        ("This report: utility metrics", "RMSE, MAR, precision/recall/NDCG on held-out entries",
         "withheld from this public version" if public else "analyst only (computed on private data)"),
        ("This report: audit", "attack success rates on the entity's own data",
         "withheld from this public version" if public else "analyst only (computed on private data)"),
        ("This report: ledger, parameters, message sizes", "ε, δ, sensitivities, noise scales, shapes, bytes",
         "public (from parameters, not from data values)"),
    ]
    items = [
        "<b>Privacy unit: one user of one entity.</b> The guarantee is user-level: it covers all of a "
        "user's row at once. Neighbouring datasets differ by adding or removing one user "
        "(unbounded DP).",
        f"<b>Per entity, parallel across entities.</b> Each entity's release is ({eps}, δ)-DP for its own "
        "users (sequential composition of the stages in the ledger); entities hold disjoint users, so "
        "the run as a whole is (max ε, max δ)-DP.",
        "<b>Users are assumed disjoint across entities.</b> The engine cannot link people across "
        "entities: a patient seen by two hospitals is two users, each protected at ε, so that person's "
        "combined protection is only 2ε (k hospitals: k·ε).",
        "<b>The server and round 2 are post-processing.</b> The server fits V from what the entities "
        "released only (their prototypes and noisy cluster sizes, if the run uses them; or, for a summable "
        "method, the noisy sum of their statistics); round 2 fits each "
        "entity's users locally with V fixed and sends nothing back. "
        "Neither costs privacy and neither can weaken the guarantee.",
        "<b>Bounds are public parameters.</b> Value bound, row norm and support are set by the user "
        "(defaults from the data's declared scale), never read off the private values; values are "
        "clipped before any aggregate.",
        ("<b>No number computed on the private data is in this public version.</b> Counts, utility "
         "metrics and audit results are computed exactly, without noise; they are not covered by the "
         "guarantee and appear only in the analyst's full report." if public else
         "<b>Analyst-only numbers.</b> Counts, utility metrics and audit results on this page are "
         "computed on private data, exactly and without noise. They are for the analyst's eyes and are "
         "not covered by the guarantee if published."),
        "<b>Non-private methods are labelled non-private</b> (ε = ∞): k-means and k-random prototypes "
        "send exact cluster means or raw rows; central MF and popularity pool raw data or exact totals.",
        "<b>The audit is a lower bound, not a proof.</b> The proof is the ledger; an empirical lower "
        "bound above the claimed ε would reveal a bug.",
    ]
    if not private:
        items.insert(0, "<b class='verdict-bad'>This run is non-private:</b> the statements about the DP "
                        "guarantee describe the protocol, not this run's method.")
    elif run.get("privacy", {}).get("simulation"):
        items.insert(0, "<b class='verdict-bad'>This run is a simulation:</b> its noise is reproducible from the "
                        "seed, so no ε holds; the statements about the DP guarantee describe the protocol run with "
                        "production noise, not this run.")
    body = "<ul>" + "".join(f"<li>{s}</li>" for s in items) + "</ul>"
    body += ("<h3>What is released and what is not</h3><p class='muted small'>The protocol rows are generated "
             "from this run's message log.</p>") + html_table(
        [{"what": a, "content": b, "status": c} for a, b, c in released],
        [("what", "where"), ("content", "content"), ("status", "status")])
    return _section("scope", body, [PUBLIC])


#: What the public version says of the item count of data without a declared catalogue.
ITEMS_WITHHELD = ("withheld (no catalogue was declared: which items exist is read from the private rows; the "
                  "federation shared only a DP-selected catalogue, see what is released)")


#: What the public version says of the items a declared catalogue leaves out.
DECLARED_OUTSIDE_WITHHELD = ("the entities' own items outside the catalogue, never shared, are withheld: which "
                             "exist is read from the private rows")


def items_text(ds: dict, public: bool) -> str:
    """The dataset's item count as a version of the report may state it: a declared catalogue's size is
    public; without one (``item_source`` other than "declared", or not recorded) the count of distinct
    items in the private rows — one user can move it by the items only that user holds — is the
    analyst's only (the public version says :data:`ITEMS_WITHHELD`); a declared catalogue that leaves
    some of the data's items out is stated by its own size (``n_declared``)."""
    if public and ds.get("item_source") != "declared":
        return ITEMS_WITHHELD
    if ds.get("n_declared") is not None:  # a declared catalogue that leaves some of the data's items out
        if public:  # how many items lie outside it is read from the private rows
            return f"{fmt_num(ds['n_declared'])} declared ({DECLARED_OUTSIDE_WITHHELD})"
        return f"{fmt_num(ds.get('n_items'))} ({fmt_num(ds['n_declared'])} declared, the others the entities' own)"
    return fmt_num(ds.get("n_items"))


def _items_phrase(ds: dict, public: bool) -> str:
    shown = items_text(ds, public)
    return f"items {shown}" if shown == ITEMS_WITHHELD or ds.get("n_declared") is not None else f"{shown} items"


def _data(run: dict, data_summary: list[dict] | None, public: bool = False) -> str:
    if public:
        ds = run.get("dataset", {})
        return _section("data", f"<p>{_esc(ds.get('name', ''))}: {fmt_num(ds.get('n_entities'))} entities, "
                        f"{_esc(_items_phrase(ds, public))}; values: {_esc(ds.get('value_kind', '—'))}, declared "
                        f"public bound {fmt_num(ds.get('value_max'))}. {_esc(WITHHELD)}</p>", [PUBLIC])
    ents = {e["name"]: e for e in run.get("entities", [])}
    rows = []
    if data_summary:
        for s in data_summary:
            name = s.get("entity", s.get("name"))
            rows.append({"entity": name, "users": s.get("users", s.get("n_users")),
                         "test users": ents.get(name, {}).get("n_test_users"),
                         "items used": s.get("items_used"), "interactions": s.get("interactions")})
    else:
        for name, e in ents.items():
            rows.append({"entity": name, "users": e.get("n_users"), "test users": e.get("n_test_users"),
                         "items used": None, "interactions": None})
    ds = run.get("dataset", {})
    body = (f"<p>{_esc(ds.get('name', ''))}: {fmt_num(ds.get('n_users'))} users × "
            f"{fmt_num(ds.get('n_items'))} items, {fmt_num(ds.get('n_interactions'))} interactions in "
            f"{fmt_num(ds.get('n_entities'))} entities; values: {_esc(ds.get('value_kind', '—'))}, "
            f"public bound of one value {fmt_num(ds.get('value_max'))}.</p>")
    body += html_table(rows, [("entity", "entity"), ("users", "users"), ("test users", "test users"),
                              ("items used", "items used"), ("interactions", "interactions")], scroll=True)
    if not data_summary:
        body += ("<p class='muted small'>Items used and interactions per entity are not in the run "
                 "document; build the report with the dataset to include them.</p>")
    notes = ds.get("notes") or []
    if notes:
        body += "<h3>Loader notes</h3><ul>" + "".join(f"<li>{_esc(n)}</li>" for n in notes) + "</ul>"
    return _section("data", body, [ANALYST_ONLY])


def _declared_default(method: str, param: str):
    """A method's declared default of one parameter (None when it declares none)."""
    from dpfed_core.methods import METHODS, available_methods

    available_methods()
    spec = METHODS.get(method)
    return next((p.default for p in (spec.parameters if spec else ()) if p.name == param), None)


def k_explanation(run: dict) -> str:
    """Why each entity sent the number of prototypes it did (the automatic k), from the run's
    configuration and message log; "" when k is used as given."""
    cfg = run.get("config", {}) or {}
    k = cfg.get("k")
    proto = cfg.get("prototype_params", {}) or {}
    method = cfg.get("method", "")
    sent = {}
    for m in run.get("messages", []) or []:
        if m.get("round") == 1 and "prototype" in str(m.get("content", "")) and m.get("shape"):
            sent[m.get("sender")] = int(m["shape"][0])
    cluster_size = proto.get("cluster_size", _declared_default(method, "cluster_size"))
    if cluster_size is None or not k or int(k) <= 1:
        if sent and k and any(v != int(k) for v in sent.values()):
            return (f"k = {k} was requested; entities sent {', '.join(sorted({str(v) for v in sent.values()}))} "
                    "prototypes (k is capped by each entity's size for non-private methods).")
        return ""
    counts = sorted(set(sent.values()))
    got = f" In this run the entities sent {', '.join(map(str, counts))} prototype(s) each." if counts else ""
    return (f"k = {k} is a maximum. {method} chooses k per entity as k_eff = clip(⌊n̂ / {float(cluster_size):g}⌋, 1, {k}) "
            f"from the entity's noisy user count n̂ (its 'size' ledger row), so an entity with fewer than "
            f"about {2 * int(cluster_size)} users sends one prototype. This is post-processing of a DP release "
            "(no extra cost) and never uses the true count; under DP one large cluster measured better "
            "than several small, noisier ones." + got)


def uses_k(method: str) -> bool:
    """Whether a method takes k (prototypes per entity); an unknown name is given the benefit of the doubt."""
    from dpfed_core.methods import METHODS, available_methods

    available_methods()
    spec = METHODS.get(method)
    return True if spec is None else bool(spec.uses_k)


def _parameters(run: dict) -> str:
    cfg = dict(run.get("config", {}))
    proto = cfg.pop("prototype_params", {}) or {}
    mparams = cfg.pop("method_params", {}) or {}
    if not uses_k(str(cfg.get("method", ""))):
        cfg.pop("k", None)  # a method that takes no k: its value would only mislead
        cfg.pop("server_weighting", None)  # nor has it prototypes to weight
    rows = [{"k": k, "v": v} for k, v in cfg.items()]
    body = html_table(rows, [("k", "parameter"), ("v", "value")], cls="kv")
    body += "<h3>Prototype-method parameters</h3>"
    body += (html_table([{"k": k, "v": v} for k, v in proto.items()], [("k", "parameter"), ("v", "value")], cls="kv")
             if proto else "<p class='muted'>none beyond the method's documented defaults</p>")
    if mparams:
        body += "<h3>Other method parameters</h3>" + html_table(
            [{"k": k, "v": v} for k, v in mparams.items()], [("k", "parameter"), ("v", "value")], cls="kv")
    k_note = k_explanation(run)
    if k_note:
        body += f"<p><b>k (prototypes per entity).</b> {_esc(k_note)}</p>"
    if run.get("config", {}).get("method"):
        from dpfed_core.reporting.paper import paper_differences_text

        body += f"<p><b>Settings.</b> {_esc(paper_differences_text(run['config'], run))}</p>"
    ds = run.get("dataset", {})
    body += (f"<p>Declared public value bound Λ∞ = {fmt_num(ds.get('value_max'))} "
             f"({_esc(ds.get('value_kind', '—'))}).</p>")
    return _section("parameters", body, [PUBLIC])


def _privacy(run: dict, plotly_ok: bool, comparison: dict[str, dict] | None = None) -> str:
    p = run.get("privacy", {})
    rows = [
        {"k": f"ε, {GUARANTEE_NAME} (max over entities of each entity's composed stages)", "v": fmt_eps(p.get("epsilon"))},
        {"k": f"δ, {GUARANTEE_NAME}", "v": fmt_num(p.get("delta"))},
        {"k": "requested ε", "v": fmt_eps(p.get("requested_epsilon"))},
        {"k": "requested δ", "v": fmt_num(p.get("requested_delta"))},
        {"k": "private", "v": "yes" if _is_private(run) else "NO (non-private)"},
        {"k": "statement", "v": p.get("label", "")},
        {"k": "noise samplers", "v": "; ".join(p.get("samplers") or []) or "—"},
    ]
    body = html_table(rows, [("k", "item"), ("v", "value")], cls="kv")
    ok = (not _is_private(run)) or (_f(p.get("epsilon")) <= _f(p.get("requested_epsilon")) * (1 + 1e-9)
                                    and _f(p.get("delta")) <= _f(p.get("requested_delta")) * (1 + 1e-9) + 1e-300)
    if _is_private(run):
        body += (f"<p class='{'verdict-ok' if ok else 'verdict-bad'}'>"
                 + ("The ledger's budget is within the request." if ok else "The ledger's budget EXCEEDS the request.")
                 + "</p>")
    if any(x != PRODUCTION_SAMPLER_LABEL for x in p.get("samplers") or []):
        body += f"<p class='verdict-bad'>{_esc(FLOAT_SAMPLER_NOTE)}</p>"
    per_entity = p.get("per_entity") or []
    if per_entity:
        body += ("<h3>ε per entity, as composed (the guarantee)</h3><p>Each entity's stages composed by the "
                 "accountant named in its row; the run's ε is the largest of these (entities hold different "
                 "users, so their releases compose in parallel).</p>" + html_table(
                     [{**e, "epsilon": fmt_eps(e.get("epsilon"))} for e in per_entity],
                     [("entity", "entity"), ("epsilon", "ε (composed)"), ("delta", "δ"),
                      ("accountant", "composed by")], scroll=True))
        if plotly_ok and _is_private(run):
            try:
                from dpfed_core.reporting.plots import privacy_composed_bars

                coal = ((p.get("trust") or {}).get("against_server_and_other_entities") or {}).get("epsilon")
                secure = (p.get("trust") or {}).get("aggregation") == "secure"
                body += _fig_html(privacy_composed_bars(per_entity, _f(p.get("requested_epsilon")),
                                                        _f(coal) if secure and coal is not None else None,
                                                        "ε per entity (composed guarantee)"), "fig-stages", 360)
            except ImportError:  # pragma: no cover
                pass
    per = p.get("per_stage") or []
    body += ("<h3>The stages' own rows</h3><p class='muted small'>What each stage would cost alone. These rows "
             "do not add up to the guarantee when the accountant is zCDP (Gaussian stages compose by their ρ, "
             "which is tighter than the sum); the composed ε above is the guarantee.</p>") + html_table(
        per, [("entity", "entity"), ("stage", "stage"), ("epsilon", "ε (stage alone)"), ("delta", "δ"),
              ("invocations", "invocations")], scroll=True)
    body += "<h3>Ledger (one row per mechanism invocation)</h3>" + html_table(
        p.get("ledger") or [], [("entity", "entity"), ("stage", "stage"), ("mechanism", "mechanism"),
                                ("epsilon", "ε"), ("delta", "δ"), ("sensitivity", "sensitivity"),
                                ("noise_scale", "noise scale"), ("note", "note")], scroll=True)
    docs = _comparison_docs(run, comparison)
    main = next(iter(docs))
    # the comparison methods' DP releases are charged to the same data: their rows are accounting too
    extra = [{"method": name, **r} for name, d in docs.items() if name != main and _charge_kind(d) == "dp"
             for r in (d.get("privacy") or {}).get("ledger") or []]
    if extra:
        body += ("<h3>The comparison methods' ledgers</h3><p>The comparison methods ran on the same data and "
                 "released DP statistics of their own, charged beside this run's; one row per mechanism "
                 "invocation.</p>" + html_table(
                     extra, [("method", "method"), ("entity", "entity"), ("stage", "stage"),
                             ("mechanism", "mechanism"), ("epsilon", "ε"), ("delta", "δ"),
                             ("noise_scale", "noise scale")], scroll=True))
    return _section("privacy", body, [PUBLIC])


def _messages(run: dict, others: list[dict] | None = None) -> str:
    msgs = run.get("messages") or []
    per: dict[str, dict] = {}
    for mm in msgs:
        if mm.get("receiver") == "server":
            d = per.setdefault(mm["sender"], {"entity": mm["sender"], "messages out": 0, "bytes out": 0,
                                              "messages in": 0, "bytes in": 0})
            d["messages out"] += _copies(mm)
            d["bytes out"] += int(mm.get("bytes", 0))
        else:
            d = per.setdefault(mm["receiver"], {"entity": mm["receiver"], "messages out": 0, "bytes out": 0,
                                                "messages in": 0, "bytes in": 0})
            d["messages in"] += _copies(mm)
            d["bytes in"] += int(mm.get("bytes", 0))
    total = sum(int(mm.get("bytes", 0)) for mm in msgs)
    rounds = sorted({int(mm.get("round", 0)) for mm in msgs})
    method = (run.get("method") or {}).get("name") or run.get("config", {}).get("method", "the run's method")
    body = (f"<p>{sum(_copies(mm) for mm in msgs)} messages in round(s) {', '.join(map(str, rounds)) or '—'}, "
            f"{fmt_num(total)} bytes in total. Every message of this run's method ({_esc(method)}) that crossed an "
            "entity's boundary is listed; it sent nothing else.</p>")
    if others:
        body += ("<h3>Other releases this report counts</h3><p>These releases of the same data are not in the "
                 "log above (their messages, if they sent any, were their own); each is named here with its method "
                 "and ε, and a comparison method's ledger rows are in the privacy section.</p>"
                 + _releases_table(others))
    body += "<h3>Per entity</h3>" + html_table(list(per.values()), scroll=True)
    body += "<h3>All messages</h3>" + html_table(
        [{**mm, "shape": shape_text(mm.get("shape", [])), "copies": _copies(mm)} for mm in msgs],
        [("round", "round"), ("sender", "sender"), ("receiver", "receiver"), ("content", "content"),
         ("shape", "shape"), ("bytes", "bytes"), ("copies", "copies")], scroll=True)
    return _section("messages", body, [RELEASED])


def _copies(message: dict) -> int:
    """How many times a logged message was sent (one per user for a per-user download or upload)."""
    return int(message.get("copies", 1) or 1)


def _comparison_docs(run: dict, comparison: dict[str, dict] | None) -> dict[str, dict]:
    main = (run.get("method") or {}).get("name") or run.get("config", {}).get("method", "run")
    docs = {main: run}
    for name, d in (comparison or run.get("comparison") or {}).items():
        if name != main:
            docs[name] = d
    return docs


def _split_words(run: dict) -> str:
    """The run's own split as its document records it (`` (30 % of users, 3 hidden entries each)``), or
    nothing when the document does not say: the report states no split the run did not use."""
    cfg = run.get("config") or {}
    frac, hidden = cfg.get("test_fraction"), cfg.get("n_hidden")
    if not isinstance(frac, (int, float)) or not isinstance(hidden, int) or isinstance(hidden, bool):
        return ""
    return f" ({100 * frac:g} % of users, {hidden} hidden {'entry' if hidden == 1 else 'entries'} each)"


def _utility(run: dict, comparison: dict[str, dict] | None, plotly_ok: bool, public: bool = False) -> str:
    if public:
        return _section("utility", "<p>" + _esc(WITHHELD_NUMBERS.format(
            what="the utility metrics (overall and per entity)")) + "</p>", [PUBLIC])
    docs = _comparison_docs(run, comparison)
    metrics = run_metrics(run)
    rows = []
    for name, d in docs.items():
        row = {"method": name, "privacy": _privacy_model(d), "ε": fmt_eps(d.get("privacy", {}).get("epsilon"))}
        row.update({k: d.get("overall", {}).get(k) for k in metrics})
        rows.append(row)
    cols = [("method", "method"), ("privacy", "privacy model"), ("ε", "ε (ledger)")] + \
           [(k, metric_label(k)) for k in metrics]
    body = (f"<p>Overall metrics over every entity's test users{_esc(_split_words(run))}, "
            "all methods on the same split.</p>") + html_table(rows, cols, scroll=True)
    if len(docs) == 1:
        body += ("<p class='muted small'>No comparison methods in the run document; run with "
                 "<code>--compare central,individual,random-v,popularity</code> to include them.</p>")
    main = next(iter(docs))
    if any(b in docs for b in VERDICT_BASELINES) and main not in VERDICT_BASELINES and "mar" in metrics:
        # the sentence the dashboard's Evaluate page and the CLI's run --compare print
        body += f"<p><b>Verdict.</b> {_esc(verdict_sentence(entity_verdict(docs, main, 'mar')))}</p>"
    counts = [("n_users", "users"), ("n_test_users", "test users")]
    body += "<h3>Per entity — " + _esc(main) + "</h3>" + html_table(
        run.get("entities") or [], [("name", "entity")] + counts
        + [(k, metric_label(k)) for k in metrics], scroll=True)
    if plotly_ok and metrics and len(docs) > 1:
        import plotly.graph_objects as go

        headline = "mar" if "mar" in metrics else metrics[0]
        fig = go.Figure(go.Bar(x=[r["method"] for r in rows], y=[_f(r[headline]) for r in rows],
                               marker_color=[_method_color(r["method"]) for r in rows],
                               hovertemplate=f"method: %{{x}}<br>{_esc(metric_label(headline))}: "
                                             "%{y:.4f}<extra></extra>"))
        fig.update_xaxes(type="category", tickangle=-30)
        fig.update_yaxes(title=metric_label(headline))
        body += _fig_html(_layout(fig, f"{metric_label(headline)} by method", 340),
                          "fig-utility", 340)
    return _section("utility", body, [ANALYST_ONLY])


def sweep_settings_text(sweep: dict) -> str:
    """The sweep's own settings, data and privacy status (HTML-escaped): what its numbers were computed
    on and under, which need not be the run's."""
    cfg = sweep.get("config", {}) or {}
    ds = sweep.get("dataset", {}) or {}
    acct = (sweep.get("privacy", {}) or {}).get("accountant") or {}
    parts = [f"data {_esc(ds.get('name', '—'))} ({fmt_num(ds.get('n_entities'))} entities)",
             f"aggregation {_esc(cfg.get('aggregation', 'none'))}", f"rank {fmt_num(cfg.get('rank'))}",
             f"mode {_esc(cfg.get('mode', '—'))}", f"δ {fmt_num(cfg.get('delta'))}"]
    if cfg.get("simulation"):
        parts.append("<b>simulation: noise reproducible, no privacy claim</b>")
    if acct.get("across_releases"):
        parts.append(f"after it {_most_spent({**acct, 'most_spent_entity': None})} had spent ε = "
                     f"{fmt_eps(acct.get('spent_epsilon'))} on these "
                     "data in total (budget store)")
    elif not cfg.get("simulation"):
        parts.append(_sweep_not_recorded(sweep))
    if sweep.get("complete") is False:
        parts.insert(0, f"<b>partial: interrupted after {len(sweep.get('runs') or [])} runs</b> (its figures are "
                        "those runs' only; `sweep --resume` completes it)")
    return "The sweep's settings: " + "; ".join(parts) + "."


def _sweep_not_recorded(sweep: dict) -> str:
    """What a sweep document without the odometer's record says of its charge: a partial sweep (written
    as it went, interrupted before its record) was charged when it started — every point — in the store
    it ran with; a complete one without a record was not charged to a store."""
    if sweep.get("complete") is False:
        return ("a partial sweep: every point was charged to the budget store when it started, which this "
                "document does not record — <code>python -m dpfed_core budget show --data …</code> lists them")
    return "not charged to a budget store"


def _sweep_grid_text(sweep: dict) -> str:
    """"dp-cooccurrence over ε ∈ {0.5, 1, 3}, seeds [0, 1]" (HTML-escaped)."""
    return (f"{_esc(sweep.get('config', {}).get('method', ''))} over ε ∈ "
            f"{{{', '.join(fmt_num(e) for e in sweep.get('epsilons', []))}}}, seeds {_esc(sweep.get('seeds'))}")


def _tradeoff(sweep: dict | None, metric: str, plotly_ok: bool, public: bool = False) -> str:
    # a privacy caveat, not a utility number: stated in the public report too
    text = unproved_sweep_text(sweep) if sweep else None
    unproved = f"<p class='verdict-bad'>{_esc(text)}</p>" if text else ""
    if sweep and public:
        # the grid, the references and the spend are parameters and accounting, not utility
        refs = ", ".join(_esc(r) for r in sweep.get("references") or []) or "none"
        return _section("tradeoff", f"<p>{_sweep_grid_text(sweep)}; references: {refs}.</p>"
                        f"<p>{sweep_settings_text(sweep)}</p><p>"
                        + _esc(WITHHELD_NUMBERS.format(what="the sweep's utility at each ε")) + "</p>" + unproved,
                        [PUBLIC])
    if not sweep:
        return _section("tradeoff", "<p class='muted'>No sweep included. Produce one with "
                        "<code>python -m dpfed_core sweep … --out s.json</code> and pass "
                        "<code>--sweep s.json</code>.</p>", [PUBLIC if public else ANALYST_ONLY])
    from dpfed_core.evaluation.experiments import sweep_table

    method = sweep.get("config", {}).get("method", "")
    table = sweep_table(sweep, metric)
    refs = sweep.get("references") or []
    ref = next((b for b in VERDICT_BASELINES if b in refs), None)
    crossing = crossing_epsilon(sweep, metric, ref) if ref else None
    body = (f"<p>{_sweep_grid_text(sweep)}; metric: {_esc(metric_label(metric))}, mean ± sd over "
            f"seeds.</p><p>{sweep_settings_text(sweep)}</p><ul>"
            + "".join(f"<li>{_esc(line)}</li>" for line in crossing_lines(sweep, metric)) + "</ul>" + unproved)
    if plotly_ok:
        try:
            import pandas as pd

            from dpfed_core.reporting.plots import tradeoff_chart

            fig = tradeoff_chart(pd.DataFrame(table), method, metric, references=sweep.get("references") or [],
                                 crossing=crossing, metric_label=metric_label(metric), crossing_against=ref)
            body += _fig_html(fig, "fig-tradeoff", 440)
        except ImportError:  # pragma: no cover
            pass
    body += html_table(table, [("method", "method"), ("epsilon", "ε"), ("mean", "mean"), ("sd", "sd"),
                               ("n", "seeds")], scroll=True)
    return _section("tradeoff", body, [ANALYST_ONLY])


def _audit(audit: dict | None, plotly_ok: bool, public: bool = False, void: Sequence[str] = ()) -> str:
    if not audit:
        return _section("audit", "<p class='muted'>No audit included. Produce one with "
                        "<code>python -m dpfed_core audit … --out a.json</code> and pass "
                        "<code>--audit a.json</code>.</p>", [PUBLIC if public else ANALYST_ONLY])
    # what the audit cost its entity is accounting, not a result: both versions say it
    voided = "".join(f"<p class='verdict-bad'><b>{line}</b></p>" for line in void)
    if public:
        return _section("audit", voided + "<p>" + _esc(WITHHELD_NUMBERS.format(
            what="the membership-inference audit's results (attack success on an entity's own users)"))
            + f" {_esc(WITHHELD)}</p>", [PUBLIC])
    cfg = audit.get("config", {})
    ent = audit.get("entity", {})
    conf = _f(cfg.get("confidence", 0.95))
    viol = [r for r in audit["summary"] if r["verdict"] == "VIOLATION"]
    who = (f"Entity <b>{_esc(ent.get('name'))}</b>" if public else
           f"Entity <b>{_esc(ent.get('name'))}</b> ({fmt_num(ent.get('n_users'))} users)")
    body = (f"<p>{who}. For each target "
            f"user the round-1 mechanism ran {fmt_num(cfg.get('runs'))} times without and "
            f"{fmt_num(cfg.get('runs'))} times with the target (fresh randomness each run). An attacker who "
            f"knows the target's row and sees only {_esc(audit_attacker_view(cfg))} scores each release; we report "
            "the attack's ROC AUC, its true-positive rate at low false-positive rates, and an empirical "
            f"lower bound on ε certified with Clopper–Pearson bounds at {conf * 100:g} % confidence on runs "
            "not used to choose the attack's threshold.</p>") + voided
    if viol:
        body += ("<div class='callout bad'><b>VIOLATION:</b> an empirical lower bound exceeds the claimed ε "
                 f"for {', '.join(_esc(r['method']) + ' ε=' + fmt_num(r['epsilon']) for r in viol)}. "
                 "The mechanism or its accounting is broken.</div>")
    else:
        body += ("<div class='callout ok'>No empirical lower bound exceeds a DP method's claimed ε. "
                 "Non-private methods are labelled as such; their leakage is shown for contrast.</div>")
    fprs = list(audit["summary"][0]["tpr_at_fpr"]) if audit.get("summary") else []
    rows = []
    for r in audit["summary"]:
        v = r["verdict"]
        vcls = "verdict-bad" if v == "VIOLATION" else ("verdict-ok" if v == "consistent" else "muted")
        row = {"method": r["method"], "claimed": fmt_eps(r["epsilon"]), "lb": r["epsilon_lb"],
               "cap": r["max_certifiable_epsilon"], "auc": r["auc"],
               "where": f"{r['epsilon_lb_target']} / {r['epsilon_lb_attack']}",
               # a summable method releases statistics, never rows: no row of it can be the target's
               "verbatim": "—" if _any_summable([r["method"]]) else f"{_f(r.get('verbatim_in', 0.0)) * 100:.1f} %",
               "verdict": f"<span class='{vcls}'>{_esc(v)}</span>"}
        for f in fprs:
            row[f"tpr{f}"] = r["tpr_at_fpr"][f] if resolved(r["tpr_at_fpr"][f]) else "n/r"
        rows.append(row)
    cols = [("method", "method"), ("claimed", "claimed ε"), ("lb", "empirical ε lower bound"),
            ("cap", "most certifiable"), ("auc", "best AUC")] + \
           [(f"tpr{f}", f"TPR @ FPR {float(f) * 100:g}%") for f in fprs] + \
           [("verbatim", "target's row published verbatim (IN runs)"),
            ("where", "strongest target / attack"), ("verdict", "verdict")]
    if public:  # the strongest target is a named user: the analyst's version only
        cols = [c for c in cols if c[0] != "where"]
    body += html_table(rows, cols, raw=("verdict",), scroll=True)
    if any(row[f"tpr{f}"] == "n/r" for row in rows for f in fprs):
        body += (f"<p class='muted small'>{_esc(UNRESOLVED_TPR)} (--runs on the command line, “Runs per class” on "
                 "the Privacy audit page).</p>")
    if plotly_ok and not public:  # its hover text names the strongest target user
        body += _fig_html(audit_epsilon_figure(audit, "Empirical ε lower bound vs claimed ε"), "fig-audit-eps", 420)
    if public:  # the per-target curves and tables name and describe target users
        return _section("audit", body + f"<p class='muted small'>{_esc(WITHHELD)}</p>", [ANALYST_ONLY])
    if plotly_ok:
        for i, t in enumerate(audit.get("targets", [])):
            body += _fig_html(audit_roc_figure(audit, t["name"], "distance"), f"fig-audit-roc-{i}", 460)
    body += "<h3>Targets</h3>" + html_table(
        audit.get("targets", []), [("name", "target"), ("nonzeros", "non-zeros"), ("norm", "ℓ2 norm"),
                                   ("nn_distance", "distance to nearest other user")])
    body += "<h3>All results</h3>" + html_table(
        [{**r, "claimed": fmt_eps(r["epsilon"])} for r in audit["results"]],
        [("method", "method"), ("claimed", "claimed ε"), ("target", "target"), ("attack", "attack"),
         ("auc", "AUC"), ("epsilon_lb", "ε lower bound"), ("form", "form"), ("tp", "TP"), ("fn", "FN"),
         ("fp", "FP"), ("tn", "TN")], scroll=True)
    body += ("<p class='muted small'>Reading the numbers: a lower bound of 0 means the attacks found no "
             "measurable leakage; it does not prove privacy (the ledger does). With N evaluation runs per "
             "class no audit can certify more than the 'most certifiable' column, so a perfectly leaking "
             "non-private method shows that ceiling, not ∞. k-random prototypes leak rarely but totally: "
             "the target's raw row is published in about k/n of the runs.</p>")
    return _section("audit", body, [ANALYST_ONLY])


def _provenance(run, sweep, audit, generated: str, comparison: dict[str, dict] | None = None) -> str:
    rows = [{"doc": "run", "created": run.get("created", "—"), "version": run.get("version", "—"), "sha": _sha(run)}]
    main = next(iter(_comparison_docs(run, None)))
    for name, d in (comparison or {}).items():  # documents of their own, beside the run's
        if name != main:
            rows.append({"doc": f"comparison {name}", "created": d.get("created", "—"),
                         "version": d.get("version", "—"), "sha": _sha(d)})
    if sweep:
        rows.append({"doc": "sweep", "created": sweep.get("created", "—"), "version": sweep.get("version", "—"),
                     "sha": _sha(sweep)})
    if audit:
        rows.append({"doc": "audit", "created": audit.get("created", "—"), "version": audit.get("version", "—"),
                     "sha": _sha(audit)})
    body = (f"<p>Generated {generated} by dpfed_core {__version__}. The report is a pure function of the "
            "documents below (SHA-256 of their canonical JSON).</p>")
    body += html_table(rows, [("doc", "document"), ("created", "created"), ("version", "dpfed version"),
                              ("sha", "SHA-256")])
    return _section("provenance", body, [PUBLIC])
