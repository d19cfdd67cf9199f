"""The audit's charts in the report and on the dashboard's audit page: ROC curves and ε lower bounds.

Built from an audit document alone (:func:`dpfed_core.audit.run_audit`), so the report made from files
and the dashboard draw the same figures; each method keeps its one colour of
:func:`dpfed_core.reporting.plots.method_color`. plotly is imported only when a figure is drawn, so a
tables-only report never loads it.
"""
from __future__ import annotations

import math

from dpfed_core.reporting.report_format import _f, fmt_eps, fmt_num

__all__ = ["audit_roc_figure", "audit_epsilon_figure"]


def _method_color(method: str) -> str:
    from dpfed_core.reporting.plots import method_color

    return method_color(method)


def _layout(fig, title: str | None = None, height: int = 420, legend_inside: bool = False):
    legend = (dict(orientation="v", yanchor="bottom", y=0.02, xanchor="right", x=0.99,
                   bgcolor="rgba(255,255,255,0.75)", bordercolor="#ccc", borderwidth=1)
              if legend_inside else dict(orientation="h", yanchor="top", y=-0.18, xanchor="left", x=0))
    fig.update_layout(title=dict(text=title, x=0, xanchor="left") if title else None, height=height,
                      margin=dict(l=10, r=10, t=50 if title else 20, b=10),
                      paper_bgcolor="rgba(0,0,0,0)", plot_bgcolor="rgba(0,0,0,0)", legend=legend)
    fig.update_xaxes(automargin=True)  # long tick labels push the margin out instead of being clipped
    fig.update_yaxes(automargin=True)
    return fig


def _run_label(r: dict) -> str:
    eps = _f(r["requested_epsilon"])
    if r.get("private") or (math.isfinite(eps) and r["method"] not in ("kmeans", "krandom")):
        return f"{r['method']} ε={fmt_num(eps)}" if math.isfinite(eps) else f"{r['method']} ε=∞ (non-private limit)"
    return f"{r['method']} (non-private)"


def audit_roc_figure(audit_doc: dict, target: str | None = None, attack: str = "distance",
                     title: str | None = None):
    """ROC curves of one attack on one target, one curve per (method, ε), with the chance diagonal.

    ``target`` is a target name or kind (default: the first target of the document); one the document
    has no curve of is refused naming the targets it has, never drawn as another target's curve."""
    import plotly.graph_objects as go

    from dpfed_core.errors import ConfigError

    # an audit of summable statistics runs attacks of its own (projection, items, lr; no distance): a method
    # without a curve of ``attack`` is drawn by its first attack, and the title and legend name the one drawn
    ran: dict[str, list[str]] = {}
    for r in audit_doc["results"]:
        ran.setdefault(r["method"], []).append(r["attack"])
    drawn = {m: attack if attack in a else a[0] for m, a in ran.items()}
    rows = [r for r in audit_doc["results"] if r["attack"] == drawn[r["method"]]]
    attacks = list(dict.fromkeys(drawn.values())) or [attack]
    names = list(dict.fromkeys(r["target"] for r in rows))
    if target is not None:
        found = [n for n in names if n == target or any(r["target"] == n and r["target_kind"] == target for r in rows)]
        if not found:
            raise ConfigError(f"the audit has no target {target!r}: its targets are "
                              f"{', '.join(map(repr, names)) or 'none'}; choose one of them (the Target control)",
                              param="target")
        names = found
    chosen = names[0] if names else None
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance (AUC 0.5)",
                             line=dict(color="#999", dash="dot"), hoverinfo="skip"))
    seen: dict[str, int] = {}
    for r in (r for r in rows if r["target"] == chosen):
        lab = _run_label(r) + (f" ({r['attack']})" if len(attacks) > 1 else "")
        # the method's one colour everywhere; its several ε told apart by the line's dash
        n = seen[r["method"]] = seen.get(r["method"], -1) + 1
        fig.add_trace(go.Scatter(
            x=r["roc"]["fpr"], y=r["roc"]["tpr"], mode="lines",
            line=dict(color=_method_color(r["method"]), width=2, shape="hv",
                      dash=("solid", "dash", "dot", "dashdot", "longdash")[n % 5]),
            name=f"{lab} — AUC {_f(r['auc']):.3f}",
            hovertemplate=f"{lab}<br>FPR %{{x:.3f}}<br>TPR %{{y:.3f}}<extra></extra>"))
    fig.update_xaxes(title="false-positive rate (OUT runs flagged IN)", range=[0, 1])
    fig.update_yaxes(title="true-positive rate (IN runs flagged IN)", range=[0, 1.02])
    return _layout(fig, title or f"ROC — {chosen} — attack: {', '.join(attacks)}", height=480, legend_inside=True)


def audit_epsilon_figure(audit_doc: dict, title: str | None = None):
    """Empirical ε lower bound (strongest attack and target) against the claimed ε, log-ε axis with ∞
    drawn right of the grid, the line ε_lb = claimed ε, and the ceiling the run count can certify."""
    import plotly.graph_objects as go

    summ = audit_doc["summary"]
    claimed = [_f(r["epsilon"]) for r in summ]
    finite = [c for c in claimed if math.isfinite(c)] or [1.0]
    lo, hi = min(finite), max(finite)
    inf_x = hi * 10 ** 0.6
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[lo / 1.5, hi * 1.5], y=[lo / 1.5, hi * 1.5], mode="lines",
                             name="claimed ε (a bound above this line = violation)",
                             line=dict(color="#E45756", dash="dash")))
    cap = max((_f(r.get("max_certifiable_epsilon")) for r in summ), default=math.nan)
    if math.isfinite(cap):
        fig.add_trace(go.Scatter(x=[lo / 1.5, inf_x * 1.3], y=[cap, cap], mode="lines",
                                 name=f"most these runs can certify ({cap:.2f})",
                                 line=dict(color="#999", dash="dot")))
    for i, m in enumerate(dict.fromkeys(r["method"] for r in summ)):
        color = _method_color(m)
        pts = [r for r in summ if r["method"] == m]
        # finite claims joined by a line in ε order, whatever order the audit ran them in (``--epsilons 1,4,0.5``);
        # ε = ∞ (no guarantee) drawn apart as a diamond
        for part, is_inf in ((sorted((r for r in pts if math.isfinite(_f(r["epsilon"]))),
                                     key=lambda r: _f(r["epsilon"])), False),
                             ([r for r in pts if not math.isfinite(_f(r["epsilon"]))], True)):
            if not part:
                continue
            fig.add_trace(go.Scatter(
                x=[inf_x if is_inf else _f(r["epsilon"]) for r in part], y=[_f(r["epsilon_lb"]) for r in part],
                mode="lines+markers" if len(part) > 1 else "markers",
                name=m if not is_inf or len(pts) == 1 else f"{m}, ε = ∞", legendgroup=m,
                marker=dict(size=12 if is_inf else 10, color=color, symbol="diamond" if is_inf else "circle"),
                line=dict(color=color),
                customdata=[[fmt_eps(r["epsilon"]), _f(r["auc"]), r["epsilon_lb_target"]] for r in part],
                hovertemplate=f"{m}<br>claimed ε %{{customdata[0]}}<br>ε lower bound %{{y:.3f}}"
                              "<br>AUC %{customdata[1]:.3f}<br>%{customdata[2]}<extra></extra>"))
    ticks = sorted(set(finite))
    fig.update_xaxes(type="log", tickvals=ticks + [inf_x], ticktext=[fmt_num(t) for t in ticks] + ["∞"],
                     title="claimed ε per entity (log; ∞ = non-private)")
    fig.update_yaxes(title="empirical ε lower bound", rangemode="tozero")
    return _layout(fig, title, height=460)
