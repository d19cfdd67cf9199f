"""Plotly figure builders shared by the dashboard and reports.

Figures set no template and keep transparent backgrounds, so Streamlit's theme (light or dark)
or a report's template decides colours of text and grid; the data colours below are mid-luminance
so they read on both white and near-black backgrounds.
"""
from __future__ import annotations

import functools
import math
from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

#: Qualitative palette readable on light and dark backgrounds (mid-luminance, colour-blind aware).
PALETTE = ["#4C78A8", "#F58518", "#54A24B", "#E45756", "#72B7B2", "#B279A2", "#FF9DA6",
           "#9D755D", "#BAB0AC", "#EECA3B"]
SEQUENTIAL = "Viridis"

#: One fixed colour per built-in method on every page and in the report (the single palette map: no
#: two methods share a colour or a near-identical shade). Kelly's colours of maximum contrast, then a
#: few more; the headline DP method is the strong red, its reference ``local`` the strong blue. A
#: method not listed here gets one of :data:`_EXTRA` (:func:`method_color`): a new method needs no
#: entry.
METHOD_COLORS = {
    "dp-cooccurrence": "#BE0032", "local": "#0067A5", "individual": "#F38400", "dp-popularity": "#875692",
    "popularity": "#654522", "central": "#008856", "dp-gaussian": "#A1CAF1", "dp-prototypes": "#00A6A6",
    "kmeans": "#F3C300", "krandom": "#C2B280", "random-v": "#848482", "fcf": "#E68FAC",
    "friedman-ge": "#604E97", "friedman-isgd": "#F6A600", "friedman-pals": "#B3446C", "friedman-psgd": "#DCD300",
    "ge-mf": "#882D17", "global-average": "#8DB600", "global-effects": "#E25822", "implicit-als": "#2B3D26",
    "item-average": "#F99379", "xin-full": "#17BECF", "xin-pmc": "#9467BD", "xin-pmd": "#393B79",
    "xin-public": "#1A1A1A", "dp-als": "#2CA02C",
}
#: The colours of methods not in :data:`METHOD_COLORS` (none of them is in the map).
_EXTRA = ["#8CD17D", "#B6992D", "#499894", "#D37295", "#A0CBE8", "#FFBE7D", "#86BCB6", "#D4A6C8",
          "#79706E", "#F1CE63"]


def method_color(method: str) -> str:
    """The colour of ``method`` everywhere (dashboard and report): its entry in
    :data:`METHOD_COLORS`, else one of :data:`_EXTRA` derived from its name — the slot its name's
    CRC-32 picks, or the next one free when a registered unlisted method whose name sorts first holds
    it — so that registered methods never share a colour while there are at most ``len(_EXTRA)``
    unlisted ones."""
    if method in METHOD_COLORS:
        return METHOD_COLORS[method]
    return _derived_colors(frozenset(_unlisted_methods()) | {str(method)})[str(method)]


def _unlisted_methods() -> list[str]:
    """The registered methods without an entry in :data:`METHOD_COLORS` (plug-ins included)."""
    try:
        from dpfed_core.methods.registry import available_methods

        return [m for m in available_methods() if m not in METHOD_COLORS]
    except Exception:  # noqa: BLE001 — a colour never fails a page: without the registry, the name alone
        return []


@functools.lru_cache(maxsize=64)
def _derived_colors(names: frozenset[str]) -> dict[str, str]:
    import zlib

    taken: dict[int, str] = {}
    out: dict[str, str] = {}
    for name in sorted(names):
        slot = zlib.crc32(name.encode()) % len(_EXTRA)
        for step in range(len(_EXTRA)):
            if (slot + step) % len(_EXTRA) not in taken:
                slot = (slot + step) % len(_EXTRA)
                break
        taken.setdefault(slot, name)
        out[name] = _EXTRA[slot]
    return out


#: Where ∞ is drawn on a log-ε axis: this many decades right of the largest finite ε.
INF_OFFSET_DECADES = 0.6


def _base_layout(fig: go.Figure, title: str | None = None, height: int | None = None,
                 legend_rows: int = 1) -> go.Figure:
    """Shared layout: transparent background, horizontal legend above the plot (below the title),
    with room reserved for ``legend_rows`` rows of legend so the two never overlap."""
    top = (45 if title else 10) + (24 * legend_rows if fig.data and len(fig.data) > 1 else 0)
    fig.update_layout(
        title=dict(text=title, x=0, xanchor="left", y=0.99, yanchor="top") if title else None,
        height=(height or 400) + top,
        # axes grow their own margins for long tick labels (automargin), so nothing is clipped
        margin=dict(l=10, r=20, t=top + 10, b=10, autoexpand=True),
        paper_bgcolor="rgba(0,0,0,0)",
        plot_bgcolor="rgba(0,0,0,0)",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0),
    )
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    return fig


def escape_text(text: object) -> str:
    """Data strings (entity, item names) as inert text in Plotly labels: Plotly renders a subset of
    HTML (links, styles) in titles, ticks and hover text, so ``<`` ``>`` ``&`` are escaped."""
    import html

    return html.escape(str(text), quote=False)


def _short(names: Iterable[str], n: int = 28) -> list[str]:
    return [escape_text(s if len(s) <= n else s[: n - 1] + "…") for s in map(str, names)]


def _dedupe(labels: list[str]) -> list[str]:
    """Plotly merges identical category labels; keep truncated duplicates apart."""
    seen: dict[str, int] = {}
    out = []
    for s in labels:
        c = seen.get(s, 0)
        seen[s] = c + 1
        out.append(s if c == 0 else f"{s} ({c + 1})")
    return out


# ------------------------------------------------------------------------------ heatmaps
def prototype_heatmap(P: np.ndarray, item_names: Sequence[str], columns: np.ndarray | None = None,
                      title: str | None = None, value_max: float | None = None) -> go.Figure:
    """What one entity sent the server: its k prototypes (rows) over the items (columns) with the
    largest mass, labelled by item name."""
    P = np.asarray(P, dtype=float)
    if columns is None:
        columns = np.argsort(-np.abs(P).sum(axis=0), kind="stable")[: min(30, P.shape[1])]
    names = np.asarray(item_names)[columns]
    Z = P[:, columns]
    fig = go.Figure(go.Heatmap(
        z=Z, x=_dedupe(_short(names)), y=[f"prototype {i + 1}" for i in range(P.shape[0])],
        colorscale=SEQUENTIAL, zmin=0, zmax=value_max if value_max else None,
        customdata=np.broadcast_to(np.asarray([escape_text(x) for x in names], dtype=object)[None, :], Z.shape),
        hovertemplate="%{y}<br>%{customdata}<br>value %{z:.3f}<extra></extra>",
        colorbar=dict(title="value"),
    ))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(tickangle=-45, type="category")  # numeric item ids are names, not numbers
    return _base_layout(fig, title, height=max(300, 26 * P.shape[0] + 150))


def _sd_text(sd: float) -> str:
    """An sd over seeds for a hover: four decimals, or a dash for one seed (no spread to state)."""
    return f"{sd:.4f}" if np.isfinite(sd) else "— (one seed)"


def factor_heatmap(V: np.ndarray, item_names: Sequence[str], n_items: int = 40,
                   title: str | None = None, columns: Sequence[str] | None = None) -> go.Figure:
    """V (items × latent factors) for the items with the largest loadings; ``columns``: the columns'
    names ("factor 1", … by default)."""
    V = np.asarray(V, dtype=float)
    # an item with no row at all (outside the shared catalogue: a zero row) shows nothing the server learned
    rows = np.argsort(-V.sum(axis=1), kind="stable")[: min(n_items, V.shape[0])]
    rows = rows[np.abs(V[rows]).sum(axis=1) > 0] if (np.abs(V).sum(axis=1) > 0).any() else rows
    names = np.asarray(item_names)[rows]
    fig = go.Figure(go.Heatmap(
        z=V[rows], y=_dedupe(_short(names, 36)),
        x=list(columns) if columns is not None else [f"factor {f + 1}" for f in range(V.shape[1])],
        colorscale=SEQUENTIAL, zmin=0,
        hovertemplate="%{y}<br>%{x}: %{z:.3f}<extra></extra>", colorbar=dict(title="loading"),
    ))
    fig.update_yaxes(autorange="reversed", type="category")  # numeric item ids are names
    fig.update_xaxes(type="category")
    return _base_layout(fig, title, height=max(300, 60 + 16 * len(rows)))


# ------------------------------------------------------------------------------ bars
#: Above this many entities the grouped bars become a sorted dot plot (one row per entity).
MANY_ENTITIES = 12


def metric_bars(df: pd.DataFrame, metric: str, title: str | None = None,
                methods: Sequence[str] | None = None, labels: dict[str, str] | None = None,
                metric_label: str | None = None) -> go.Figure:
    """One metric per entity (and 'overall') for each method, each method in its fixed colour.

    ``df`` is :func:`dpfed_core.ui.engine.metrics_frame`: columns method, entity, <metric>. Up to
    :data:`MANY_ENTITIES` entities: grouped bars. More: a dot plot with one row per entity, sorted by
    the first method's value, so 150 entities stay readable (see :func:`metric_dots`).
    """
    methods = list(methods) if methods is not None else list(dict.fromkeys(df["method"]))
    if df.loc[df["entity"].astype(str) != "overall", "entity"].nunique() > MANY_ENTITIES:
        return metric_dots(df, metric, title=title, methods=methods, labels=labels, metric_label=metric_label)
    df = df.assign(entity=df["entity"].map(lambda e: escape_text(e) if e != "overall" else e))
    entities = [str(e) for e in dict.fromkeys(df["entity"])]
    if "overall" in entities:  # overall last, visually apart
        entities = [e for e in entities if e != "overall"] + ["overall"]
    mlabel = metric_label or metric
    fig = go.Figure()
    for m in methods:
        d = df[df["method"] == m].assign(entity=lambda x: x["entity"].astype(str)).set_index("entity").reindex(entities)
        name = (labels or {}).get(m, m)
        fig.add_bar(x=entities, y=d[metric], name=name, marker_color=method_color(m),
                    customdata=np.array([[m]] * len(entities), dtype=object),
                    hovertemplate=f"<b>%{{x}}</b><br>method: {_esc(m)}<br>{_esc(mlabel)}: %{{y:.4f}}<extra></extra>")
    fig.update_layout(barmode="group", xaxis_title="entity", yaxis_title=mlabel)
    fig.update_xaxes(type="category")  # numeric hospital ids are names, not numbers
    return _base_layout(fig, title, height=380, legend_rows=1 + len(methods) // 6)


def metric_dots(df: pd.DataFrame, metric: str, title: str | None = None,
                methods: Sequence[str] | None = None, labels: dict[str, str] | None = None,
                metric_label: str | None = None) -> go.Figure:
    """Many entities: one row per entity (sorted by the first method's value), one dot per method in
    its fixed colour; a grey line joins each entity's dots so the gap between methods reads at once."""
    methods = list(methods) if methods is not None else list(dict.fromkeys(df["method"]))
    d = df[df["entity"].astype(str) != "overall"].assign(entity=lambda x: x["entity"].map(escape_text))
    wide = d.pivot_table(index="entity", columns="method", values=metric, sort=False)
    if wide.empty:  # every entity's value undefined (no test users anywhere): nothing to place
        fig = go.Figure()
        fig.add_annotation(text="No entity has a value of this metric: none has test users.", showarrow=False,
                           xref="paper", yref="paper", x=0.5, y=0.5)
        fig.update_xaxes(visible=False)
        fig.update_yaxes(visible=False)
        return _base_layout(fig, title, height=200)
    first = methods[0] if methods and methods[0] in wide.columns else wide.columns[0]
    wide = wide.sort_values(first, ascending=True)
    ents = list(wide.index)
    mlabel = metric_label or metric
    fig = go.Figure()
    lo, hi = wide.min(axis=1).to_numpy(float), wide.max(axis=1).to_numpy(float)
    xs, ys = [], []
    for e, a, b in zip(ents, lo, hi):
        xs += [a, b, None]
        ys += [e, e, None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", line=dict(color="#999", width=1),
                             hoverinfo="skip", showlegend=False))
    for m in methods:
        if m not in wide.columns:
            continue
        name = (labels or {}).get(m, m)
        fig.add_trace(go.Scatter(
            x=wide[m], y=ents, mode="markers", name=name, marker=dict(color=method_color(m), size=8),
            hovertemplate=f"<b>%{{y}}</b><br>method: {_esc(m)}<br>{_esc(mlabel)}: %{{x:.4f}}<extra></extra>"))
    fig.update_yaxes(type="category", title="entity", categoryorder="array", categoryarray=ents)
    fig.update_xaxes(title=mlabel)
    return _base_layout(fig, title, height=max(320, 18 * len(ents) + 60), legend_rows=1 + len(methods) // 6)


def _esc(text: object) -> str:
    """Data strings inside Plotly hover templates: escape the template and HTML metacharacters."""
    import html

    return html.escape(str(text)).replace("%", "%%").replace("{", "&#123;").replace("}", "&#125;")


def privacy_composed_bars(per_entity: list[dict], requested: float | None = None,
                          coalition: float | None = None, title: str | None = None) -> go.Figure:
    """Each entity's guarantee as the accountant composed it (one bar per entity), never a stack of
    its stage rows: under zCDP the stages do not add up, and under basic composition the bar is
    their sum anyway. A dashed line marks the requested ε, a dotted one the ε against the server
    colluding with every other entity (secure aggregation), when given.

    An entity whose ε is ∞ (a release without a finite guarantee) keeps its place: a hatched bar up
    to the top of the chart marked "∞", whose legend entry and hover say it has no finite guarantee."""
    df = pd.DataFrame(per_entity)
    fig = go.Figure()
    if df.empty:
        return _base_layout(fig, title)
    eps = df["epsilon"].astype(float).to_numpy()
    unbounded = ~np.isfinite(eps)
    how = df["accountant"].astype(str) if "accountant" in df else pd.Series("", index=df.index)
    names = df["entity"].map(escape_text)
    fin = ~unbounded
    fig.add_bar(x=names[fin], y=eps[fin], name="ε of the entity's releases (composed)",
                marker_color=PALETTE[0], customdata=np.c_[how[fin].to_numpy(object)],
                hovertemplate="entity: %{x}<br>ε = %{y:.3g}<br>composed by: %{customdata[0]}<extra></extra>")
    if unbounded.any():
        # ∞ has no height: drawn to a stand-in top above every finite value and line, never left out
        tops = [float(v) for v in (*eps[fin], requested, coalition) if v is not None and math.isfinite(float(v))]
        top = 1.15 * max(tops) if tops else 1.0
        fig.add_bar(x=names[unbounded], y=[top] * int(unbounded.sum()), name="ε = ∞ (no finite guarantee)",
                    marker=dict(color=PALETTE[3], pattern=dict(shape="/")), text=["∞"] * int(unbounded.sum()),
                    textposition="outside", customdata=np.c_[how[unbounded].to_numpy(object)],
                    hovertemplate="entity: %{x}<br>ε = ∞ (no finite guarantee: the bar's height stands in "
                                  "for it)<br>composed by: %{customdata[0]}<extra></extra>")
    for value, name, dash in ((requested, "requested ε", "dash"),
                              (coalition, "ε against the server + all other entities", "dot")):
        if value is not None and math.isfinite(float(value)):
            fig.add_trace(go.Scatter(x=list(df["entity"].map(escape_text)), y=[float(value)] * len(df),
                                     mode="lines", name=f"{name} ({float(value):.3g})",
                                     line=dict(color="#E45756" if dash == "dot" else "#888", dash=dash),
                                     hovertemplate=f"{name}: %{{y:.3g}}<extra></extra>"))
    fig.update_layout(xaxis_title="entity", yaxis_title="ε (composed guarantee)", barmode="overlay")
    fig.update_xaxes(type="category", tickangle=-45 if df["entity"].nunique() > 8 else 0,
                     categoryorder="array", categoryarray=list(names))
    fig.update_yaxes(rangemode="tozero")
    return _base_layout(fig, title, height=340, legend_rows=2)


# ------------------------------------------------------------------------------ trade-off
def _eps_x(eps: np.ndarray, inf_x: float) -> np.ndarray:
    return np.where(np.isinf(eps), inf_x, eps)


def tradeoff_chart(table: pd.DataFrame, method: str, metric: str, *,
                   references: Sequence[str] = (), crossing: float | None = None,
                   labels: dict[str, str] | None = None, title: str | None = None,
                   metric_label: str | None = None, crossing_against: str | None = None) -> go.Figure:
    """Mean ± sd of ``metric`` against ε (log axis) for the swept method, with ∞ drawn as a separate
    point right of the finite grid, each reference method as a horizontal line (mean) with its
    ± sd band, and the crossing ε marked — against ``crossing_against`` (its label), named beside it.

    ``table``: rows of :func:`dpfed_core.evaluation.experiments.sweep_table` (method, epsilon, mean, sd, n).
    """
    labels = labels or {}
    d = table[table["method"] == method].sort_values("epsilon")
    eps = d["epsilon"].to_numpy(dtype=float)
    finite = eps[np.isfinite(eps)]
    lo_f = float(finite.min()) if len(finite) else 1.0
    hi_f = float(finite.max()) if len(finite) else 1.0
    inf_x = hi_f * 10 ** INF_OFFSET_DECADES
    x_min = lo_f / 10 ** 0.25
    x_max = inf_x * 10 ** 0.25
    fig = go.Figure()

    # references: horizontal mean line with a light sd band across the whole axis
    for i, ref in enumerate(references):
        r = table[table["method"] == ref]
        if r.empty:
            continue
        mean, sd = float(r["mean"].iloc[0]), float(r["sd"].iloc[0])
        color = method_color(ref)
        name = labels.get(ref, ref)
        if len(r) > 1:
            # A DP reference (dp-popularity) runs at every ε: drawn against ε like the swept method.
            r = r.sort_values("epsilon")
            e_ref = r["epsilon"].to_numpy(float)
            x = _eps_x(e_ref, inf_x)
            # the hover states the ε the reference ran at: ∞ is drawn at a stand-in x, never stated as it
            said = [["∞ (non-private)" if np.isinf(e) else f"{e:g}", _sd_text(v)]
                    for e, v in zip(e_ref, r["sd"].to_numpy(float))]
            fig.add_trace(go.Scatter(
                x=x, y=r["mean"].to_numpy(float), mode="lines+markers", name=f"{name} (same ε)",
                line=dict(color=color, dash="dash", width=2), legendgroup=ref, customdata=said,
                error_y=dict(type="data", array=r["sd"].to_numpy(float), visible=True, color=color),
                hovertemplate=f"method: {_esc(ref)}<br>ε = %{{customdata[0]}}<br>{_esc(metric_label or metric)}: "
                              "%{y:.4f} ± %{customdata[1]} (sd over seeds)<extra></extra>"))
            continue
        if sd > 0:
            fig.add_trace(go.Scatter(
                x=[x_min, x_max, x_max, x_min], y=[mean - sd, mean - sd, mean + sd, mean + sd],
                fill="toself", fillcolor=_rgba(color, 0.08), line=dict(width=0), hoverinfo="skip", mode="lines",
                showlegend=False, legendgroup=ref))
        fig.add_trace(go.Scatter(
            x=[x_min, x_max], y=[mean, mean], mode="lines", name=f"{name}",
            line=dict(color=color, dash="dash", width=2), legendgroup=ref,
            hovertemplate=f"method: {_esc(ref)}<br>{_esc(metric_label or metric)}: %{{y:.4f}} ± {_sd_text(sd)} "
                          "(sd over seeds)<br>ε: not used<extra></extra>"))

    color = method_color(method)
    name = labels.get(method, method)
    mlab = _esc(metric_label or metric)
    fin = d[np.isfinite(d["epsilon"])]
    if not fin.empty:
        x = fin["epsilon"].to_numpy(float)
        m = fin["mean"].to_numpy(float)
        s_all = fin["sd"].to_numpy(float)
        s = np.nan_to_num(s_all)  # one seed: no band (its sd is unknown, not 0: the hover says so)
        fig.add_trace(go.Scatter(x=np.r_[x, x[::-1]], y=np.r_[m + s, (m - s)[::-1]], fill="toself", mode="lines",
                                 fillcolor=_rgba(color, 0.25), line=dict(width=0), hoverinfo="skip",
                                 showlegend=False, legendgroup=method))
        fig.add_trace(go.Scatter(x=x, y=m, mode="lines+markers", name=f"{name} (mean ± sd)",
                                 line=dict(color=color, width=3), legendgroup=method,
                                 customdata=[_sd_text(v) for v in s_all],
                                 hovertemplate=f"method: {_esc(method)}<br>ε = %{{x:g}}<br>{mlab}: "
                                 "%{y:.4f} ± %{customdata} (sd over seeds)<extra></extra>"))
    inf_row = d[np.isinf(d["epsilon"])]
    if not inf_row.empty:
        m_inf, s_inf = float(inf_row["mean"].iloc[0]), float(inf_row["sd"].iloc[0])
        fig.add_trace(go.Scatter(
            x=[inf_x], y=[m_inf], mode="markers", name=f"{name}, ε = ∞ (non-private)",
            marker=dict(color=color, size=12, symbol="diamond", line=dict(width=1, color="#888")),
            error_y=dict(type="data", array=[s_inf], visible=True, color=color),
            legendgroup=method, hovertemplate=f"method: {_esc(method)}<br>ε = ∞ (non-private)<br>{mlab}: "
                                              f"%{{y:.4f}} ± {_sd_text(s_inf)} (sd over seeds)<extra></extra>"))
        if len(finite):
            fig.add_vline(x=hi_f * 10 ** (INF_OFFSET_DECADES / 2), line=dict(color="#888", dash="dot", width=1))

    if crossing is not None:
        cx = inf_x if math.isinf(crossing) else crossing
        fig.add_vline(x=cx, line=dict(color="#E45756", width=2))
        # inside the plot, left of the line: above it sits the legend
        fig.add_annotation(x=math.log10(cx), y=0.98, yref="paper", xref="x", showarrow=False,
                           text=f"crossing ε = {'∞' if math.isinf(crossing) else f'{crossing:g}'}"
                                + (f" vs {labels.get(crossing_against, crossing_against)}" if crossing_against else ""),
                           font=dict(color="#E45756"), yanchor="top", xanchor="right",
                           bgcolor="rgba(0,0,0,0)")

    ticks = sorted(set(finite.tolist()))
    fig.update_xaxes(type="log", range=[math.log10(x_min), math.log10(x_max)],
                     tickvals=ticks + [inf_x], ticktext=[f"{t:g}" for t in ticks] + ["∞"],
                     title="ε per entity (log scale; ∞ = non-private)")
    fig.update_yaxes(title=metric_label or metric)
    # one legend row per ~2 entries at the widths of a half-page column
    return _base_layout(fig, title, height=420, legend_rows=(len(references) + 3) // 2)


def _rgba(hex_color: str, alpha: float) -> str:
    h = hex_color.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


# ------------------------------------------------------------------------------ diagram
def protocol_dot(n_entities: int = 3, names: Sequence[str] | None = None, k: str = "k",
                 rank: str = "ℓ") -> str:
    """Graphviz DOT source of the two rounds: entities send DP releases (noisy shares of item statistics,
    or ``k`` DP prototypes), the server returns V.

    Neutral grey lines and transparent background so it reads in light and dark themes.
    """
    names = list(names or [f"Entity {i + 1}" for i in range(n_entities)])[:4]
    lines = [
        "digraph G {",
        '  rankdir=LR; bgcolor="transparent"; nodesep=0.35; ranksep=1.4;',
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11, '
        'color="#888888", fontcolor="#222222"];',
        '  edge [fontname="Helvetica", fontsize=10, color="#888888", fontcolor="#888888"];',
        '  server [label="Server\\nsums or stacks the releases\\nfits the item factors V\\nno privacy cost", '
        'fillcolor="#F58518"];',
    ]
    for i, n in enumerate(names):
        lines.append(f'  e{i} [label="{n}\\nprivate data X_{i + 1}\\n(never leaves)\\n'
                     f'fits U_{i + 1} locally", fillcolor="#72B7B2"];')
        lines.append(f'  e{i} -> server [label="Round 1: DP release R_{i + 1}\\n(noisy statistics or {k} prototypes)", '
                     'color="#4C78A8", '
                     'fontcolor="#4C78A8", penwidth=2];')
        lines.append(f'  server -> e{i} [label="Round 2: item factors V", color="#54A24B", '
                     'fontcolor="#54A24B", penwidth=2, style=dashed];')
    lines.append("}")
    return "\n".join(lines)
