"""How the compliance report writes things: numbers, ε, escaped text, tables, badges, figures, its CSS.

Every section of the report (:mod:`dpfed_core.reporting.report_sections`) writes its values through
these helpers, so a number, an infinite ε or a missing value reads the same everywhere in the page and
every string taken from a document is escaped before it is written into the HTML.
"""
from __future__ import annotations

import html
import json
import math
from typing import Any, Iterable, Sequence

__all__ = ["fmt_num", "fmt_eps", "html_table", "shape_text", "CSS"]

CSS = """
:root { --fg:#1d2330; --muted:#5b6475; --line:#d9dee7; --bg:#ffffff; --soft:#f4f6fa;
        --ok:#1f7a3e; --bad:#b3261e; --warn:#8a5a00; --accent:#2f5d9b; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 60px; }
h1 { font-size: 26px; margin: 0 0 4px; } h2 { font-size: 20px; margin: 0 0 10px;
     border-bottom: 2px solid var(--line); padding-bottom: 6px; } h3 { font-size: 16px; margin: 18px 0 6px; }
section { margin: 28px 0; }
p, li { max-width: 900px; } .muted { color: var(--muted); } .small { font-size: 13px; }
table { border-collapse: collapse; margin: 8px 0 12px; font-size: 13px; width: auto; max-width: 100%; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; max-height: 520px; overflow-y: auto; }
.badge { display: inline-block; font-size: 11px; font-weight: 700; letter-spacing: .04em;
         text-transform: uppercase; padding: 2px 8px; border-radius: 10px; margin-left: 8px;
         vertical-align: middle; border: 1px solid currentColor; }
.b-analyst { color: var(--warn); } .b-released { color: var(--accent); } .b-public { color: var(--muted); }
.callout { border-left: 4px solid var(--accent); background: var(--soft); padding: 10px 14px; margin: 10px 0; }
.callout.bad { border-color: var(--bad); } .callout.ok { border-color: var(--ok); }
.verdict-ok { color: var(--ok); font-weight: 600; } .verdict-bad { color: var(--bad); font-weight: 700; }
.kv td:first-child { font-weight: 600; background: var(--soft); }
nav ol { columns: 2; font-size: 14px; } header { border-bottom: 3px solid var(--fg); padding-bottom: 10px; }
.fig { margin: 8px 0 16px; }
.figures { display: flex; flex-wrap: wrap; gap: 14px; margin: 12px 0; }
.figure { flex: 1 1 280px; border: 2px solid var(--line); border-radius: 8px; padding: 10px 14px; }
.figure .num { font-size: 30px; font-weight: 700; display: block; }
.figure.bad .num { color: var(--bad); }
@media print { .scroll { max-height: none; overflow: visible; } nav { display: none; } }
"""


def _f(x: Any) -> float:
    """A number from a document value (JSON writes inf as "inf" and NaN as null)."""
    if x is None:
        return math.nan
    if isinstance(x, str):
        t = x.strip().lower()
        if t in ("inf", "∞", "infinity"):
            return math.inf
        if t == "-inf":
            return -math.inf
        try:
            return float(t)
        except ValueError:
            return math.nan
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def fmt_num(x: Any, digits: int = 4) -> str:
    """How every number appears in the report: ∞, — for missing, ints as is, else ``digits``
    significant digits."""
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    v = _f(x)
    if math.isnan(v):
        return "—" if x is None or not isinstance(x, str) else html.escape(str(x))
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    if v == int(v) and abs(v) < 1e15 and not isinstance(x, float):
        return str(int(v))
    return f"{v:.{digits}g}"


def fmt_eps(x: Any) -> str:
    """ε for people as the CLI and the dashboard say it (rounded up: never below what holds), ∞ labelled
    non-private."""
    from dpfed_core.privacy.statement import epsilon_that_holds

    v = _f(x)
    if math.isnan(v):
        return fmt_num(x)
    return "∞ (non-private)" if math.isinf(v) else epsilon_that_holds(v)


def _esc(x: Any) -> str:
    return html.escape(str(x))


def _cell(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return f"<td>{_esc(' × '.join(str(s) for s in v))}</td>"
    if isinstance(v, dict):
        return f"<td><code>{_esc(json.dumps(v, ensure_ascii=False))}</code></td>"
    if isinstance(v, bool) or v is None:
        return f"<td>{fmt_num(v) if v is not None else '—'}</td>"
    if isinstance(v, (int, float)) or (isinstance(v, str) and v.strip().lower() in ("inf", "-inf")):
        return f"<td class='num'>{fmt_num(v)}</td>"
    return f"<td>{_esc(v)}</td>"


def html_table(rows: Sequence[dict], columns: Sequence[tuple[str, str]] | None = None,
               cls: str = "", scroll: bool = False, raw: Iterable[str] = ()) -> str:
    """An HTML table of ``rows`` with ``columns`` = [(key, header)] (all keys if None). Values are
    escaped, except keys listed in ``raw`` (already-safe HTML)."""
    rows = list(rows)
    if columns is None:
        keys = list(dict.fromkeys(k for r in rows for k in r))
        columns = [(k, k) for k in keys]
    raw = set(raw)
    head = "".join(f"<th>{_esc(h)}</th>" for _, h in columns)
    body = []
    for r in rows:
        cells = "".join(f"<td>{r.get(k, '')}</td>" if k in raw else _cell(r.get(k)) for k, _ in columns)
        body.append(f"<tr>{cells}</tr>")
    if not body:
        body.append(f"<tr><td colspan='{len(columns)}' class='muted'>none</td></tr>")
    t = f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    return f"<div class='scroll'>{t}</div>" if scroll else t


def shape_text(shape: Any) -> str:
    """A logged message's shape as the report and the dashboard say it: ``None`` is a message that
    carries no array (a protocol message: a decision, an acknowledgement, SecAgg+'s keys), ``[]`` one
    number, else the array's dimensions."""
    if shape is None:
        return "no array"
    return " × ".join(str(x) for x in shape) or "scalar"


def _badge(kind: tuple[str, str]) -> str:
    name, title = kind
    return f"<span class='badge b-{name.split()[0]}' title='{_esc(title)}'>{_esc(name)}</span>"



def _fig_html(fig, div_id: str, height: int = 440) -> str:
    return "<div class='fig'>" + fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                                             default_height=f"{height}px",
                                             config={"displaylogo": False, "responsive": True}) + "</div>"
