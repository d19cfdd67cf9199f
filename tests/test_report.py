"""Compliance report: every section is present, values match the documents, the scope
statements are there, and it works from JSON files and the CLI."""
from __future__ import annotations

import argparse
import html
import json
import math
import re

import pytest

from dpfed_core import __version__
from dpfed_core.reporting import report as rep
from dpfed_core.reporting.report_format import _esc
from dpfed_core.cli import report_cmd
from dpfed_core.errors import DataError, DpfedError
from dpfed_core.evaluation.experiments import write_json

from report_docs import make_docs


@pytest.fixture(scope="module")
def docs() -> dict:
    return make_docs()


@pytest.fixture(scope="module")
def page(docs) -> str:
    return rep.build_report(docs["run"], sweep_doc=docs["sweep"], audit_doc=docs["audit"], dataset=docs["dataset"],
                            generated="2026-01-02T03:04:05+00:00")


def _section(page: str, sid: str) -> str:
    m = re.search(rf"<section id='{sid}'.*?</section>", page, re.S)
    assert m, f"section {sid} missing"
    return m.group(0)


def test_every_section_in_order(page):
    pos = [page.index(f"<section id='{s}'") for s in rep.SECTIONS]
    assert pos == sorted(pos)
    for s in rep.SECTIONS:
        assert rep.SECTION_TITLES[s] in _section(page, s)


def test_self_contained(page):
    assert page.count("<script type='text/javascript'>") == 1  # one inline plotly.js
    # no external resources in the markup (plotly.js's own source mentions URLs in strings; the
    # end-to-end test checks that the browser makes no network request)
    markup = re.sub(r"<script type='text/javascript'>.*?</script>", "", page, count=1, flags=re.S)
    assert not re.search(r"""(src|href)\s*=\s*['"]https?://""", markup)
    assert not re.search(r"<(script|link)[^>]+(src|href)=", markup)
    assert "2026-01-02T03:04:05+00:00" in page and __version__ in page


def test_values_match_the_run(docs, page):
    run = docs["run"]
    p = run["privacy"]
    priv = _section(page, "privacy")
    assert f"({rep.fmt_eps(p['epsilon'])}, {rep.fmt_num(p['delta'])})-differential privacy" in _section(page, "summary")
    assert p["epsilon"] <= 1.0 and p["private"]
    for row in p["ledger"]:
        assert _esc(row["mechanism"]) in priv and _esc(row["stage"]) in priv
        assert rep.fmt_num(row["epsilon"]) in priv
    msgs = _section(page, "messages")
    for m in run["messages"]:
        assert f"<td class='num'>{m['bytes']}</td>" in msgs
    total = sum(m["bytes"] for m in run["messages"])
    assert f"{total} bytes in total" in msgs
    util = _section(page, "utility")
    for name, d in [("dp-prototypes", run), *run["comparison"].items()]:
        assert f"<td>{name}</td>" in util
        assert _esc(d["method"]["privacy_model"]) in util
        for k in ("mar", "test_rmse", "ndcg_at_10"):
            assert rep.fmt_num(d["overall"][k]) in util
    data = _section(page, "data")
    for s in docs["dataset"].summary():
        assert f"<td>{s['entity']}</td>" in data and f"<td class='num'>{s['interactions']}</td>" in data
    params = _section(page, "parameters")
    for k in ("k", "rank", "lam", "seed", "epsilon", "delta", "mode"):
        assert f"<td>{k}</td>" in params
    # the scope states the ledger's ε, which here is below the request; the ε chart's dashed line is the request
    assert p["epsilon"] != p["requested_epsilon"]
    assert f"release is ({rep.fmt_num(p['epsilon'])}, δ)-DP for its own users" in _section(page, "scope")
    lines = re.findall(r'"name":"requested \\u03b5 \(([^)]*)\)"', priv)
    assert lines == [f"{p['requested_epsilon']:.3g}"]


def test_the_tradeoff_states_the_sweeps_own_settings_and_a_simulation(docs):
    sim = json.loads(json.dumps(docs["sweep"], default=str))
    sim["config"]["simulation"] = True
    text = _section(rep.build_report(docs["run"], sweep_doc=sim, generated="x", include_plotlyjs=False), "tradeoff")
    cfg = docs["sweep"]["config"]
    assert f"The sweep's settings: data {docs['sweep']['dataset']['name']}" in text
    assert f"aggregation {cfg['aggregation']}; rank {cfg['rank']}; mode {cfg['mode']}" in text
    assert "simulation: noise reproducible, no privacy claim" in text
    # an interrupted sweep (written as it went, before the odometer's record) says it is partial, and that
    # its points were charged, never that they were not
    part = json.loads(json.dumps(docs["sweep"], default=str))
    part["complete"], part["config"]["simulation"] = False, False
    part.pop("odometer", None)
    (part.get("privacy") or {}).pop("accountant", None)
    html = rep.build_report(docs["run"], sweep_doc=part, generated="x", include_plotlyjs=False)
    text = _section(html, "tradeoff")
    assert f"partial: interrupted after {len(part['runs'])} runs" in text
    assert "a partial sweep: every point was charged to the budget store when it started" in html
    assert "not charged to a budget store" not in text


def test_values_match_sweep_and_audit(docs, page):
    from dpfed_core.evaluation.experiments import sweep_table
    from dpfed_core.evaluation.verdicts import crossing_lines

    trade = _section(page, "tradeoff")
    for r in sweep_table(docs["sweep"], "mar"):
        assert rep.fmt_num(r["mean"]) in trade
    # the section states where federation pays against each baseline the sweep has, in the words of
    # the CLI and the dashboard (one sentence per baseline, whether or not it ever pays)
    lines = crossing_lines(docs["sweep"], "mar")
    assert lines and all(_esc(line) in trade for line in lines)
    audit = _section(page, "audit")
    for s in docs["audit"]["summary"]:
        assert rep.fmt_num(s["epsilon_lb"]) in audit and rep.fmt_num(s["auc"]) in audit
        assert s["verdict"] in audit
    assert docs["audit"]["entity"]["name"] in audit
    assert "fig-audit-eps" in audit and "fig-audit-roc-0" in audit


def test_scope_statements(page):
    scope = _section(page, "scope")
    for phrase in ("one user of one entity", "disjoint across entities", "combined protection is only 2ε",
                   "post-processing", "analyst", "Non-private methods are labelled non-private",
                   "public parameters", "lower bound, not a proof"):
        assert phrase in scope, phrase
    # analyst-only vs released badges on the right sections
    assert "analyst only" in _section(page, "data") and "analyst only" in _section(page, "utility")
    assert "analyst only" in _section(page, "audit") and "released" in _section(page, "messages")


def test_non_private_run_is_labelled(docs):
    km = dict(docs["run"]["comparison"]["kmeans"])
    km.update(config=docs["run"]["config"] | {"method": "kmeans"}, dataset=docs["run"]["dataset"],
              messages=[], created="x", version=__version__)
    page = rep.build_report(km, include_plotlyjs=False)
    assert "NOT PRIVATE" in _section(page, "summary") and "∞ (non-private)" in _section(page, "privacy")
    assert "This run is non-private" in _section(page, "scope")


def test_from_json_files_and_cli(docs, tmp_path, capsys):
    paths = {k: write_json(docs[k], tmp_path / f"{k}.json") for k in ("run", "sweep", "audit")}
    loaded = {k: rep.load_doc(p) for k, p in paths.items()}
    assert loaded["run"]["privacy"]["ledger"][0]["epsilon"] == docs["run"]["privacy"]["ledger"][0]["epsilon"]
    parser = argparse.ArgumentParser()
    report_cmd.register_cli(parser.add_subparsers(dest="command"))
    out = tmp_path / "report.html"
    args = parser.parse_args(["report", "--run", str(paths["run"]), "--sweep", str(paths["sweep"]), "--audit",
                              str(paths["audit"]), "--out", str(out), "--no-charts"])
    assert args.func(args) == 0
    html = out.read_text(encoding="utf-8")
    for s in rep.SECTIONS:
        assert f"<section id='{s}'" in html
    # "inf" strings from JSON read as ∞, and the kmeans comparison is labelled non-private
    assert "∞ (non-private)" in _section(html, "utility")
    for s in docs["audit"]["summary"]:
        assert rep.fmt_num(s["epsilon_lb"]) in _section(html, "audit")
    assert "wrote" in capsys.readouterr().out


@pytest.mark.parametrize("edit", ["overall epsilon", "overall delta", "one entity", "ledger rows", "no ledger",
                                  "comparison", "damaged row", "epsilon off by a thousandth"])
def test_a_document_whose_stated_guarantee_is_not_its_ledgers_is_refused(docs, edit):
    run = json.loads(json.dumps(docs["run"]))
    p = run["privacy"]
    assert p["ledger"] and p["per_entity"] and math.isfinite(p["epsilon"]) and p["epsilon"] > 0
    rep.build_report(run, include_plotlyjs=False, public=True)      # as the run wrote it: a report
    if edit == "overall epsilon":
        p["epsilon"] = p["epsilon"] / 10
    elif edit == "overall delta":
        p["delta"] = p["delta"] / 10
    elif edit == "one entity":
        p["per_entity"][-1]["epsilon"] = p["per_entity"][-1]["epsilon"] / 10
    elif edit == "ledger rows":
        for r in p["ledger"]:
            r["epsilon"], r["rho"] = r["epsilon"] / 100, (None if r.get("rho") is None else r["rho"] / 1e4)
    elif edit == "no ledger":
        del p["ledger"]
    elif edit == "comparison":
        # a non-private comparison (its ledger: raw rows, ε = ∞) stated as private
        name, doc = next((k, d) for k, d in run["comparison"].items() if d["privacy"]["epsilon"] == math.inf)
        doc["privacy"]["epsilon"] = 0.5
    elif edit == "damaged row":
        p["ledger"][0]["epsilon"] = "one"
    else:
        p["epsilon"] = p["epsilon"] * 1.001
    with pytest.raises(DataError, match="ledger|damaged privacy section") as err:
        rep.build_report(run, include_plotlyjs=False, public=True)
    assert "python -m dpfed_core run` wrote" in str(err.value)
    if edit == "comparison":
        assert repr(name) in str(err.value)


def test_missing_optional_parts_and_bad_input(docs, tmp_path):
    page = rep.build_report(docs["run"], include_plotlyjs=False)
    assert "No sweep included" in _section(page, "tradeoff")
    assert "No audit included" in _section(page, "audit")
    with pytest.raises(DataError, match="run document"):
        rep.build_report({"hello": 1})
    no_privacy = {k: v for k, v in docs["run"].items() if k != "privacy"}   # told what a run document holds
    with pytest.raises(DataError, match=r"a result document of `python -m dpfed_core run` \(with 'config' and 'priv"):
        rep.build_report(no_privacy)
    no_ledger = {**docs["run"], "privacy": {k: v for k, v in docs["run"]["privacy"].items() if k != "ledger"}}
    with pytest.raises(DataError, match=r"has no privacy ledger \(privacy\.ledger\), so its stated ε cannot be chec"):
        rep.build_report(no_ledger)
    with pytest.raises(DataError, match="audit"):
        rep.build_report(docs["run"], audit_doc=docs["sweep"])
    with pytest.raises(DataError, match="give it as --sweep"):
        rep.build_report(docs["sweep"], public=True)           # never a report calling a DP sweep non-private
    other = json.loads(json.dumps(docs["sweep"], default=str))
    other["dataset"]["n_users"] += 1                            # a sweep of other data: refused, not mixed in
    with pytest.raises(DataError, match="the sweep was computed on other data"):
        rep.build_report(docs["run"], sweep_doc=other)
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    with pytest.raises(DataError, match="not a JSON"):
        rep.load_doc(bad)
    with pytest.raises(DataError, match="no such"):
        rep.load_doc(tmp_path / "missing.json")


def test_report_from_session(docs):
    # the dashboard's session objects: {"doc", …} wrappers
    data = rep.report_from_session({"doc": docs["run"], "config": None}, comparison={"docs": docs["run"]["comparison"]},
                                   sweep={"key": 1, "doc": docs["sweep"]}, audit=docs["audit"], dataset=docs["dataset"])
    html = data.decode("utf-8")
    assert "<section id='audit'" in html and "No sweep included" not in html
    assert math.isfinite(docs["run"]["privacy"]["epsilon"])


def test_summary_states_the_trust_model_and_the_coalition_epsilon():
    """A compliance officer reads the trust model in the summary: secure aggregation or not, where the
    sum was formed, the coalition ε, and the accountant."""
    from dpfed_core.config import RunConfig
    from dpfed_core.data.loaders import load_data
    from dpfed_core.evaluation.experiments import run_method

    ds = load_data("sample:clinic")
    for aggregation in ("secure", "none"):
        sim, _ = run_method(ds, RunConfig(method="dp-cooccurrence", epsilon=1.0, aggregation=aggregation, rank=3,
                                          simulation=True, max_iter=20))
        # the same record as production noise would leave it (the simulation's own is below)
        doc = {**sim, "privacy": {**sim["privacy"], "simulation": False}}
        summary = _section(rep.build_report(doc, generated="x"), "summary")
        coal = doc["privacy"]["trust"]["against_server_and_other_entities"]["epsilon"]
        assert "trust model" in summary and "accountant" in summary
        assert doc["privacy"]["accountant"]["within_run"].split(" (")[0] in summary
        server = doc["privacy"]["trust"]["against_server"]["epsilon"]
        row = re.search(r"coalition\)</td><td>(.*?)</td>", summary)
        assert row, "the summary's coalition row is missing"
        if aggregation == "secure":
            assert "secure aggregation" in summary and "in-process" in summary
            assert f"ε = {rep.fmt_eps(coal)}" in summary and coal > 1
            # the coalition row states the coalition's ε, not the guarantee against the server alone
            assert row.group(1).startswith(f"ε = {rep.fmt_eps(coal)}") and rep.fmt_eps(coal) != rep.fmt_eps(server)
        else:
            assert "no secure aggregation" in summary
            assert row.group(1).startswith(f"ε = {rep.fmt_eps(server)}")
        # seeded noise protects no one: the simulation states no coalition ε, only what production's would be
        sim_summary = _section(rep.build_report(sim, generated="x"), "summary")
        sim_row = re.search(r"coalition\)</td><td>(.*?)</td>", sim_summary).group(1)
        assert sim_row == (f"none: simulation noise is reproducible from the seed (would be ε = {rep.fmt_eps(coal)}, "
                           "δ = 1e-06 with production noise)")
        sim_trust = re.search(r"trust model</td><td>(.*?)</td>", sim_summary).group(1)
        assert sim_trust.endswith(sim_row) and "gives ε" not in sim_trust


@pytest.mark.parametrize("eps, word", [(0.5, "strong"), (1.0, "strong"), (2.0, "moderate"), (3.0, "moderate"),
                                       (5.0, "weak"), (10.0, "weak"), (20.0, "very weak")])
def test_epsilon_in_words_names_the_strength_the_text_defines(eps, word):
    """The first screen says what ε means for one person and how strong that is, by the thresholds it
    states in the same sentence (≤ 1 strong, 1–3 moderate, 3–10 weak, above 10 very weak)."""
    from dpfed_core.reporting.report_sections import epsilon_in_words

    text = epsilon_in_words(eps, 1e-6)
    assert text.endswith(f"this is {word}.")
    factor = math.exp(eps)
    assert f"at most {factor:.3g} times" in text if factor < 1e6 else f"at most {factor:.1e} times" in text


def test_the_parameters_state_every_method_parameter_the_run_was_given(docs):
    run = docs["run"]
    given = {**run, "config": {**run["config"], "method_params": {"pop_share": 0.3, "max_items": 123}}}
    params = _section(rep.build_report(given, generated="2026-01-02T03:04:05+00:00"), "parameters")
    assert "Other method parameters" in params
    assert "<td>pop_share</td>" in params and "<td>max_items</td>" in params and ">123<" in params


def test_the_utility_section_states_the_runs_own_split(docs):
    """The sentence over the metrics names the split the run used, not the defaults."""
    run = docs["run"]
    assert "(20 % of users, 5 hidden entries each)" in _section(rep.build_report(run), "utility")
    given = {**run, "config": {**run["config"], "test_fraction": 0.3, "n_hidden": 1}}
    utility = _section(rep.build_report(given, generated="2026-01-02T03:04:05+00:00"), "utility")
    assert "(30 % of users, 1 hidden entry each)" in utility and "20 %" not in utility
    unsaid = {**run, "config": {k: v for k, v in run["config"].items() if k not in ("test_fraction", "n_hidden")}}
    assert "hidden" not in _section(rep.build_report(unsaid), "utility")


def _text(page: str) -> str:
    """What a reader sees: the markup without the inline plotly.js."""
    return re.sub(r"<script type='text/javascript'>.*?</script>", "", page, count=1, flags=re.S)


def test_public_report_holds_no_number_computed_on_private_data(docs):
    kw = dict(sweep_doc=docs["sweep"], audit_doc=docs["audit"], dataset=docs["dataset"], generated="x",
              include_plotlyjs=False)
    full, public = rep.build_report(docs["run"], **kw), rep.build_report(docs["run"], public=True, **kw)
    exact = []  # every utility number, overall and per entity, of the run and its comparisons
    for d in [docs["run"], *docs["run"]["comparison"].values()]:
        exact += [v for k, v in d["overall"].items() if k in rep.METRICS]
        exact += [e[k] for e in d["entities"] for k in rep.METRICS if k in e]
    exact += [r["auc"] for r in docs["audit"]["summary"]]
    shown = [rep.fmt_num(v) for v in exact if isinstance(v, float) and math.isfinite(v) and v not in (0.0, 1.0)]
    assert shown and sum(s in _text(full) for s in shown) >= len(shown) // 2  # the analyst's version has them
    leaked = [s for s in shown if len(s) >= 5 and s in _text(public)]
    assert not leaked, leaked
    for sid in ("utility", "tradeoff", "audit"):
        assert "Withheld from this public version" in _section(public, sid)
        assert "<table" not in _section(public, sid)
    assert "analyst only" not in public  # every section of the public version is public
    # and the first screen says so to its readers; the analyst's version says what it holds beyond it
    assert "no number computed on the private data" in _text(public)
    assert "publish the public version instead" in _text(full)
    assert "publish the public version instead" not in _text(public)
    # no catalogue was declared: how many distinct items the private rows hold is the analyst's only
    # (one user moves it by the items only that user holds); a declared catalogue's size is public
    ds = docs["run"]["dataset"]
    assert ds["item_source"] == "data"
    n_ent, n_items = rep.fmt_num(ds["n_entities"]), rep.fmt_num(ds["n_items"])
    assert f"{n_ent} / {n_items}" in _text(full) and f"{n_items} items" in _text(full)
    assert f"{n_ent} / {n_items}" not in _text(public) and f"{n_items} items" not in _text(public)
    from dpfed_core.reporting.report_sections import ITEMS_WITHHELD

    assert all(ITEMS_WITHHELD in _section(public, sid) for sid in ("summary", "data"))
    declared = {**docs["run"], "dataset": {**ds, "item_source": "declared"}}
    assert f"{n_ent} / {n_items}" in _text(rep.build_report(declared, public=True, generated="x", include_plotlyjs=False))
    # a declared catalogue that leaves some of the data's items out: its own size is public, the count
    # of the entities' items outside it is read from the private rows
    from dpfed_core.reporting.report_sections import DECLARED_OUTSIDE_WITHHELD

    part = {**docs["run"], "dataset": {**ds, "item_source": "declared", "n_declared": 7}}
    pub = _text(rep.build_report(part, public=True, generated="x", include_plotlyjs=False))
    assert f"{n_ent} / 7 declared ({html.escape(DECLARED_OUTSIDE_WITHHELD)})" in pub and f"/ {n_items}" not in pub
    assert f"{n_ent} / {n_items} (7 declared" in _text(rep.build_report(part, public=False, generated="x",
                                                                          include_plotlyjs=False))


@pytest.fixture(scope="module")
def cooc_doc():
    from report_docs import small_dataset
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split, run_method

    ds = small_dataset()
    cfg = RunConfig(method="dp-cooccurrence", epsilon=3.0, delta=1e-6, rank=3, seed=0, max_iter=50,
                    aggregation="secure")
    return run_method(ds, cfg, make_split(ds, cfg))[0]


def test_parameters_omit_k_for_a_method_that_takes_none_and_the_default_k_is_not_read_off_the_data(cooc_doc, docs):
    from report_docs import small_dataset
    from dpfed_core.data.dataset import FederatedDataset
    from dpfed_core.evaluation.defaults import DEFAULT_K, default_config

    params = _section(rep.build_report(cooc_doc, public=True, generated="x", include_plotlyjs=False), "parameters")
    assert "<td>k</td>" not in params and "<td>rank</td>" in params
    # nor a weighting of prototypes it never sent, even in a document that recorded one
    said = dict(cooc_doc, config={**cooc_doc["config"], "server_weighting": "counts"})
    params = _section(rep.build_report(said, public=True, generated="x", include_plotlyjs=False), "parameters")
    assert "<td>server_weighting</td>" not in params and "<td>rank</td>" in params
    proto = _section(rep.build_report(docs["run"], public=True, generated="x", include_plotlyjs=False), "parameters")
    assert "<td>k</td>" in proto and "<td>server_weighting</td>" in proto
    ds = small_dataset()
    fewer = FederatedDataset.from_parts(ds.X[:-40], ds.entity_of_user[:-40], value_kind="counts", value_max=10)
    assert default_config(ds, "dp-prototypes").k == default_config(fewer, "dp-prototypes").k == DEFAULT_K


def test_epsilon_chart_shows_the_composed_guarantee_not_a_stack_of_stages(cooc_doc, monkeypatch):
    from dpfed_core.reporting import plots
    from dpfed_core.reporting.plots import privacy_composed_bars
    from dpfed_core.ui.tables import per_stage_table

    p = cooc_doc["privacy"]
    stage_sum = {}
    for r in p["per_stage"]:
        stage_sum[r["entity"]] = stage_sum.get(r["entity"], 0.0) + r["epsilon"]
    composed = {e["entity"]: e["epsilon"] for e in p["per_entity"]}
    # zCDP: the stages' rows add up to more than the guarantee; a stacked chart would overstate it
    assert all(stage_sum[e] > composed[e] * 1.3 for e in composed)
    assert max(composed.values()) == pytest.approx(p["epsilon"]) and p["epsilon"] <= 3.0 + 1e-9
    fig = privacy_composed_bars(p["per_entity"], 3.0, p["trust"]["against_server_and_other_entities"]["epsilon"])
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == 1 and list(bars[0].y) == pytest.approx(list(composed.values()))
    assert fig.layout.barmode != "stack"
    drawn = []  # the rows the report's chart draws: each entity's composed ε, never the stages' rows

    def recorded(rows, *args, **kwargs):
        drawn.append(list(rows))
        return privacy_composed_bars(rows, *args, **kwargs)

    monkeypatch.setattr(plots, "privacy_composed_bars", recorded)
    page = rep.build_report(cooc_doc, generated="x")
    assert drawn == [p["per_entity"]]
    priv = _section(page, "privacy")
    assert "fig-stages" in priv and "stacked" not in page
    assert "do not add up" in priv and "zCDP" in priv
    wide = per_stage_table(cooc_doc)  # the dashboard's ledger tab
    assert list(wide["ε (composed)"]) == pytest.approx([composed[e] for e in wide["entity"]])
    assert "total ε" not in wide.columns


def test_first_screen_in_plain_words(cooc_doc):
    p = cooc_doc["privacy"]
    page = rep.build_report(cooc_doc, generated="x", public=True)
    assert page.index("<section id='overview'") < page.index("<section id='summary'")
    ov = _section(page, "overview")
    coal = p["trust"]["against_server_and_other_entities"]["epsilon"]
    # the coalition figure as prominent as the main one: both in the same big-number boxes
    assert ov.count("class='num'") == 2
    assert f"ε = {rep.fmt_eps(p['epsilon'])}</span>" in ov and f"ε = {rep.fmt_eps(coal)}</span>" in ov
    assert f"{math.exp(p['epsilon']):.3g} times" in ov and "Who sees what" in ov
    assert "only the sum over entities" in ov  # secure aggregation: the server sees no single release
    assert "zCDP" not in ov and "PLD" not in ov  # accounting vocabulary stays below
    assert "not charged to a budget store" in ov
    charged = json.loads(json.dumps(cooc_doc, default=str))
    charged["privacy"]["accountant"] = {"within_run": "x", "across_releases": "zCDP across releases",
                                        "most_spent_entity": "clinic A", "spent_epsilon": 7.25, "delta": 1e-5}
    ov = _section(rep.build_report(charged, generated="x"), "overview")
    # the total is an ε at the budget's δ, which may differ from the run's own: said with it
    assert "has spent ε = 7.25 at δ = 1e-05 (the budget's δ" in ov and "clinic A" in ov
    assert "up to this run" in ov and "budget show" in ov and "no overall guarantee" not in ov
    # every entity spent alike: none is named as the most spent
    ov = _section(rep.build_report({**charged, "privacy": {**charged["privacy"], "accountant": {
        **charged["privacy"]["accountant"], "every_entity_alike": True}}}, generated="x"), "overview")
    assert "every entity has spent ε = 7.25" in ov and "most-spent" not in ov
    charged["privacy"]["accountant"]["non_private_entities"] = ["clinic B", "clinic C"]
    ov = _section(rep.build_report(charged, generated="x", public=True), "overview")
    # a non-private release recorded on these data voids the overall guarantee of the entities it touched
    assert ("After this run there is no overall guarantee for the people of 2 entities (clinic B, clinic C)" in ov
            and "Counting the DP releases alone, the most-spent entity (clinic A) has spent ε = 7.25" in ov), ov
    assert ov.index("no overall guarantee") < ov.index("has spent ε")  # the void said before any figure


def test_first_screen_of_a_non_private_run_says_so(docs):
    ov = _section(rep.build_report(docs["run"]["comparison"]["kmeans"], generated="x"), "overview")
    assert "NOT private" in ov and "class='num'" not in ov


def test_every_number_reads_one_way_and_document_text_is_escaped():
    """fmt_num: yes/no for booleans, ∞ and −∞, — for a missing value, ints as is, other numbers (a
    whole float too) to 4 significant digits, a word from a document escaped; fmt_eps: 4 digits rounded
    up (never below what holds), ∞ labelled non-private; a table escapes every cell and header it did not receive as HTML."""
    from dpfed_core.reporting.report_format import fmt_eps, fmt_num, html_table

    assert (fmt_num(True), fmt_num(False)) == ("yes", "no")
    assert (fmt_num(math.inf), fmt_num(-math.inf), fmt_num("-inf"), fmt_num("inf")) == ("∞", "−∞", "−∞", "∞")
    assert (fmt_num(None), fmt_num(math.nan), fmt_num(123456), fmt_num(123456.0)) == ("—", "—", "123456", "1.235e+05")
    assert fmt_num(0.123456) == "0.1235" and fmt_num("<b>n/a</b>") == "&lt;b&gt;n/a&lt;/b&gt;"
    assert (fmt_eps(0.123456), fmt_eps(0.12341), fmt_eps("inf"), fmt_eps(2)) == ("0.1235", "0.1235", "∞ (non-private)", "2")
    t = html_table([{"a": "<i>x</i>", "b": 0.5, "c": "<b>ok</b>"}], [("a", "<A>"), ("b", "B"), ("c", "C")], raw=["c"])
    assert "<td>&lt;i&gt;x&lt;/i&gt;</td>" in t and "<th>&lt;A&gt;</th>" in t and "<td class='num'>0.5</td>" in t
    assert "<td><b>ok</b></td>" in t
    assert "colspan='3' class='muted'>none" in html_table([], [("a", "A"), ("b", "B"), ("c", "C")])


def test_the_audit_figures_label_non_private_runs_pick_a_target_by_kind_and_draw_infinity_right_of_the_grid():
    from dpfed_core.reporting.report_figures import _run_label, audit_epsilon_figure, audit_roc_figure

    assert _run_label({"method": "kmeans", "requested_epsilon": 1.0}) == "kmeans (non-private)"
    assert _run_label({"method": "dp-gaussian", "requested_epsilon": 2.0}) == "dp-gaussian ε=2"
    assert _run_label({"method": "dp-gaussian", "requested_epsilon": "inf"}) == "dp-gaussian (non-private)"

    def res(target, kind, eps):
        return {"attack": "distance", "target": target, "target_kind": kind, "method": "dp-gaussian",
                "requested_epsilon": eps, "auc": 0.6, "roc": {"fpr": [0, 1], "tpr": [0, 1]}}

    doc = {"results": [res("synthetic 1", "synthetic", 1.0), res("user 7", "outlier", 1.0), res("user 7", "outlier", 4.0)]}
    fig = audit_roc_figure(doc, target="outlier")
    assert len(fig.data) == 3 and "user 7" in fig.layout.title.text  # the chance line and one curve per ε
    assert [t.line.dash for t in fig.data[1:]] == ["solid", "dash"]
    summ = [{"method": "dp-gaussian", "epsilon": e, "epsilon_lb": 0.1, "auc": 0.5, "epsilon_lb_target": "user 7",
             "max_certifiable_epsilon": 3.0} for e in (1.0, 4.0, "inf")]
    fig = audit_epsilon_figure({"summary": summ})
    inf_x = fig.layout.xaxis.tickvals[-1]
    assert fig.layout.xaxis.ticktext[-1] == "∞" and inf_x == pytest.approx(4.0 * 10 ** 0.6)
    diamonds = [t for t in fig.data if t.marker is not None and t.marker.symbol == "diamond"]
    assert len(diamonds) == 1 and list(diamonds[0].x) == [inf_x]


def test_the_report_command_takes_a_metric_of_the_run_and_writes_the_public_version_when_asked(docs, tmp_path):
    run = write_json(docs["run"], tmp_path / "run.json")
    parser = argparse.ArgumentParser()
    report_cmd.register_cli(parser.add_subparsers(dest="command"))
    out = tmp_path / "public.html"
    args = parser.parse_args(["report", "--run", str(run), "--out", str(out), "--no-charts", "--public"])
    assert args.func(args) == 0
    html = out.read_text(encoding="utf-8")
    assert "Withheld from this public version" in _section(html, "utility")
    for count in ("n_users", "n_test_users"):  # counts of the run document, never a metric to chart
        assert count in docs["run"]["overall"]
        args = parser.parse_args(["report", "--run", str(run), "--out", str(out), "--metric", count])
        with pytest.raises(DpfedError, match=f"--metric '{count}' is not a metric of the run document"):
            args.func(args)


def test_a_public_report_without_a_sweep_or_an_audit_marks_no_section_analyst_only(docs):
    public = rep.build_report(docs["run"], public=True, include_plotlyjs=False)
    assert "No sweep included" in _section(public, "tradeoff") and "No audit included" in _section(public, "audit")
    assert "analyst only" not in public  # every section of the public version is public
    assert "analyst only" in _section(rep.build_report(docs["run"], include_plotlyjs=False), "tradeoff")


def _log_run(private: bool = True, secure: bool = False) -> dict:
    """A run document reduced to what the plain-words sections read: its privacy record and message log."""
    eps = 1.0 if private else math.inf
    ledger = [{"entity": e, "stage": "release", "mechanism": "Laplace", "epsilon": eps, "delta": 0.0,
               "sensitivity": 1.0, "noise_scale": 1.0} for e in ("A", "B")]
    privacy = {"private": private, "epsilon": eps, "delta": 0.0, "requested_delta": 0.0, "ledger": ledger}
    if secure:
        privacy["trust"] = {"aggregation": "secure"}
    return {"privacy": privacy, "messages": [
        {"round": 1, "sender": "A", "receiver": "server", "content": "noisy sums", "shape": [2, 3], "bytes": 100},
        {"round": 1, "sender": "B", "receiver": "server", "content": "noisy sums", "shape": [2, 3], "bytes": 40},
        {"round": 1, "sender": "server", "receiver": "A", "content": "item factors V", "shape": [3, 2], "bytes": 7}]}


def test_what_is_released_and_who_sees_it_are_read_off_the_message_log_by_direction():
    from dpfed_core.reporting.report_sections import _messages, released_from_messages, who_sees_what

    post = "released (post-processing of what the server received: no extra privacy cost)"
    assert released_from_messages(_log_run()) == [
        {"what": "Round 1, entity → server", "content": "noisy sums (2 messages, shape 2 × 3, 140 bytes)",
         "status": "released"},
        {"what": "Round 1, server → entity", "content": "item factors V (1 message, shape 3 × 2, 7 bytes)",
         "status": post}]
    assert released_from_messages(_log_run(private=False))[0]["status"] == "released — NON-PRIVATE for this method"
    # a protocol message without an array (SecAgg+ keys, a policy request) releases nothing, either way
    keys = _log_run()
    keys["messages"] = [{"round": 1, "sender": "server", "receiver": "A", "content": "SecAgg+ public keys",
                         "shape": None, "bytes": 9},
                        {"round": 1, "sender": "A", "receiver": "server", "content": "decision", "shape": None,
                         "bytes": 5}]
    assert [r["status"] for r in released_from_messages(keys)] == [
        "a protocol message: no data array, nothing released"] * 2
    # the server is said to see what was sent to it, never what it sent back
    assert dict(who_sees_what(_log_run(), False))["The server"] == (
        "each entity's noisy (differentially private) release (noisy sums)")
    assert dict(who_sees_what(_log_run(secure=True), True))["The server"].startswith(
        "only the sum over entities of their noisy (differentially private) releases (noisy sums)")
    # per entity: what it sent out and what it received, each counted on its own side
    per = _messages(_log_run())
    cells = "".join(f"<td class='num'>{v}</td>" for v in (1, 100, 1, 7))
    assert f"<td>A</td>{cells}" in per and "3 messages in round(s) 1, 147 bytes in total" in per


def test_the_accountant_and_the_ledgers_check_against_the_request_state_both_parts():
    from dpfed_core.reporting.report_sections import _privacy, accountant_text, k_explanation

    assert accountant_text({}) == "within this run: basic composition (ε and δ add up)"
    assert accountant_text({"accountant": {"within_run": "zCDP", "across_releases": "PLD over the releases"}}) == (
        "within this run: zCDP; across the data's releases: PLD over the releases")
    p = {"private": True, "epsilon": 1.0, "delta": 1e-6, "requested_epsilon": 1.0, "requested_delta": 1e-6,
         "label": "x", "samplers": [], "per_stage": [], "ledger": []}
    assert "The ledger's budget is within the request." in _privacy({"privacy": p}, False)
    # a δ above the request is a ledger beyond it, whatever its ε
    assert "EXCEEDS the request" in _privacy({"privacy": {**p, "delta": 1e-5}}, False)
    run = {"config": {"method": "dp-gaussian", "k": 5, "prototype_params": {"cluster_size": 100}},
           "messages": [{"round": 1, "sender": "A", "receiver": "server", "content": "prototypes", "shape": [1, 4]}]}
    note = k_explanation(run)
    assert "clip(⌊n̂ / 100⌋, 1, 5)" in note and "fewer than about 200 users sends one prototype" in note


def test_a_violation_of_the_audit_is_called_one_and_a_public_report_says_it_is_public(docs):
    audit = json.loads(json.dumps(docs["audit"], default=str))
    page = rep.build_report(docs["run"], audit_doc=audit, include_plotlyjs=False, generated="x")
    assert "VIOLATION:" not in _section(page, "audit")
    audit["summary"][0]["verdict"] = "VIOLATION"
    hit = audit["summary"][0]
    audit_sec = _section(rep.build_report(docs["run"], audit_doc=audit, include_plotlyjs=False, generated="x"), "audit")
    assert "VIOLATION:</b> an empirical lower bound exceeds the claimed ε" in audit_sec
    assert f"{_esc(hit['method'])} ε={rep.fmt_num(hit['epsilon'])}" in audit_sec
    public = rep.build_report(docs["run"], include_plotlyjs=False, generated="x", public=True)
    assert re.search(r"<title>[^<]*\(public version\)</title>", public)
    assert "(public version)" not in rep.build_report(docs["run"], include_plotlyjs=False, generated="x")


def test_a_run_document_without_its_entity_summary_takes_the_counts_from_the_dataset_given(docs):
    run = {k: v for k, v in docs["run"].items() if k != "entity_summary"}
    bare = _section(rep.build_report(run, include_plotlyjs=False, generated="x"), "data")
    assert "not in the run document" in bare
    data = _section(rep.build_report(run, dataset=docs["dataset"], include_plotlyjs=False, generated="x"), "data")
    assert "not in the run document" not in data
    for s in docs["dataset"].summary():
        assert (f"<td>{_esc(s['entity'])}</td><td class='num'>{s['users']}</td>" in data
                and f"<td class='num'>{s['items_used']}</td><td class='num'>{s['interactions']}</td>" in data)


def test_a_sweep_of_other_data_of_the_same_sizes_is_told_apart_by_the_store_key(docs):
    """Two charged documents name their data by the budget store's content key: data of the same sizes
    under another key are other data, and the report refuses to put the sweep beside the run."""
    run, sweep = docs["run"], docs["sweep"]
    here = {**run, "odometer": {"dataset_key": "key-a"}}
    assert rep.same_data(here, {**sweep, "odometer": {"dataset_key": "key-a"}})
    other = {**sweep, "dataset": dict(run["dataset"]), "odometer": {"dataset_key": "key-b"}}
    assert not rep.same_data(here, other)
    with pytest.raises(DataError, match="other data"):
        rep.build_report(here, sweep_doc=other, include_plotlyjs=False)


def test_documents_charged_to_different_stores_are_not_reported_as_one_history(docs, tmp_path, capsys):
    """Each document states the spend "in total" its own store recorded: a run of one store beside a
    sweep of another would read two partial totals as one history, neither counting the other's."""
    from dpfed_core.cli.main import main

    run = {**docs["run"], "odometer": {"dataset_key": "key-a", "store": "/data/a.sqlite3"}}
    sweep = {**docs["sweep"], "odometer": {"dataset_key": "key-a", "store": "/data/b.sqlite3"}}
    with pytest.raises(DataError, match=r"the sweep document was charged to the budget store /data/b\.sqlite3, "
                                        r"the run to /data/a\.sqlite3") as exc:
        rep.build_report(run, sweep_doc=sweep, include_plotlyjs=False)
    assert exc.value.param == "sweep"
    same = {**sweep, "odometer": {"dataset_key": "key-a", "store": "/data/a.sqlite3"}}
    assert "<html" in rep.build_report(run, sweep_doc=same, include_plotlyjs=False)
    paths = []
    for name, doc in (("r.json", run), ("s.json", sweep)):
        paths.append(tmp_path / name)
        paths[-1].write_text(json.dumps(doc))
    out = tmp_path / "rep.html"
    assert main(["report", "--run", str(paths[0]), "--sweep", str(paths[1]), "--out", str(out)]) == 2
    assert "make a report of each" in capsys.readouterr().err and not out.exists()


def test_a_sweep_of_other_interactions_or_without_runs_and_an_audit_of_another_store_are_refused(docs):
    run = docs["run"]
    other = json.loads(json.dumps(docs["sweep"], default=str))
    other["dataset"]["n_interactions"] = run["dataset"]["n_interactions"] + 1   # same sizes, other data
    with pytest.raises(DataError, match="the sweep was computed on other data"):
        rep.build_report(run, sweep_doc=other, include_plotlyjs=False)
    no_runs = {k: v for k, v in docs["sweep"].items() if k != "runs"}
    with pytest.raises(DataError, match="the sweep document has no 'runs'") as err:
        rep.build_report(run, sweep_doc=no_runs, include_plotlyjs=False)
    assert err.value.param == "sweep"
    here = {**run, "odometer": {"dataset_key": "key-a", "store": "/data/a.sqlite3"}}
    audit = {**docs["audit"], "odometer": {"dataset_key": "key-a", "store": "/data/b.sqlite3"}}
    with pytest.raises(DataError, match=r"the audit document was charged to the budget store /data/b\.sqlite3") as err:
        rep.build_report(here, audit_doc=audit, include_plotlyjs=False)
    assert err.value.param == "audit"
    with pytest.raises(DataError, match=r"give it as --sweep \(or --audit\)"):
        rep.build_report(docs["audit"], include_plotlyjs=False)    # an audit given as the run: told where it goes


def test_a_report_from_the_session_is_the_public_version_when_asked_and_counts_the_dataset_given(docs):
    run = {k: v for k, v in docs["run"].items() if k not in ("entity_summary", "comparison")}
    public = rep.report_from_session({"doc": run}, dataset=docs["dataset"], public=True).decode("utf-8")
    assert "(public version)" in public
    comps = docs["run"]["comparison"]
    analyst = rep.report_from_session({"doc": run}, comparison={"docs": comps}, dataset=docs["dataset"])
    analyst = analyst.decode("utf-8")
    assert "(public version)" not in analyst
    util = _section(analyst, "utility")
    assert all(f"<td>{name}</td>" in util for name in comps) and "<td>docs</td>" not in util
    data = _section(analyst, "data")
    assert "not in the run document" not in data
    for s in docs["dataset"].summary():
        assert f"<td class='num'>{s['interactions']}</td>" in data


def test_the_report_states_the_title_given(docs):
    page = rep.build_report(docs["run"], title="Q3 <audit> of clinics", include_plotlyjs=False)
    assert "<title>Q3 &lt;audit&gt; of clinics</title>" in page and "<h1>Q3 &lt;audit&gt; of clinics</h1>" in page


def test_the_tradeoff_section_is_the_metric_asked_for(docs):
    page = rep.build_report(docs["run"], sweep_doc=docs["sweep"], metric="ndcg_at_10", include_plotlyjs=False)
    trade = _section(page, "tradeoff")
    assert f"metric: {html.escape('NDCG@10 (↑)')}, mean ± sd" in trade and "metric: MAR" not in trade


@pytest.fixture(scope="module")
def with_dp_comparison(docs):
    """The run with a DP comparison (dp-popularity) beside its non-private ones and ``local``'s none."""
    from report_docs import small_dataset
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split, run_method

    ds = small_dataset()
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6, rank=3, seed=0, max_iter=50)
    pop = run_method(ds, cfg, make_split(ds, cfg))[0]
    run = json.loads(json.dumps(docs["run"], default=str))
    run["comparison"] = {**run["comparison"], "dp-popularity": json.loads(json.dumps(pop, default=str))}
    return run


def test_every_release_the_spend_counts_is_named_in_both_versions_and_a_voided_entity_is_said(docs,
                                                                                             with_dp_comparison):
    """The spend figures count the comparison methods' releases, the sweep's and the audit's: each is named
    with its method and ε (a DP comparison's ledger rows too), the message log claims only the run's own
    method's messages, the sweep's grid and spend are stated in the public version, and an entity a
    non-private release left without an overall guarantee is named — never a utility number."""
    run = with_dp_comparison
    pop = run["comparison"]["dp-popularity"]
    sweep = json.loads(json.dumps(docs["sweep"], default=str))
    sweep["privacy"] = {"accountant": {"across_releases": "zCDP", "most_spent_entity": "clinic A",
                                       "spent_epsilon": 6.125, "delta": 1e-5}}
    audit = json.loads(json.dumps(docs["audit"], default=str))
    audit["odometer"] = {"store": "/tmp/s.sqlite3", "releases": [9]}
    kw = dict(sweep_doc=sweep, audit_doc=audit, include_plotlyjs=False, generated="x")
    for public in (True, False):
        page = rep.build_report(run, public=public, **kw)
        ov, msgs, priv = (_text(_section(page, s)) for s in ("overview", "messages", "privacy"))
        pop_eps = f"ε = {rep.fmt_eps(pop['privacy']['epsilon'])}"
        assert "comparison dp-popularity" in ov and pop_eps in ov
        assert "comparison dp-popularity" in msgs and pop_eps in msgs and "Other releases this report counts" in msgs
        assert "nothing else was sent" not in msgs and "Every message of this run's method (dp-prototypes)" in msgs
        assert "The comparison methods' ledgers" in priv
        assert priv.count("<td>dp-popularity</td>") == len(pop["privacy"]["ledger"])
        assert "comparison local" not in ov and "comparison individual" not in ov  # nothing left an entity
        # the sweep's own spend and grid are accounting, stated in both versions
        assert "ε = 6.125" in ov and "ε ∈ {1, ∞}" in ov
        trade = _text(_section(page, "tradeoff"))
        assert "ε = 6.125" in trade and "{1, ∞}" in trade
        # non-private releases: the audit's entity, and every entity for central/kmeans and the ε = ∞ point
        audit_line = ("Entity clinic B has no overall guarantee: a non-private release (the membership-inference "
                      "audit included here).")
        for sid in ("overview", "summary", "audit"):
            assert audit_line in _text(_section(page, sid)), sid
        assert ("Entities clinic A, clinic B have no overall guarantee: a non-private release (the comparison "
                "central).") in ov
        assert "sweep" in re.search(r"included</td><td>(.*?)</td>", page).group(1)
    # the public version still holds no utility number of any method, the DP comparison's included
    public = _text(rep.build_report(run, public=True, **kw))
    exact = [v for d in [run, *run["comparison"].values()] for k, v in d["overall"].items()
             if k in rep.METRICS and isinstance(v, float) and math.isfinite(v) and v not in (0.0, 1.0)]
    exact += [e[k] for e in pop["entities"] for k in rep.METRICS if isinstance(e.get(k), float)]
    assert not [s for s in map(rep.fmt_num, exact) if len(s) >= 5 and s in public]


def test_comparison_documents_given_beside_the_run_are_in_its_provenance(docs, with_dp_comparison):
    comps = {k: v for k, v in with_dp_comparison["comparison"].items()}
    run = {k: v for k, v in docs["run"].items() if k != "comparison"}
    prov = _section(rep.build_report(run, comparison=comps, include_plotlyjs=False, public=True), "provenance")
    from dpfed_core.reporting.report_sections import _sha

    for name, d in comps.items():
        assert f"<td>comparison {_esc(name)}</td>" in prov and _sha(d) in prov


def test_a_simulation_run_calls_no_release_private_and_states_no_epsilon():
    from dpfed_core.reporting.report_sections import SIMULATION_NO_EPSILON, released_from_messages, who_sees_what

    run = _log_run(secure=True)
    run["privacy"].update(simulation=True, trust={"aggregation": "secure", "in_process": True,
                                                  "against_server_and_other_entities": {"epsilon": 7.5,
                                                                                        "delta": 1e-6}})
    server = dict(who_sees_what(run, True))["The server"]
    assert "differentially private" not in server and "NOT private" in server
    assert released_from_messages(run)[0]["status"].startswith("released — simulation")
    page = rep.build_report({**run, "config": {}}, include_plotlyjs=False, public=True)
    assert SIMULATION_NO_EPSILON in _section(page, "summary") and "This run is a simulation" in _section(page, "scope")
    # the public version does not call itself a report of differentially private outputs
    summary = _section(page, "summary")
    assert "WITHOUT a privacy guarantee" in summary and "only differentially private outputs" not in summary
    readers = dict(who_sees_what(run, True))["Readers of this report"]
    assert "reproducible from its seed" in readers and "nothing in it is differentially private" in readers
    run["privacy"].update(simulation=False)
    assert "WITHOUT" not in _section(rep.build_report({**run, "config": {}}, include_plotlyjs=False, public=True),
                                     "summary")


def test_a_message_with_no_array_is_said_so_and_not_counted_a_release():
    """A deployment logs its protocol messages (decisions, acknowledgements, SecAgg+'s keys) with no
    shape, and a masked vector with its length: the report says "no array" for the first — not
    "scalar", which is a one-number array — and the server is said to receive releases only in the second."""
    from dpfed_core.reporting.report_format import shape_text
    from dpfed_core.reporting.report_sections import _messages, released_from_messages, who_sees_what

    assert (shape_text(None), shape_text([]), shape_text([4096]), shape_text([57, 9])) == (
        "no array", "scalar", "4096", "57 × 9")
    run = {"privacy": {"private": True, "epsilon": 1.0, "trust": {"aggregation": "secure"}}, "messages": [
        {"round": 1, "sender": "A", "receiver": "server", "content": "SecAgg+ setup (public keys) (reply)",
         "shape": None, "bytes": 90},
        {"round": 1, "sender": "A", "receiver": "server", "content": "SecAgg+ collect masked vectors (reply)",
         "shape": [4096], "bytes": 34000},
        {"round": 0, "sender": "A", "receiver": "server", "content": "site policy decision", "shape": None,
         "bytes": 50}]}
    rows = {r["content"].split(" (")[0]: r for r in released_from_messages(run)}
    assert "shape 4096" in rows["SecAgg+ collect masked vectors"]["content"]
    assert "shape no array" in rows["SecAgg+ setup"]["content"]
    assert rows["SecAgg+ setup"]["status"] == rows["site policy decision"]["status"] == (
        "a protocol message: no data array, nothing released")
    assert rows["SecAgg+ collect masked vectors"]["status"] == "released"
    server = dict(who_sees_what(run, True))["The server"]
    assert server.startswith("only the sum over entities of their noisy (differentially private) releases "
                             "(SecAgg+ collect masked vectors (reply)); no single entity's release; and the "
                             "protocol's messages, which carry no data array (SecAgg+ setup (public keys) (reply), "
                             "site policy decision)")
    assert "<td>no array</td>" in _messages(run) and "<td>4096</td>" in _messages(run)


@pytest.mark.parametrize("name", ["report.md", "report.json", "report"])
def test_the_report_is_written_under_an_html_name_only(docs, tmp_path, capsys, name):
    from dpfed_core.cli.main import main

    run = write_json(docs["run"], tmp_path / "run.json")
    out = tmp_path / name
    assert main(["report", "--run", str(run), "--no-charts", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: --out ") and ".html" in err[0], err
    assert not out.exists()
    assert main(["report", "--run", str(run), "--no-charts", "--out", str(tmp_path / "report.html")]) == 0


def test_every_setting_that_differs_from_the_paper_is_stated_where_results_are(docs, capsys):
    """The recommended method is not the paper's: the CLI's run, the Evaluate page and the report say
    how (method, trust model, round 2, objective), each from one function."""
    from dpfed_core.config import RunConfig
    from dpfed_core.reporting.paper import paper_differences

    default = paper_differences(RunConfig(method="dp-cooccurrence", epsilon=3, aggregation="secure").to_dict())
    assert any("not the paper" in d or "the paper's entities send DP prototypes" in d for d in default)
    assert any(d.startswith("secure aggregation") for d in default)
    assert any(d.startswith("round 2 blends") for d in default)
    assert not any(d.startswith("secure aggregation") for d in paper_differences(
        RunConfig(method="dp-cooccurrence", epsilon=3).to_dict()))
    paper = paper_differences(RunConfig(method="dp-prototypes", epsilon=1,
                                        prototype_params={"cluster_size": None, "projection_dim": 8}).to_dict())
    assert paper == ["objective: the summed squared loss (the paper's 1/N factor would make λ dominate)"]
    # what the run did, from its ledger: one prototype (no "candidates" stage) is no clustering, and no
    # projection or candidates are named for it; k = 1 asked is the paper's own
    one = {"privacy": {"ledger": [{"stage": "recovery: sums"}]}}
    said = paper_differences(RunConfig(method="dp-gaussian", epsilon=1, k=10).to_dict(), one)
    assert any(d.startswith("one prototype per entity") for d in said)
    assert not any("projection" in d or "LSH" in d for d in said)
    said = paper_differences(RunConfig(method="dp-prototypes", epsilon=1, k=1,
                                       prototype_params={"candidates": "lsh"}).to_dict(), one)
    assert said == paper
    clustered = {"privacy": {"ledger": [{"stage": "candidates"}]}}
    assert any("LSH" in d for d in paper_differences(
        RunConfig(method="dp-prototypes", epsilon=1, k=5, prototype_params={"candidates": "lsh"}).to_dict(), clustered))
    assert any("Gaussian sums" in d for d in paper_differences(RunConfig(method="dp-gaussian", epsilon=1).to_dict()))
    params = _section(rep.build_report(docs["run"], include_plotlyjs=False), "parameters")
    assert "Differs from the paper (Ribero et al. 2020)" in params
    from dpfed_core.cli.main import main

    assert main(["run", "--data", "sample:clinic", "--simulation", "--method", "dp-popularity", "--epsilon", "1",
                 "--aggregation", "secure"]) == 0
    out = capsys.readouterr().out
    assert "settings: Differs from the paper (Ribero et al. 2020): method dp-popularity sends summable" in out


def test_a_run_whose_metrics_are_all_undefined_still_gets_its_report(docs, tmp_path):
    """A run in which no entity had a test user writes null for every held-out metric; it released what it
    released, and its compliance report (public or not) is written with those metrics as undefined."""
    doc = json.loads(json.dumps(docs["run"]))
    for key in ("test_rmse", "mar", "precision_at_10", "recall_at_10", "ndcg_at_10"):
        if key in doc["overall"]:
            doc["overall"][key] = None
    doc["overall"]["n_test_users"] = 0
    run = write_json(doc, tmp_path / "run.json")
    parser = argparse.ArgumentParser()
    report_cmd.register_cli(parser.add_subparsers(dest="command"))
    for extra in ([], ["--public"]):
        out = tmp_path / f"report{len(extra)}.html"
        args = parser.parse_args(["report", "--run", str(run), "--out", str(out), "--no-charts", *extra])
        assert args.func(args) == 0
        assert out.exists()
    args = parser.parse_args(["report", "--run", str(run), "--out", str(tmp_path / "x.html"), "--metric", "nope"])
    with pytest.raises(DpfedError, match="--metric 'nope' is not a metric of the run document"):
        args.func(args)


def test_the_audit_section_says_what_the_attacker_of_each_kind_of_method_saw(docs):
    """A summable method releases noisy statistics, no prototypes: the section states what its audit's
    attacker saw under the audit's own trust model."""
    def audit_text(**config) -> str:
        doc = json.loads(json.dumps(docs["audit"]))
        doc["config"].update(config)
        return html.unescape(re.sub(r"<[^>]+>", "", _section(
            rep.build_report(docs["run"], audit_doc=doc, include_plotlyjs=False), "audit")))

    assert "sees only the released prototypes scores each release" in audit_text()
    # the verbatim column: a share of IN runs for a method that releases rows, none for one that releases
    # statistics (no row of a co-occurrence or popularity release can be the target's)
    rows_released = _section(rep.build_report(docs["run"], audit_doc=docs["audit"], include_plotlyjs=False), "audit")
    summ = json.loads(json.dumps(docs["audit"]))
    for r in summ["summary"]:
        r["method"] = "dp-cooccurrence"
    stats_released = _section(rep.build_report(docs["run"], audit_doc=summ, include_plotlyjs=False), "audit")
    assert re.search(r"<td[^>]*>\d+\.\d %</td>", rows_released)
    assert not re.search(r"<td[^>]*>\d+\.\d %</td>", stats_released) and "<td>—</td>" in stats_released
    text = audit_text(methods=["dp-cooccurrence"], aggregation="none")
    assert "sees only the entity's own noisy statistics (no secure aggregation) scores each release" in text, text
    assert "prototypes scores" not in text
    text = audit_text(methods=["dp-prototypes", "dp-popularity"], aggregation="secure",
                      others_label="empty entities (their shares are noise only)")
    assert ("sees only the released prototypes (dp-prototypes) or the sum of every entity's noisy statistics "
            "under secure aggregation, the other entities being empty entities (their shares are noise only) "
            "(dp-popularity) scores each release") in text, text


def test_an_included_release_that_read_every_entitys_exact_rows_names_every_entity_as_voided(docs):
    """A sweep holding one non-private point (ε = ∞) among DP ones released every entity's exact data, and
    an audit that reruns a summable method beside the other entities' own rows reads every entity's exact
    rows: each names every entity as left without an overall guarantee — never none of them, nor only the
    audited one. A sweep of DP points only, or an audit whose other entities are empty, voids no more."""
    from dpfed_core.reporting.report_sections import other_releases

    run = {k: v for k, v in docs["run"].items() if k != "comparison"}
    names = [str(e["name"]) for e in run["entities"]]
    assert len(names) > 1
    dp_run = {"method": "dp-cooccurrence", "epsilon": 1.0, "privacy": {"private": True, "epsilon": 1.0}}
    inf_run = {"method": "dp-cooccurrence", "epsilon": math.inf, "privacy": {"private": False, "epsilon": math.inf}}
    sweep = {"config": {"method": "dp-cooccurrence", "delta": 1e-6}, "epsilons": [1.0, math.inf], "seeds": [0],
             "references": [], "runs": [dp_run, inf_run]}
    audit = {"kind": "audit", "config": {"methods": ["dp-cooccurrence"], "others": "data"},
             "entity": {"name": names[0]}}
    rows = {r["kind"]: r for r in other_releases(run, None, sweep, audit)}
    assert rows["sweep"]["void"] == names
    assert rows["audit"]["void"] == names
    rows = {r["kind"]: r for r in other_releases(run, None, {**sweep, "epsilons": [1.0], "runs": [dp_run]},
                                                 {**audit, "config": {**audit["config"], "others": "zeros"}})}
    assert rows["sweep"]["void"] == [] and rows["audit"]["void"] == [names[0]]
    # the report's sweep holds DP points and an ε = ∞ one: every entity is named, in both versions
    assert {str(r["epsilon"]) for r in docs["sweep"]["runs"]} >= {"1.0", "inf"}
    line = (f"Entities {_esc(', '.join(names))} have no overall guarantee: a non-private release (a point or "
            "reference of the sweep included here).")
    for public in (True, False):
        page = _text(rep.build_report(docs["run"], sweep_doc=docs["sweep"], include_plotlyjs=False, generated="x",
                                      public=public))
        assert line in _section(page, "overview") and line in _section(page, "summary")


def test_the_summary_states_every_warning_the_guarantee_rests_on(docs):
    """The guarantee's warnings (what it rests on, e.g. shares rounded below their grid) are stated in the
    summary beside the guarantee, in both versions, as the dashboard and the CLI state them."""
    run = {**docs["run"], "privacy": {**docs["run"]["privacy"],
                                      "warnings": ["the shares of entity <b>X</b> carried too little noise"]}}
    for public in (True, False):
        summary = _section(rep.build_report(run, include_plotlyjs=False, generated="x", public=public), "summary")
        assert "<p class='verdict-bad'>the shares of entity &lt;b&gt;X&lt;/b&gt; carried too little noise</p>" in summary


def test_the_overview_marks_a_weaker_coalition_epsilon_and_says_what_it_means():
    """With secure aggregation the ε against the server colluding with every other entity is each entity's own
    noise share's, larger than the guarantee: its box is marked and the page says what it means for one
    person; without secure aggregation (or the same ε) nothing is marked."""
    from dpfed_core.reporting.report_sections import _overview, epsilon_in_words

    run = {"privacy": {"private": True, "epsilon": 1.0, "delta": 1e-6,
                       "trust": {"aggregation": "secure",
                                 "against_server_and_other_entities": {"epsilon": 6.5, "delta": 1e-6}}},
           "messages": []}
    page = _overview(run, public=True)
    assert "<div class='figure bad'>" in page and "<span class='num'>ε = 6.5</span>" in page
    assert f"Under collusion: {_esc(epsilon_in_words(6.5, 1e-6))}" in page
    same = {**run, "privacy": {**run["privacy"], "trust": {"aggregation": "none"}}}
    page = _overview(same, public=True)
    assert "figure bad" not in page and "Under collusion" not in page


def test_the_cumulative_spend_names_five_voided_entities_and_how_many_more():
    from dpfed_core.reporting.report_sections import cumulative_text

    names = [f"hospital {i}" for i in range(7)]
    text = cumulative_text({"accountant": {"across_releases": "zCDP", "spent_epsilon": 2.0, "delta": 1e-5,
                                           "most_spent_entity": "hospital 0", "non_private_entities": names}})
    assert ("no overall guarantee for the people of 7 entities (hospital 0, hospital 1, hospital 2, hospital 3, "
            "hospital 4 and 2 more)") in text, text


def test_a_dp_method_compared_without_privacy_voids_every_entity_and_a_simulations_comparisons_say_so(docs):
    """A DP method compared at ε = ∞ released exact data: its row states ∞ and names every entity as left
    without a guarantee, never a DP (ε, δ); in a simulation every comparison's ε is labelled as one."""
    from dpfed_core.privacy.noise import SIMULATION_LABEL
    from dpfed_core.reporting.report_sections import other_releases

    run = {k: v for k, v in docs["run"].items() if k != "comparison"}
    names = [str(e["name"]) for e in run["entities"]]
    exact = {"method": {"privacy_model_type": "FEDERATED_USER_DP"},
             "privacy": {"private": False, "epsilon": math.inf, "delta": 0.0}}
    dp = {"method": {"privacy_model_type": "FEDERATED_USER_DP"},
          "privacy": {"private": True, "epsilon": 0.5, "delta": 1e-6, "ledger": [{"entity": names[0]}]}}
    (row,) = other_releases(run, {"dp-popularity": exact})
    assert row["epsilon"] == "∞ (non-private release)" and row["void"] == names
    (row,) = other_releases(run, {"dp-popularity": dp})
    assert row["epsilon"] == "ε = 0.5, δ = 1e-06" and row["void"] == []
    sim = {**run, "privacy": {**run["privacy"], "simulation": True}}
    (row,) = other_releases(sim, {"dp-popularity": dp})
    assert row["epsilon"] == f"ε = 0.5, δ = 1e-06 — {SIMULATION_LABEL}"


def test_each_entitys_composed_epsilon_is_stated_rounded_up_as_the_guarantee_is():
    """The privacy section's table of ε per entity states each composed ε as the guarantee is stated: rounded up
    (0.92031 → 0.9204, never the 0.9203 below what holds)."""
    from dpfed_core.reporting.report_sections import _privacy

    run = {"config": {"method": "dp-cooccurrence"}, "messages": [],
           "privacy": {"private": True, "epsilon": 0.92031, "delta": 1e-6, "requested_epsilon": 1.0,
                       "requested_delta": 1e-6, "ledger": [], "per_stage": [],
                       "per_entity": [{"entity": "A", "epsilon": 0.92031, "delta": 1e-6, "accountant": "zCDP"}]}}
    body = _privacy(run, plotly_ok=False)
    table = body[body.index("ε per entity, as composed"):body.index("The stages' own rows")]
    assert "<td>A</td><td>0.9204</td>" in table and "0.9203" not in table, table


def test_the_scope_section_states_each_entitys_epsilon_rounded_up_as_the_overview_does():
    """The scope's "each entity's release is (ε, δ)-DP" is the run's ε rounded up (0.92031 → 0.9204), the figure
    the overview states; a non-private run's is ∞."""
    from dpfed_core.reporting.report_sections import _scope

    run = {"privacy": {"private": True, "epsilon": 0.92031, "delta": 1e-6, "trust": {}}, "messages": []}
    text = _scope(run)
    assert "Each entity's release is (0.9204, δ)-DP" in text and "0.9203" not in text
    assert "Each entity's release is (∞, δ)-DP" in _scope({**run, "privacy": {**run["privacy"], "epsilon": math.inf}})


def test_the_paper_differences_follow_the_runs_epsilon_k_and_method():
    """k is stated as a maximum only when a private run sizes its clusters; one prototype asked (k = 1) is the
    paper's own and names no projection; a centralised or local method is named a reference."""
    from dpfed_core.config import RunConfig
    from dpfed_core.reporting.paper import paper_differences

    objective = "objective: the summed squared loss (the paper's 1/N factor would make λ dominate)"
    maximum = "k = 10 is a maximum: each entity uses about one prototype per 1000 of its users (the paper: k exactly)"
    assert maximum in paper_differences(RunConfig(method="dp-prototypes", epsilon=1, k=10).to_dict())
    for eps in (float("inf"), "inf"):
        assert not any("maximum" in d for d in paper_differences(
            {**RunConfig(method="dp-prototypes", epsilon=1, k=10).to_dict(), "epsilon": eps}))
    assert paper_differences(RunConfig(method="dp-prototypes", epsilon=1, k=1).to_dict()) == [objective]
    assert paper_differences(RunConfig(method="popularity").to_dict()) == [
        "popularity is a reference, not the paper's protocol", objective]


def test_a_dp_comparison_given_beside_the_run_has_its_ledger_rows_in_the_privacy_section(docs, with_dp_comparison):
    comps = dict(with_dp_comparison["comparison"])
    run = {k: v for k, v in docs["run"].items() if k != "comparison"}
    priv = _text(_section(rep.build_report(run, comparison=comps, include_plotlyjs=False, public=True), "privacy"))
    assert "The comparison methods' ledgers" in priv
    assert priv.count("<td>dp-popularity</td>") == len(comps["dp-popularity"]["privacy"]["ledger"])


def test_a_file_that_is_not_text_is_refused_as_no_result_document(tmp_path):
    binary = tmp_path / "run.json"
    binary.write_bytes(b"\xff\xfe\x00\x81 not utf-8")
    with pytest.raises(DataError, match="is not a JSON result document"):
        rep.load_doc(binary)


def test_the_runs_guarantee_is_that_of_its_most_spent_entity(docs):
    from dpfed_core.privacy.ledger import LedgerRow, compose

    run = json.loads(json.dumps(docs["run"], default=str))
    p = run["privacy"]
    last = str(p["per_entity"][-1]["entity"])
    for r in p["ledger"]:
        if str(r["entity"]) == last:                         # it spent less than the others
            r["epsilon"], r["noise_scale"] = r["epsilon"] / 2, r["noise_scale"] * 2
    composed = {}
    for r in p["ledger"]:
        composed.setdefault(str(r["entity"]), []).append(LedgerRow.from_record(r))
    composed = {e: compose(rows, p["requested_delta"])[:2] for e, rows in composed.items()}
    for row in p["per_entity"]:
        row["epsilon"], row["delta"] = composed[str(row["entity"])]
    assert composed[last][0] < max(eps for eps, _ in composed.values())
    p["epsilon"], p["delta"] = max(composed.values())
    rep.build_report(run, include_plotlyjs=False, public=True)
    p["epsilon"], p["delta"] = composed[last]                # the least-spent entity's figure: refused
    with pytest.raises(DataError, match="for the run, but its own ledger composes"):
        rep.build_report(run, include_plotlyjs=False, public=True)


def test_comparisons_given_beside_the_run_have_their_guarantee_checked_and_the_runs_own_counts_are_stated(docs):
    run = {k: v for k, v in docs["run"].items() if k != "comparison"}
    name, doc = next((k, d) for k, d in docs["run"]["comparison"].items() if d["privacy"]["epsilon"] == math.inf)
    edited = json.loads(json.dumps(doc, default=str))
    edited["privacy"]["epsilon"] = 0.5                      # a non-private comparison stated as private
    with pytest.raises(DataError, match=f"comparison {name!r}"):
        rep.build_report(run, comparison={name: edited}, include_plotlyjs=False)
    data = _section(rep.build_report(docs["run"], include_plotlyjs=False), "data")   # no dataset given
    assert "not in the run document" not in data
    for s in docs["run"]["entity_summary"]:
        assert f"<td class='num'>{s['interactions']}</td>" in data


def test_a_document_with_several_wrong_figures_names_the_runs_first_and_counts_the_others(docs):
    run = json.loads(json.dumps(docs["run"], default=str))
    p = run["privacy"]
    p["epsilon"], p["per_entity"][0]["epsilon"] = 0.7, 0.9
    with pytest.raises(DataError, match=r"states ε = 0\.7, δ = \S+ for the run, but .*\(and 1 more figures\)"):
        rep.build_report(run, include_plotlyjs=False)
    p["epsilon"] = float(docs["run"]["privacy"]["epsilon"])     # one figure wrong: named, nothing more counted
    with pytest.raises(DataError, match=r"states ε = 0\.9, .* for entity .*, but") as err:
        rep.build_report(run, include_plotlyjs=False)
    assert "more figures" not in str(err.value)


def test_a_simulations_comparisons_on_generated_data_are_said_recorded_not_charged(tmp_path):
    """A simulation on generated data has its releases recorded in the budget store and none charged:
    each comparison's row says so, never that it was charged with the run; the same simulation on
    people's records is charged (as non-private) and its rows say that."""
    import dataclasses

    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.service import execute_run
    from dpfed_core.privacy.odometer import BudgetOdometer
    from dpfed_core.reporting.report_sections import other_releases
    from report_docs import small_dataset

    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6, rank=2, seed=0, max_iter=5, simulation=True)
    generated = dataclasses.replace(small_dataset(), generated=True)
    out = execute_run(generated, cfg, compare=("central",), store=tmp_path / "g.sqlite3", save=False)
    assert [r["spend"] for r in other_releases(out.doc)] == ["simulation: not charged"]
    assert "charged with this run" not in rep.build_report(out.doc, include_plotlyjs=False, generated="x")
    stored = BudgetOdometer(tmp_path / "g.sqlite3").releases(out.doc["odometer"]["dataset_key"])
    assert len(stored) == 2 and not any(r["charged"] for r in stored)
    people = execute_run(small_dataset(), cfg, compare=("central",), store=tmp_path / "p.sqlite3", save=False)
    assert [r["spend"] for r in other_releases(people.doc)] == ["charged with this run: counted in the run's figure"]
    stored = BudgetOdometer(tmp_path / "p.sqlite3").releases(people.doc["odometer"]["dataset_key"])
    assert len(stored) == 2 and all(r["charged"] for r in stored)


def test_a_run_ranked_at_its_own_n_has_every_metric_the_command_line_printed():
    """A run with --top-n 5 measured precision, recall and NDCG at 5: the utility table states each of
    them, headed @5, with the run's values, as the command line's table does."""
    from dpfed_core.config import RunConfig
    from dpfed_core.evaluation.experiments import make_split, run_method
    from report_docs import small_dataset

    ds = small_dataset()
    cfg = RunConfig(method="dp-popularity", epsilon=1.0, delta=1e-6, rank=2, seed=0, max_iter=5, top_n=5,
                    simulation=True)
    run, _ = run_method(ds, cfg, make_split(ds, cfg))
    util = _section(rep.build_report(run, include_plotlyjs=False, generated="x"), "utility")
    for k, label in (("precision_at_5", "precision@5 (↑)"), ("recall_at_5", "recall@5 (↑)"),
                     ("ndcg_at_5", "NDCG@5 (↑)")):
        assert f"<th>{label}</th>" in util
        assert f"<td class='num'>{rep.fmt_num(run['overall'][k])}</td>" in util
    assert "@10" not in util


def test_the_utility_chart_draws_each_methods_mar_as_its_table_states_it(docs, monkeypatch):
    """The bar chart beside the utility table is of the metric it is titled with (MAR), one bar per
    method in the table's order, at that method's overall value."""
    from dpfed_core.reporting import report_sections

    drawn = {}
    real = report_sections._fig_html

    def keep(fig, div_id, height=440):
        drawn[div_id] = fig
        return real(fig, div_id, height)

    monkeypatch.setattr(report_sections, "_fig_html", keep)
    rep.build_report(docs["run"], generated="x")
    fig = drawn["fig-utility"]
    want = {"dp-prototypes": docs["run"]["overall"]["mar"],
            **{m: d["overall"]["mar"] for m, d in docs["run"]["comparison"].items()}}
    (bar,) = fig.data
    assert list(bar.x) == list(want) and list(bar.y) == pytest.approx(list(want.values()))
    assert fig.layout.yaxis.title.text == "MAR (↓)"
    assert len(set(want.values())) == len(want)  # the methods' values differ: a bar of another metric shows


def test_the_provenance_fingerprint_is_of_the_documents_content_whatever_its_key_order(docs):
    """SHA-256 of canonical JSON: the same run document with its keys in another order (as another tool
    may write it) has the same fingerprint, the one a reader can recompute."""
    import hashlib

    from dpfed_core.evaluation.experiments import json_safe

    run = docs["run"]
    reordered = dict(reversed(list(run.items())))
    sha = hashlib.sha256(json.dumps(json_safe(run), sort_keys=True).encode()).hexdigest()
    for doc in (run, reordered):
        assert f"<td>{sha}</td>" in _section(rep.build_report(doc, include_plotlyjs=False, generated="x"),
                                            "provenance")


def test_the_public_version_of_a_non_private_run_says_its_releases_are_exact(docs):
    """A public report of k-means (exact cluster means left the entities) never calls itself a report
    of differentially private outputs."""
    km = dict(docs["run"]["comparison"]["kmeans"])
    km.update(config=docs["run"]["config"] | {"method": "kmeans"}, dataset=docs["run"]["dataset"],
              messages=[], created="x", version=__version__)
    summary = _section(rep.build_report(km, include_plotlyjs=False, public=True, generated="x"), "summary")
    assert "public version of a run WITHOUT a privacy guarantee" in summary
    assert "exact (a non-private method or ε = ∞)" in summary
    assert "only differentially private outputs" not in summary


def test_a_simulations_trust_model_says_where_its_secure_sum_was_formed():
    """In-process sums and Flower's SecAgg+ are different trust models: a simulation names the one it ran."""
    from dpfed_core.reporting.report_sections import trust_text

    trust = {"aggregation": "secure", "against_server_and_other_entities": {"epsilon": 2.0, "delta": 1e-6}}
    here = trust_text({"simulation": True, "trust": {**trust, "in_process": True}})
    flower = trust_text({"simulation": True, "trust": {**trust, "in_process": False}})
    assert "(formed in-process)" in here and "SecAgg+" not in here
    assert "(formed by Flower's SecAgg+)" in flower and "in-process" not in flower
    assert trust_text({"simulation": True, "trust": {"aggregation": "none"}}).startswith(
        "no secure aggregation: the server sees every entity's release")


def test_a_complete_sweep_of_an_earlier_version_without_a_store_record_is_not_called_partial():
    """Only a sweep that says it was interrupted (complete: false) is a partial one; a document without
    the flag (written before it existed) and without a store record was not charged to a store."""
    from dpfed_core.reporting.report_sections import _sweep_not_recorded

    assert _sweep_not_recorded({"runs": [{}]}) == "not charged to a budget store"
    assert _sweep_not_recorded({"runs": [{}], "complete": True}) == "not charged to a budget store"
    assert _sweep_not_recorded({"runs": [{}], "complete": False}).startswith("a partial sweep")


def test_a_dp_release_beside_the_run_leaves_every_entity_its_guarantee(with_dp_comparison):
    """Only a release that voided some entity's guarantee gets a line saying so; a DP comparison names none."""
    from dpfed_core.reporting.report_sections import void_lines

    assert void_lines([{"void": [], "what": "the comparison dp-popularity"}]) == []
    assert void_lines([{"void": ["clinic A"], "what": "the audit"}]) == [
        "Entity clinic A has no overall guarantee: a non-private release (the audit)."]
    run = {**with_dp_comparison, "comparison": {"dp-popularity": with_dp_comparison["comparison"]["dp-popularity"]}}
    page = rep.build_report(run, include_plotlyjs=False, generated="x")
    assert "comparison dp-popularity" in _section(page, "overview")
    assert "no overall guarantee" not in page


def test_a_simulations_first_screen_states_no_epsilon_one_person_is_protected_at(cooc_doc):
    """Seeded noise protects no one: the first screen of a simulation has no ε figures and no 'what ε
    means for one person'; the same run with production noise has both."""
    sim = {**cooc_doc, "privacy": {**cooc_doc["privacy"], "simulation": True}}
    ov = _section(rep.build_report(sim, include_plotlyjs=False, generated="x"), "overview")
    assert "no privacy guarantee holds for this run" in ov
    assert "class='figures'" not in ov and "What ε means for one person" not in ov
    prod = _section(rep.build_report(cooc_doc, include_plotlyjs=False, generated="x"), "overview")
    assert "class='figures'" in prod and "What ε means for one person" in prod


def test_the_summary_of_a_simulation_states_no_guarantee():
    """A simulation's summary says no differential-privacy guarantee holds, with the budget it was
    configured with, never '(ε, δ)-differential privacy for every user'."""
    from dpfed_core.reporting.report_sections import _summary

    p = {"private": True, "simulation": True, "epsilon": 1.0, "delta": 1e-6, "requested_epsilon": 1.0,
         "requested_delta": 1e-6}
    text = _summary({"privacy": p, "config": {"method": "dp-popularity"}}, "x", None, None)
    assert "no differential-privacy guarantee holds (configured budget (1, 1e-06))" in text
    assert "-differential privacy</b> for every user" not in text
    prod = _summary({"privacy": {**p, "simulation": False}, "config": {"method": "dp-popularity"}}, "x", None, None)
    assert "(1, 1e-06)-differential privacy</b> for every user" in prod


def test_a_ledger_epsilon_above_the_request_is_called_beyond_it():
    """The privacy section compares the ledger's ε with the request: above it (beyond float rounding) is
    said to exceed it."""
    from dpfed_core.reporting.report_sections import _privacy

    p = {"private": True, "epsilon": 1.0, "delta": 1e-6, "requested_epsilon": 1.0, "requested_delta": 1e-6,
         "label": "x", "samplers": [], "per_stage": [], "ledger": []}
    assert "within the request" in _privacy({"privacy": {**p, "epsilon": 1.0 + 1e-12}}, False)
    assert "EXCEEDS the request" in _privacy({"privacy": {**p, "epsilon": 1.05}}, False)


def test_only_a_dp_comparisons_ledger_rows_are_listed_as_its_released_dp_statistics(docs, with_dp_comparison):
    """Exact releases (central, k-means) are not DP statistics: their rows never appear under the
    comparison methods' ledgers; a DP comparison's do."""
    priv = _section(rep.build_report(docs["run"], include_plotlyjs=False, generated="x"), "privacy")
    assert "The comparison methods' ledgers" not in priv
    priv = _section(rep.build_report(with_dp_comparison, include_plotlyjs=False, generated="x"), "privacy")
    table = priv.split("The comparison methods' ledgers")[1]
    assert "<td>dp-popularity</td>" in table
    assert not any(f"<td>{m}</td>" in table for m in ("kmeans", "central", "individual"))


def test_the_tradeoff_chart_marks_where_federation_pays_against_the_first_baseline_of_the_sweep(docs, monkeypatch):
    """The chart's crossing is the ε the section's sentences state, against the sweep's first verdict
    baseline."""
    from dpfed_core.reporting import plots, report_sections

    asked, drawn = [], []
    monkeypatch.setattr(report_sections, "crossing_epsilon", lambda sweep, metric, ref: asked.append(ref) or 3.0)
    real = plots.tradeoff_chart

    def keep(*args, **kwargs):
        drawn.append((kwargs["crossing"], kwargs.get("crossing_against")))
        return real(*args, **kwargs)

    monkeypatch.setattr(plots, "tradeoff_chart", keep)
    rep.build_report(docs["run"], sweep_doc=docs["sweep"], generated="x")
    assert asked == ["individual"] and drawn == [(3.0, "individual")]  # the mark names the baseline it crosses


def test_a_dp_reference_is_drawn_against_epsilon_and_an_exact_one_as_a_line():
    """dp-popularity runs at every ε of the sweep: its means are drawn at their ε; local, run once, is a
    horizontal line at its mean."""
    import pandas as pd

    from dpfed_core.reporting.plots import tradeoff_chart

    table = pd.DataFrame([
        {"method": "dp-cooccurrence", "epsilon": 1.0, "mean": 0.20, "sd": 0.01, "n": 2},
        {"method": "dp-cooccurrence", "epsilon": 3.0, "mean": 0.15, "sd": 0.01, "n": 2},
        {"method": "dp-popularity", "epsilon": 1.0, "mean": 0.30, "sd": 0.02, "n": 2},
        {"method": "dp-popularity", "epsilon": 3.0, "mean": 0.25, "sd": 0.02, "n": 2},
        {"method": "local", "epsilon": 0.0, "mean": 0.17, "sd": 0.01, "n": 2}])
    fig = tradeoff_chart(table, "dp-cooccurrence", "mar", references=["dp-popularity", "local"])
    (pop,) = [t for t in fig.data if t.name == "dp-popularity (same ε)"]
    assert list(pop.x) == [1.0, 3.0] and list(pop.y) == [0.30, 0.25]
    (local,) = [t for t in fig.data if t.name == "local"]
    assert list(local.y) == [0.17, 0.17]


def test_a_one_seed_sweep_says_its_spread_is_unknown_not_nan():
    """With one seed there is no sd: the hover says so, never 'nan' or a spread of 0."""
    import pandas as pd

    from dpfed_core.reporting.plots import tradeoff_chart

    table = pd.DataFrame([{"method": "m", "epsilon": e, "mean": 0.2, "sd": float("nan"), "n": 1} for e in (1.0, 3.0)])
    (line,) = [t for t in tradeoff_chart(table, "m", "mar").data if t.name == "m (mean ± sd)"]
    assert list(line.customdata) == ["— (one seed)", "— (one seed)"]


def test_items_whose_names_share_a_long_prefix_keep_a_row_each_in_the_factor_chart():
    """Labels are cut to fit; two items whose names differ only after the cut stay two rows (Plotly
    would merge equal category labels into one)."""
    import numpy as np

    from dpfed_core.reporting.plots import factor_heatmap

    names = ["acetaminophen 325 mg oral tablet, bottle of 100", "acetaminophen 325 mg oral tablet, bottle of 500"]
    fig = factor_heatmap(np.array([[1.0, 0.5], [0.8, 0.2]]), names)
    labels = list(fig.data[0].y)
    assert len(labels) == 2 and len(set(labels)) == 2


def test_entity_names_are_inert_text_in_the_charts_labels():
    """Plotly renders some HTML in labels: an entity named with markup is drawn as its text, never as a
    link or a style."""
    import pandas as pd

    from dpfed_core.reporting.plots import metric_bars

    name = "<a href='https://example.org'>ward 3</a>"
    df = pd.DataFrame([{"method": "m", "entity": name, "mar": 0.1}, {"method": "m", "entity": "overall", "mar": 0.2}])
    (bar,) = metric_bars(df, "mar").data
    assert list(bar.x) == ["&lt;a href='https://example.org'&gt;ward 3&lt;/a&gt;", "overall"]


@pytest.mark.parametrize("flag", ["--run", "--sweep", "--audit"])
def test_a_json_document_that_is_not_an_object_is_refused_naming_its_flag(docs, tmp_path, capsys, flag):
    """A JSON list given as any document ends in one error naming the flag, never a traceback."""
    from dpfed_core.cli.main import main

    run = tmp_path / "r.json"
    write_json(docs["run"], run)
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([{"kind": "audit", "runs": []}]))
    argv = ["report", "--run", str(run), "--out", str(tmp_path / "r.html")]
    argv[argv.index("--run") + 1 if flag == "--run" else len(argv):] = (
        [str(listed), "--out", str(tmp_path / "r.html")] if flag == "--run" else [flag, str(listed)])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "Traceback" not in err
    assert f"{flag} {listed} is not a result document (a JSON object)" in err
    assert not (tmp_path / "r.html").exists()


def test_a_tradeoff_metric_the_sweep_did_not_measure_is_refused_naming_the_flag(docs, tmp_path, capsys):
    """A run ranked at 5 (--top-n 5) beside a sweep ranked at 10: --metric precision_at_5 is the run's but
    not the sweep's, so the report is refused with one error naming --metric and the sweep's metrics,
    never an internal error, and nothing is written."""
    from dpfed_core.cli.main import main

    run5 = json.loads(json.dumps(docs["run"], default=str))
    run5["config"]["top_n"] = 5
    run5["overall"] = {k.replace("_at_10", "_at_5"): v for k, v in run5["overall"].items()}
    paths = {"run": tmp_path / "r5.json", "sweep": tmp_path / "s.json"}
    write_json(run5, paths["run"])
    write_json(docs["sweep"], paths["sweep"])
    out = tmp_path / "r.html"
    argv = ["report", "--run", str(paths["run"]), "--sweep", str(paths["sweep"]), "--out", str(out)]
    assert main([*argv, "--metric", "precision_at_5"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and "internal error" not in err and "[--metric]" in err
    assert "'precision_at_5' is not one the sweep's runs measured; choose one of mar, ndcg_at_10," in err
    assert not out.exists()
    assert main([*argv, "--metric", "mar"]) == 0 and out.is_file()


def test_an_audit_of_other_data_is_refused_naming_its_flag(docs):
    """An audit of another dataset beside the run would have its entity named as left without a
    guarantee, and its charge counted, in a report of the run's data: refused as a sweep of other data is."""
    audit = json.loads(json.dumps(docs["audit"], default=str))
    audit["dataset"] = {**audit["dataset"], "name": "other clinics", "n_users": audit["dataset"]["n_users"] + 1}
    with pytest.raises(DataError, match=r"the audit was computed on other data \(other clinics: ") as exc:
        rep.build_report(docs["run"], audit_doc=audit, include_plotlyjs=False)
    assert exc.value.param == "audit"
    # charged to one store: the dataset key tells the data apart whatever their sizes
    run = {**docs["run"], "odometer": {"store": "/s.sqlite3", "dataset_key": "key-a"}}
    with pytest.raises(DataError, match="other data"):
        rep.build_report(run, audit_doc={**docs["audit"], "odometer": {"store": "/s.sqlite3", "dataset_key": "key-b"}},
                         include_plotlyjs=False)
    same = {**docs["audit"], "odometer": {"store": "/s.sqlite3", "dataset_key": "key-a"}}
    assert "membership-inference audit of entity clinic B" in rep.build_report(run, audit_doc=same,
                                                                                 include_plotlyjs=False)


@pytest.mark.parametrize("where", ["a file", "a folder"])
def test_a_report_out_that_cannot_be_written_is_refused_naming_out(docs, tmp_path, capsys, where):
    """--out inside a file, or a folder itself: one error naming --out before anything is built."""
    from dpfed_core.cli.main import main

    run = tmp_path / "r.json"
    write_json(docs["run"], run)
    out = run / "r.html" if where == "a file" else tmp_path
    assert main(["report", "--run", str(run), "--out", str(out), "--no-charts"]) == 2
    err = capsys.readouterr().err
    assert err.count("error:") == 1 and f"error: --out {out}" in err and "internal error" not in err
    assert json.loads(run.read_text())["config"] == json.loads(json.dumps(docs["run"]["config"], default=str))


def test_a_k_of_one_is_not_explained_as_a_maximum():
    """With k = 1 every entity sends its one DP sum: there is no automatic k to explain."""
    from dpfed_core.reporting.report_sections import k_explanation

    run = {"config": {"method": "dp-gaussian", "k": 1, "prototype_params": {"cluster_size": 100}},
           "messages": [{"round": 1, "sender": "A", "receiver": "server", "content": "1 prototypes", "shape": [1, 4]}]}
    assert k_explanation(run) == ""
    assert "k = 2 is a maximum" in k_explanation({**run, "config": {**run["config"], "k": 2}})


def test_no_guarantee_is_said_in_plain_words_as_no_protection():
    from dpfed_core.reporting.report_sections import epsilon_in_words

    assert epsilon_in_words(math.inf, 0.0) == (
        "No protection: what left the entities can reveal a person's records exactly.")


def test_a_run_without_comparisons_says_how_to_add_them(docs):
    """The utility section of a run alone says there is nothing to compare and names --compare; with
    comparisons it does not."""
    alone = {k: v for k, v in docs["run"].items() if k != "comparison"}
    util = _section(rep.build_report(alone, include_plotlyjs=False, generated="x"), "utility")
    assert "No comparison methods in the run document" in util and "--compare" in util
    util = _section(rep.build_report(docs["run"], include_plotlyjs=False, generated="x"), "utility")
    assert "No comparison methods" not in util


def test_an_unresolvable_tpr_is_written_n_r_and_said_why_under_the_audit_table(docs):
    """A TPR at a false-positive rate the audit's runs cannot resolve (NaN) was printed '—' with nothing
    to say why: the audit table writes 'n/r', and the line under it says what that means and the setting
    that changes it, as the CLI's summary does; an audit that resolves every rate has no such line."""
    import copy

    from dpfed_core.audit.membership import UNRESOLVED_TPR

    def audit_section(audit: dict) -> str:
        return html.unescape(_section(rep.build_report(docs["run"], audit_doc=audit, dataset=docs["dataset"]),
                                      "audit"))

    audit = copy.deepcopy(docs["audit"])
    assert any(v != v for r in audit["summary"] for v in r["tpr_at_fpr"].values())  # 1 % unresolved: few runs
    section = audit_section(audit)
    assert "<td>n/r</td>" in section
    assert (f"{UNRESOLVED_TPR} (--runs on the command line, “Runs per class” on the Privacy audit page)."
            in section)
    for r in audit["summary"]:
        r["tpr_at_fpr"] = {f: 0.5 for f in r["tpr_at_fpr"]}
    resolved = audit_section(audit)
    assert UNRESOLVED_TPR not in resolved and "<td>n/r</td>" not in resolved
