"""The dashboard's defaults and advice, read from one measurement.

``bench/bench_dashboard_defaults.py`` measures dp-cooccurrence with and without secure aggregation
over a grid of rank and ε against ``local`` and ``individual`` on the bundled clinic sample and writes
its chosen default with the reason into ``bench/results/dashboard_defaults.json``. The Federate page's
defaults (method, aggregation, rank, ε) and its advice text come from that file (time hints come from
the cost model, :mod:`dpfed_core.evaluation.cost`); the
advice sentence is produced by :func:`dpfed_core.evaluation.verdicts.sweep_verdict_sentence`, the
function the Trade-off page and the CLI use for a sweep, so advice and verdict cannot disagree. When
no DP setting beat ``local`` the advice says so instead of claiming it.

The starting configuration itself is :func:`dpfed_core.evaluation.defaults.default_config`, shared
with the CLI. Without the file (an installed package without the benchmark results) the engine's plain
defaults are used and the advice says that nothing was measured: no number is invented.
"""
from __future__ import annotations

import math
from pathlib import Path

from dpfed_core.evaluation.verdicts import BASELINE_NAMES, format_epsilon, sweep_verdict_sentence
from dpfed_core.evaluation.defaults import (DEFAULTS_FILE, _epsilon, default_config,  # noqa: F401
                                           measured_defaults, settings_line)

MEASUREMENT_NAME = "bench/results/dashboard_defaults.md"


def chosen_setting(doc: dict) -> dict | None:
    """The measured setting the defaults name (its MAR, verdict counts, single-run words)."""
    d = doc["defaults"]
    for s in doc.get("settings", []):
        if (s["method"], s["aggregation"], int(s["rank"]), _epsilon(s["epsilon"])) == \
                (d["method"], d["aggregation"], int(d["rank"]), _epsilon(d["epsilon"])):
            return s
    return None


def default_verdict(doc: dict) -> dict | None:
    """The chosen setting's verdict over seeds, in the shape the verdict sentences read."""
    s = chosen_setting(doc)
    if s is None:
        return None
    return {"H": int(s["H"]), "eps": _epsilon(s["epsilon"]), "metric": s.get("metric", "mar"),
            "mode": s.get("mode", "zero"), "no_test_users": [], "seeds": int(s["seeds"]),
            "baselines": {b: dict(r) for b, r in s["verdict"].items()}}


def advice_text(path: Path | None = None, data: tuple[str | None, dict | None] | None = None) -> str:
    """The Federate page's advice, generated from the measurement: what the defaults are, why, and
    what they measured against local and individual — or that no DP setting beat local. ``data``
    (the loaded data's loader spec and options): on other data than the measurement's, the advice
    says where the defaults come from without quoting the sample's numbers as if they were these."""
    doc = measured_defaults(path)
    if doc is not None and data is not None and not (data[0] == doc.get("data") and not (data[1] or {})):
        d = doc["defaults"]
        agg = "with secure aggregation" if d["aggregation"] == "secure" else "without secure aggregation"
        return (f"The defaults ({d['method']} {agg}, rank {d['rank']}, ε = {format_epsilon(_epsilon(d['epsilon']))}) "
                f"were measured on {doc['data']} ({doc['entities']} entities), not on the data loaded here; "
                "the Trade-off page measures which ε pays on these data.")
    if doc is None:
        return ("No measurement of the defaults was found (bench/results/dashboard_defaults.json); run "
                "bench/bench_dashboard_defaults.py to measure which setting wins on the sample.")
    d = doc["defaults"]
    s = chosen_setting(doc)
    v = default_verdict(doc)
    agg = "with secure aggregation" if d["aggregation"] == "secure" else "without secure aggregation"
    head = (f"Defaults measured on {doc['data']} ({doc['entities']} entities, {len(doc['seeds'])} seeds, "
            f"{doc['mode']} mode, MAR; {MEASUREMENT_NAME}): {d['method']} {agg}, rank {d['rank']}, "
            f"ε = {format_epsilon(_epsilon(d['epsilon']))}. ")
    if s is None or v is None:
        return head + "The measured setting is missing from the file; rerun the benchmark."
    numbers = (f"Mean MAR {s['mar_mean']:.4f} against {s['local_mar_mean']:.4f} for {BASELINE_NAMES['local']} "
               f"and {s['individual_mar_mean']:.4f} for {BASELINE_NAMES['individual']}. ")
    if not d.get("beats_local"):
        return (head + "No measured DP setting beat the entities alone (local) on this sample; these defaults "
                "are the best measured, not a win. " + numbers + sweep_verdict_sentence(v))
    return head + numbers + sweep_verdict_sentence(v) + f" Chosen as {d['reason']}."


#: The Federate page's numeric controls that take a range: key → (label, lowest, highest). The page
#: draws each control with its range, and a loaded run document whose value lies outside is refused by
#: name (a number input given a value outside its range shows its lowest, without a word). λ and the
#: seed go as far as the engine (the seed as far as a browser's numbers are exact).
CONTROL_RANGES = {
    "fed_lam": ("λ (ridge)", 0.0, 1e6),
    "fed_seed": ("Seed (split and method)", 0, 2**53 - 1),
    "fed_max_iter": ("Server / MF iterations", 1, 100_000),
    "fed_test_fraction": ("Test users per entity", 0.01, 0.99),
    "fed_n_hidden": ("Hidden entries per test user", 1, 1000),
}


def param_widget(p) -> str:
    """The Federate page's control of a declared method parameter: "checkbox", "select", "number" or
    "text" (an optional or free-form value; blank = its automatic default). The page draws it and a
    loaded run document is written into it by this one rule."""
    if p.kind == "bool" and not p.optional:
        return "checkbox"
    if p.kind == "choice":
        return "select"
    if p.kind in ("int", "float") and not p.optional:
        return "number"
    return "text"


def widget_state(config: dict) -> dict:
    """The Federate page's widget values that reproduce a run document's ``config`` (written by the
    CLI's ``run --out`` or by this dashboard): the other direction of
    :func:`dpfed_core.evaluation.defaults.cli_command`. Raises a :class:`ConfigError` naming what
    is missing when ``config`` is not a run's configuration."""
    from dpfed_core.config import RunConfig
    from dpfed_core.errors import ConfigError
    from dpfed_core.methods import METHODS, available_methods

    if not isinstance(config, dict) or "method" not in config:
        raise ConfigError("this is not a run document: it has no 'config' with a 'method' (write one with "
                          "`python -m dpfed_core run … --out r.json` or the Run document tab)")
    available_methods()
    if config["method"] not in METHODS:
        raise ConfigError(f"the document's method {config['method']!r} is not available here")
    known = set(RunConfig.__dataclass_fields__)
    try:
        cfg = RunConfig(**{k: v for k, v in config.items() if k in known})
    except ConfigError as exc:
        # the document's value, not the session's: the page names the control that holds it
        raise ConfigError(f"the document's settings cannot run here: {exc}", param=exc.param) from exc
    eps = _epsilon(cfg.epsilon)
    state = {"fed_method": cfg.method, "fed_epsilon": eps,
             "fed_eps_text": "inf" if math.isinf(eps) else f"{eps:g}", "fed_delta": f"{float(cfg.delta):g}",
             "fed_k": int(cfg.k), "fed_rank": int(cfg.rank), "fed_lam": float(cfg.lam), "fed_mode": cfg.mode,
             "fed_seed": int(cfg.seed), "fed_simulation": bool(cfg.simulation),
             "fed_secure": cfg.aggregation == "secure", "fed_max_iter": int(cfg.max_iter),
             "fed_test_fraction": float(cfg.test_fraction), "fed_n_hidden": int(cfg.n_hidden),
             "fed_weighting": cfg.server_weighting}
    def num(x) -> str:  # a whole number in full (a seed), any other as short as it reads
        return str(x) if isinstance(x, int) else f"{x:g}"

    outside = [f"{label} {num(state[key])} (it takes {num(lo)}–{num(hi)})"
               for key, (label, lo, hi) in CONTROL_RANGES.items() if not lo <= state[key] <= hi]
    if outside:
        raise ConfigError(f"the document's {'; '.join(outside)} lie{'s' if len(outside) == 1 else ''} beyond this "
                          "page's control, so its run cannot be reproduced here: run it with the command line (the "
                          "CLI takes the document's values), or load a document within these ranges")
    from dpfed_core.ui.catalogue import budget_split_defaults

    declared = {p.name: p for p in METHODS[cfg.method].parameters}

    # every parameter and budget share of the method starts from its default, as the page draws it: one the
    # document leaves out must not keep what the session had set
    for p in declared.values():
        state[f"fed_p_{cfg.method}_{p.name}"] = ("" if p.default is None else str(p.default)) \
            if param_widget(p) == "text" else p.default
    stages = budget_split_defaults(cfg.method)
    state.update({f"fed_split_{stage}": float(share) for stage, share in stages.items()})
    params = {**(cfg.prototype_params or {}), **(cfg.method_params or {})}
    for name, value in params.items():
        if name == "split" and isinstance(value, dict):
            unknown = sorted(set(value) - set(stages))
            if unknown:
                raise ConfigError(f"the document's budget split names {', '.join(map(repr, unknown))}, not a stage of "
                                  f"{cfg.method} (its stages: {', '.join(stages) or 'none'})")
            state.update({f"fed_split_{stage}": float(share) for stage, share in value.items()})
        else:
            p = declared.get(name)
            state[f"fed_p_{cfg.method}_{name}"] = ("" if value is None else str(value)) if p is not None and \
                param_widget(p) == "text" else value
    return state


#: Run settings the Federate page has no control of (it runs with their defaults), with where they are set.
_NOT_ON_THE_PAGE = {"top_n": "the metrics' N (CLI --top-n)", "n_jobs": "parallel entity fits (--param n_jobs)",
                    "max_dropouts": "entities that may drop out of a secure sum (--max-dropouts)"}


def settings_not_loaded(config: dict) -> list[str]:
    """The settings of a run document's ``config`` the Federate page cannot set, where they differ from
    the value the page runs with: said beside "loaded", so a reproduced run is not silently another."""
    from dpfed_core.config import RunConfig

    known = set(RunConfig.__dataclass_fields__)
    cfg, base = RunConfig(**{k: v for k, v in config.items() if k in known}), RunConfig()
    return [f"{name} = {getattr(cfg, name)} (here {getattr(base, name)}: {what})"
            for name, what in _NOT_ON_THE_PAGE.items() if getattr(cfg, name) != getattr(base, name)]
