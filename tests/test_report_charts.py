"""What the report's and the dashboard's charts state: each number drawn is the one its document
measured, under the method, metric and ε its label names."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from dpfed_core.reporting import plots
from dpfed_core.reporting.report_figures import audit_epsilon_figure, audit_roc_figure


def _trace(fig, name: str):
    (t,) = [t for t in fig.data if t.name == name]
    return t


def _sweep_table() -> pd.DataFrame:
    rows = [{"method": "dp-cooccurrence", "epsilon": e, "mean": m, "sd": s, "n": 2}
            for e, m, s in ((1.0, 0.30, 0.01), (3.0, 0.20, 0.02), (math.inf, 0.10, 0.03))]
    rows += [{"method": "dp-popularity", "epsilon": e, "mean": m, "sd": 0.05, "n": 2}
             for e, m in ((1.0, 0.40), (3.0, 0.35), (math.inf, 0.33))]
    rows.append({"method": "local", "epsilon": 0.0, "mean": 0.25, "sd": 0.04, "n": 2})
    return pd.DataFrame(rows)


def test_a_dp_reference_at_infinite_epsilon_is_said_to_be_non_private_not_the_axis_position_of_infinity():
    fig = plots.tradeoff_chart(_sweep_table(), "dp-cooccurrence", "mar", references=["dp-popularity"],
                               metric_label="MAR (↓)")
    pop = _trace(fig, "dp-popularity (same ε)")
    assert [c[0] for c in pop.customdata] == ["1", "3", "∞ (non-private)"]
    assert "%{x" not in pop.hovertemplate and "MAR (↓)" in pop.hovertemplate
    assert "method: dp-popularity" in pop.hovertemplate


def test_the_tradeoff_chart_names_each_method_by_its_own_label_and_draws_infinity_from_its_own_row():
    labels = {"dp-cooccurrence": "DP co-occurrence", "local": "Local only"}
    fig = plots.tradeoff_chart(_sweep_table(), "dp-cooccurrence", "mar", references=["local"], labels=labels,
                               metric_label="MAR (↓)")
    local = _trace(fig, "Local only")
    assert list(local.y) == [0.25, 0.25] and "method: local" in local.hovertemplate
    line = _trace(fig, "DP co-occurrence (mean ± sd)")
    assert list(line.x) == [1.0, 3.0] and list(line.y) == [0.30, 0.20]
    inf = _trace(fig, "DP co-occurrence, ε = ∞ (non-private)")
    assert list(inf.y) == [0.10] and list(inf.error_y.array) == [0.03]
    assert fig.layout.yaxis.title.text == "MAR (↓)"
    assert fig.layout.xaxis.ticktext[-1] == "∞" and list(inf.x) == [fig.layout.xaxis.tickvals[-1]]


def test_the_composed_epsilon_chart_draws_each_entitys_guarantee_and_each_line_at_its_own_value():
    per_entity = [{"entity": "clinic A", "epsilon": 1.5, "accountant": "zCDP"},
                  {"entity": "clinic B", "epsilon": 0.8, "accountant": "zCDP"},
                  {"entity": "clinic C", "epsilon": 1.2, "accountant": "zCDP"}]
    fig = plots.privacy_composed_bars(per_entity, requested=2.0, coalition=4.0)
    (bars,) = [t for t in fig.data if t.type == "bar"]
    # composition across entities is parallel: no bar is a running total of the ones before it
    assert list(bars.x) == ["clinic A", "clinic B", "clinic C"] and list(bars.y) == [1.5, 0.8, 1.2]
    assert fig.layout.barmode != "stack"
    req = _trace(fig, "requested ε (2)")
    coal = _trace(fig, "ε against the server + all other entities (4)")
    assert set(req.y) == {2.0} and set(coal.y) == {4.0}
    assert req.line.dash == "dash" and coal.line.dash == "dot"
    lines = [t.name for t in plots.privacy_composed_bars(per_entity, 2.0).data if t.type != "bar"]
    assert lines == ["requested ε (2)"]


def test_the_reports_epsilon_chart_marks_the_coalition_only_under_secure_aggregation(monkeypatch):
    from dpfed_core.reporting import report_sections

    drawn = []

    def recorded(rows, requested=None, coalition=None, title=None):
        drawn.append((requested, coalition))
        return plots.go.Figure()

    monkeypatch.setattr(plots, "privacy_composed_bars", recorded)
    run = {"privacy": {"private": True, "epsilon": 1.0, "delta": 1e-6, "requested_epsilon": 2.0,
                       "requested_delta": 1e-6, "per_entity": [{"entity": "a", "epsilon": 1.0}],
                       "trust": {"aggregation": "secure", "against_server_and_other_entities": {"epsilon": 5.0}}}}
    report_sections._privacy(run, True)
    run["privacy"]["trust"]["aggregation"] = "none"
    report_sections._privacy(run, True)
    assert drawn == [(2.0, 5.0), (2.0, None)]


def _metric_frame(n_entities: int, shuffled: bool) -> pd.DataFrame:
    ents = [f"site {i}" for i in range(n_entities)]
    rows = [{"method": "dp-cooccurrence", "entity": e, "mar": 0.1 + 0.01 * i} for i, e in enumerate(ents)]
    rows.append({"method": "dp-cooccurrence", "entity": "overall", "mar": 0.5})
    other = [{"method": "local", "entity": e, "mar": 0.3 + 0.01 * i} for i, e in enumerate(ents)]
    other.append({"method": "local", "entity": "overall", "mar": 0.9})
    return pd.DataFrame(rows + (other[::-1] if shuffled else other))


def test_each_bar_stands_over_its_own_entity_whatever_order_a_methods_rows_come_in():
    df = _metric_frame(3, shuffled=True)
    fig = plots.metric_bars(df, "mar", labels={"local": "Local only"}, metric_label="MAR (↓)")
    local = _trace(fig, "Local only")
    assert list(local.x) == ["site 0", "site 1", "site 2", "overall"]
    assert list(local.y) == pytest.approx([0.30, 0.31, 0.32, 0.9])
    assert list(_trace(fig, "dp-cooccurrence").y) == pytest.approx([0.10, 0.11, 0.12, 0.5])
    assert fig.layout.yaxis.title.text == "MAR (↓)" and "MAR (↓): %{y:.4f}" in local.hovertemplate


def test_each_methods_dots_sit_at_its_own_values_when_entities_are_many():
    n = plots.MANY_ENTITIES + 2
    fig = plots.metric_dots(_metric_frame(n, shuffled=True), "mar", labels={"local": "Local only"})
    local, dp = _trace(fig, "Local only"), _trace(fig, "dp-cooccurrence")
    assert list(local.y) == list(dp.y) == [f"site {i}" for i in range(n)]
    assert list(local.x) == pytest.approx([0.30 + 0.01 * i for i in range(n)])
    assert list(dp.x) == pytest.approx([0.10 + 0.01 * i for i in range(n)])
    assert "overall" not in list(local.y)


def _summary(method: str, eps, lb: float, cap: float) -> dict:
    return {"method": method, "epsilon": eps, "epsilon_lb": lb, "auc": 0.55, "epsilon_lb_target": "user 3",
            "max_certifiable_epsilon": cap}


def test_the_audit_epsilon_chart_draws_each_lower_bound_at_its_claimed_epsilon():
    summ = [_summary("dp-gaussian", 1.0, 0.2, 3.0), _summary("dp-gaussian", 4.0, 0.7, 3.5),
            _summary("kmeans", "inf", 3.1, 3.5)]
    fig = audit_epsilon_figure({"summary": summ})
    dp = _trace(fig, "dp-gaussian")
    assert list(dp.x) == [1.0, 4.0] and list(dp.y) == [0.2, 0.7]
    assert [c[0] for c in dp.customdata] == ["1", "4"]
    km = _trace(fig, "kmeans")
    assert list(km.y) == [3.1] and km.marker.symbol == "diamond"
    cap = _trace(fig, "most these runs can certify (3.50)")
    assert set(cap.y) == {3.5}
    claim = _trace(fig, "claimed ε (a bound above this line = violation)")
    assert list(claim.x) == list(claim.y)


def test_the_roc_chart_draws_the_attack_it_names_with_each_curves_own_auc_and_epsilon():
    def res(attack, eps, auc, fpr):
        return {"attack": attack, "target": "user 3", "target_kind": "outlier", "method": "dp-gaussian",
                "requested_epsilon": eps, "auc": auc, "roc": {"fpr": fpr, "tpr": [0, 1]}}

    doc = {"results": [res("distance", 1.0, 0.61, [0, 1]), res("loss", 1.0, 0.9, [0, 0.5]),
                       res("distance", 8.0, 0.74, [0, 0.9])]}
    fig = audit_roc_figure(doc, attack="distance")
    curves = [t for t in fig.data if t.name != "chance (AUC 0.5)"]
    assert [t.name for t in curves] == ["dp-gaussian ε=1 — AUC 0.610", "dp-gaussian ε=8 — AUC 0.740"]
    assert [list(t.x) for t in curves] == [[0, 1], [0, 0.9]]
    assert fig.layout.title.text == "ROC — user 3 — attack: distance"


def test_the_paper_differences_name_the_trust_model_and_round_two_the_run_used():
    from dpfed_core.reporting.paper import paper_differences

    cfg = {"method": "dp-cooccurrence", "aggregation": "none", "method_params": {"local_blend": False}}
    said = paper_differences(cfg)
    assert not any("secure aggregation" in d or "round 2 blends" in d for d in said)
    said = paper_differences({**cfg, "aggregation": "secure", "method_params": {"local_blend": True}})
    assert any(d.startswith("secure aggregation") for d in said)
    assert any(d.startswith("round 2 blends") for d in said)
    # the method's own parameters win over the prototype ones of the same name
    said = paper_differences({"method": "dp-gaussian", "k": 1, "prototype_params": {"variant": "paper"},
                              "method_params": {"variant": "gaussian"}})
    assert any("Gaussian sums" in d for d in said)


def test_the_roc_chart_of_a_summable_audit_names_the_attack_it_draws_one_curve_per_epsilon():
    """A summable method is attacked by projection, items and lr, never by distance: asked for the
    distance attack (as the report asks), its chart draws one attack and its title names that one."""
    from report_docs import small_dataset

    from dpfed_core.audit.membership import run_audit

    audit = run_audit(small_dataset(), "clinic B", methods=("dp-cooccurrence",), epsilons=(1.0,),
                      targets=("outlier",), runs=12, seed=0)
    assert "distance" not in {r["attack"] for r in audit["results"]}
    target = audit["targets"][0]["name"]
    fig = audit_roc_figure(audit, target, "distance")
    curves = [t for t in fig.data if t.name != "chance (AUC 0.5)"]
    (row,) = [r for r in audit["results"] if r["target"] == target and r["attack"] == "projection"]
    assert [t.name for t in curves] == [f"dp-cooccurrence ε=1 — AUC {row['auc']:.3f}"]
    assert fig.layout.title.text == f"ROC — {target} — attack: projection"
    # beside a prototype method, which the distance attack reaches, each curve names its attack
    mixed = {"results": audit["results"] + [{**row, "method": "dp-prototypes", "attack": "distance"}]}
    fig = audit_roc_figure(mixed, target, "distance")
    assert fig.layout.title.text == f"ROC — {target} — attack: projection, distance"
    assert sorted(t.name.split(" — ")[0] for t in fig.data[1:]) == ["dp-cooccurrence ε=1 (projection)",
                                                                    "dp-prototypes ε=1 (distance)"]


@pytest.mark.parametrize("metric", ["mar", "test_rmse", "train_rmse", "precision_at_10", "recall_at_5", "ndcg_at_10"])
def test_every_metrics_label_points_the_way_its_better_values_lie(metric):
    """The report's headers and charts mark a metric ↓ or ↑, the dashboard's axes say "lower/higher is
    better": both from the metric's direction, which is lower for the errors and MAR alone."""
    from dpfed_core.evaluation.verdicts import better_word
    from dpfed_core.reporting.report_sections import metric_label

    lower = metric in ("mar", "test_rmse", "train_rmse")
    assert better_word(metric) == ("lower is better" if lower else "higher is better")
    assert metric_label(metric).endswith("(↓)" if lower else "(↑)")


def test_the_audit_epsilon_chart_joins_the_claims_in_epsilon_order_whatever_order_they_ran_in():
    summ = [_summary("dp-gaussian", 1.0, 0.3, 3.0), _summary("dp-gaussian", 4.0, 0.9, 3.0),
            _summary("dp-gaussian", 0.5, 0.1, 3.0)]
    dp = _trace(audit_epsilon_figure({"summary": summ}), "dp-gaussian")
    assert list(dp.x) == [0.5, 1.0, 4.0] and list(dp.y) == [0.1, 0.3, 0.9]
    assert [c[0] for c in dp.customdata] == ["0.5", "1", "4"]


def test_the_crossing_is_marked_with_the_baseline_it_crosses():
    """The crossing ε is where the swept method meets one baseline: the mark names it (by its label), so a chart
    with local and individual among its lines cannot be read against the wrong one; without a baseline named the
    mark states only the ε."""
    labels = {"local": "each entity alone"}
    fig = plots.tradeoff_chart(_sweep_table(), "dp-cooccurrence", "mar", references=["local", "dp-popularity"],
                               crossing=2.0, crossing_against="local", labels=labels)
    assert [a.text for a in fig.layout.annotations] == ["crossing ε = 2 vs each entity alone"]
    bare = plots.tradeoff_chart(_sweep_table(), "dp-cooccurrence", "mar", references=["local"], crossing=2.0)
    assert [a.text for a in bare.layout.annotations] == ["crossing ε = 2"]


def test_the_roc_chart_refuses_a_target_the_audit_has_no_curve_of_naming_the_targets_it_has():
    from dpfed_core.errors import ConfigError

    def res(target, kind, auc):
        return {"attack": "distance", "target": target, "target_kind": kind, "method": "dp-gaussian",
                "requested_epsilon": 1.0, "auc": auc, "roc": {"fpr": [0, 1], "tpr": [0, 1]}}

    doc = {"results": [res("user 3", "outlier", 0.6), res("user 9", "typical", 0.7)]}
    with pytest.raises(ConfigError, match=r"no target 'user 5': its targets are 'user 3', 'user 9'.*Target control"):
        audit_roc_figure(doc, "user 5")
    # a kind the document has is drawn by its own target's curve
    fig = audit_roc_figure(doc, "typical")
    assert [t.name for t in fig.data[1:]] == ["dp-gaussian ε=1 — AUC 0.700"]
    assert fig.layout.title.text == "ROC — user 9 — attack: distance"


def test_the_composed_epsilon_chart_keeps_an_unbounded_entity_marked_infinite_above_every_finite_bar():
    per_entity = [{"entity": "clinic A", "epsilon": 1.5, "accountant": "zCDP"},
                  {"entity": "clinic B", "epsilon": math.inf, "accountant": "basic"},
                  {"entity": "clinic C", "epsilon": 0.8, "accountant": "zCDP"}]
    fig = plots.privacy_composed_bars(per_entity, requested=2.0)
    finite, unbounded = [t for t in fig.data if t.type == "bar"]
    assert list(finite.x) == ["clinic A", "clinic C"] and list(finite.y) == [1.5, 0.8]
    # the unbounded entity keeps its place between the others, drawn above the request and marked ∞
    assert list(unbounded.x) == ["clinic B"] and list(unbounded.text) == ["∞"]
    assert unbounded.y[0] > 2.0 and "ε = ∞" in unbounded.name and "ε = ∞" in unbounded.hovertemplate
    assert list(fig.layout.xaxis.categoryarray) == ["clinic A", "clinic B", "clinic C"]
    assert list(_trace(fig, "requested ε (2)").x) == ["clinic A", "clinic B", "clinic C"]
    assert fig.layout.barmode == "overlay"
    # every entity unbounded: each still has its bar
    only = plots.privacy_composed_bars([{"entity": "x", "epsilon": math.inf}, {"entity": "y", "epsilon": "inf"}])
    assert [list(t.x) for t in only.data if t.type == "bar"] == [[], ["x", "y"]]
