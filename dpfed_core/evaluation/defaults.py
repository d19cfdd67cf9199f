"""The one starting configuration of both front ends (dashboard and CLI).

The dashboard's Federate page starts from :func:`default_config`, and every ``run``/``sweep`` flag
left out on the command line takes its value from the same function, so the same visible settings
give the same run on either front end. Method, aggregation, rank and ε come from the measurement
``bench/results/dashboard_defaults.json`` (``bench/bench_dashboard_defaults.py``: which DP setting
beats the entities alone on the bundled clinic sample); without the file the recommended DP method
with the plain defaults below is used, and nothing measured is claimed.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path
from typing import Mapping, Sequence

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset

#: The measurement the defaults come from (committed with the benchmark script).
DEFAULTS_FILE = Path(__file__).resolve().parents[2] / "bench" / "results" / "dashboard_defaults.json"
#: The recommended DP method (bench/results/utility.md) when the measurement names none.
RECOMMENDED_METHOD = "dp-cooccurrence"
#: Server / matrix-factorisation iterations of both front ends (the measurement ran with it).
DEFAULT_MAX_ITER = 100
DEFAULT_LAM = 0.1
DEFAULT_DELTA = 1e-6
DEFAULT_SEED = 0


@functools.lru_cache(maxsize=4)
def _read(path: str) -> dict | None:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def measured_defaults(path: Path | None = None) -> dict | None:
    """The benchmark's document (``defaults``, ``settings``, ``cpu_seconds_per_run`` …), or None."""
    doc = _read(str(path or DEFAULTS_FILE))
    return doc if doc and isinstance(doc.get("defaults"), dict) else None


def _epsilon(value) -> float:
    return math.inf if value in ("inf", None) else float(value)


#: Prototypes per entity when none is asked for: a public constant. Not read off the data — a k
#: computed from the entities' exact sizes would be a parameter of every release (a prototype method
#: with ``cluster_size=None`` sends k prototypes) and a line of the public report; a DP prototype
#: method chooses its k per entity up to it from its released noisy size (``cluster_size``), a
#: non-private one caps it by the entity's training users.
DEFAULT_K = 10


def default_k(ds: FederatedDataset | None = None) -> int:
    """Prototypes per entity of a run that names none: :data:`DEFAULT_K`, whatever the data (the
    argument is accepted so that callers need not know that)."""
    return DEFAULT_K


def default_mode(ds: FederatedDataset) -> str:
    """``observed`` for explicit ratings (RMSE headline), ``zero`` otherwise (ranking headline)."""
    return "observed" if ds.value_kind == "ratings" else "zero"


def default_method(path: Path | None = None) -> str:
    """The method both front ends run when none is named: the measured default, else the recommended
    DP method."""
    from dpfed_core.methods import available_methods

    doc = measured_defaults(path)
    measured = doc["defaults"] if doc else None
    if measured and measured.get("method") in available_methods():
        return measured["method"]
    return RECOMMENDED_METHOD


def default_config(ds: FederatedDataset, method: str | None = None, path: Path | None = None) -> RunConfig:
    """The starting configuration of a run on ``ds`` (both front ends).

    Method (when none is asked for), aggregation (summable methods), rank, ε and δ from the measurement
    (:data:`DEFAULTS_FILE`) — for any method, as the Federate page keeps them when the method changes;
    k from :func:`default_k` (prototype methods only); mode from
    :func:`default_mode`; δ = 1e-6, λ = 0.1, :data:`DEFAULT_MAX_ITER` iterations, seed 0.
    """
    from dpfed_core.methods import METHODS, available_methods

    available_methods()  # fills the registry (federated methods register on first use)
    doc = measured_defaults(path)
    measured = doc["defaults"] if doc else None
    method = method or default_method(path)
    uses_eps = METHODS.get(method) is not None and METHODS[method].uses_epsilon
    # the measured setting is every method's starting point, as on the Federate page (whose controls keep
    # their values when the method changes): the same settings left out give the same run on both
    from_file = measured is not None

    return RunConfig(
        method=method,
        epsilon=(_epsilon(measured["epsilon"]) if from_file else 1.0) if uses_eps else math.inf,
        delta=float(measured.get("delta", DEFAULT_DELTA)) if from_file else DEFAULT_DELTA,
        k=default_k(ds),
        rank=int(measured["rank"]) if from_file else 5,
        lam=DEFAULT_LAM,
        mode=default_mode(ds),
        seed=DEFAULT_SEED,
        max_iter=DEFAULT_MAX_ITER,
        aggregation=_default_aggregation(method, measured),
    )


def _default_aggregation(method: str, measured: dict | None) -> str:
    """A method's aggregation when none is given: the measured default for a summable method, "none"
    for any other method or without the measurement."""
    from dpfed_core.federation.protocol import is_summable

    return measured["aggregation"] if measured is not None and is_summable(method) else "none"


#: Loader options (:func:`dpfed_core.data.loaders.load_data`) → the CLI flag that sets each.
_DATA_FLAGS = {"federation": "--federation", "entity": "--federation", "event_table": "--events",
               "events": "--events", "exclude_entities": "--exclude-entities", "value_kind": "--value-kind",
               "value_max": "--value-max", "user_col": "--user-col", "item_col": "--item-col",
               "value_col": "--value-col", "entity_col": "--entity-col", "duplicates": "--duplicates",
               "entity_from": "--entity-from", "entity_transform": "--entity-transform",
               "item_name_col": "--item-name-col", "drop_missing": "--drop-missing",
               "entities_from_data": "--entities-from-data", "encoding": "--encoding",
               "headerless": "--no-header"}
#: Loader options a file gives the CLI (an uploaded list is a file there), with the flag that takes it.
_LIST_FILES = {"items": "--items FILE", "entities": "--entities FILE", "item_features": "--item-features FILE"}


def compared_config(ds: FederatedDataset, base: RunConfig, method: str) -> RunConfig:
    """``base``'s settings for ``method`` compared with it on the same split (``run --compare``, the
    Evaluate page): a DP method compared with a run that spends no ε (kmeans, popularity …, whose ε is
    ∞) runs at the default ε and δ of :func:`default_config` — the ones ``--epsilon``'s help and the
    Federate page state — never at ∞, which would release without noise under a DP method's name. A
    setting of ``base`` the method has no use for is not handed on
    (:func:`~dpfed_core.evaluation.experiments.unused_settings_dropped`)."""
    from dpfed_core.evaluation.experiments import unused_settings_dropped
    from dpfed_core.methods import METHODS, available_methods

    available_methods()
    config = unused_settings_dropped(base.replace(method=method))
    if METHODS[method].uses_epsilon and not METHODS[base.method].uses_epsilon:
        default = default_config(ds, method)
        config = config.replace(epsilon=default.epsilon, delta=default.delta)
    return config


def compared_epsilon_note(ds: FederatedDataset, base: RunConfig, methods: Sequence[str]) -> str | None:
    """The sentence stating the ε a DP method compared with a run that spends none ran at
    (:func:`compared_config`), or None when every compared method runs at ``base``'s own ε."""
    from dpfed_core.evaluation.verdicts import format_epsilon

    moved = [c for c in (compared_config(ds, base, m) for m in methods) if c.epsilon != base.epsilon]
    if not moved:
        return None
    names = ", ".join(c.method for c in moved)
    c = moved[0]
    return (f"{names} {'is' if len(moved) == 1 else 'are'} run at the default ε = {format_epsilon(c.epsilon)} "
            f"per entity (δ = {c.delta:g}) and charged at it: {base.method} spends no ε; to compare at "
            "another ε, run the DP method itself at that ε (--method, --epsilon; the Federate page's ε)")


def with_method(base: RunConfig, method: str) -> RunConfig:
    """``base``'s settings for another method, as both front ends give them: secure aggregation only
    for a summable method — kept from ``base`` when its method was summable too, else the measured
    default, as ``sweep --method`` / ``run --method`` left without ``--aggregation`` give — and ε as
    given, or the measured default ε of :func:`default_config` when ``base`` spent none (its method
    takes no ε, or it ran at ε = ∞): a DP method is never handed ∞, nor a constant the measurement
    does not state. A prototype method under ``base``'s "secure" would run its summable reference
    lines with secure aggregation, which the CLI never does."""
    from dpfed_core.federation.protocol import is_summable
    from dpfed_core.methods import METHODS

    doc = measured_defaults()
    measured = doc["defaults"] if doc is not None else None
    if is_summable(method) and is_summable(base.method):
        aggregation = base.aggregation
    else:
        aggregation = _default_aggregation(method, measured)
    spent = METHODS[base.method].uses_epsilon and base.epsilon is not None and math.isfinite(float(base.epsilon))
    epsilon = base.epsilon if spent else (_epsilon(measured["epsilon"]) if measured is not None else 1.0)
    return base.replace(method=method, aggregation=aggregation, epsilon=epsilon)


def prototype_method(config: RunConfig):
    """The configured prototype method (public parameters only), or None when the method is not one or
    its settings do not make one (their refusal is given where they are checked)."""
    from dpfed_core.federation.prototypes import PROTOTYPE_METHODS

    cls = PROTOTYPE_METHODS.get(config.method)
    if cls is None:
        return None
    try:
        return cls(k=config.k, value_max=1.0, **dict(config.prototype_params))
    except Exception:
        return None


def automatic_k_size(config: RunConfig) -> float | None:
    """The cluster size by which the configured method picks each entity's k from its noisy user count
    (k_eff = clip(⌊n̂ / size⌋, 1, k)), or None when k is used as given: a method that releases nothing
    private, ``cluster_size`` none, or k = 1. The one rule the CLI and the Federate page state."""
    obj = prototype_method(config)
    cs = getattr(obj, "cluster_size", None)
    if obj is None or not getattr(obj, "private", False) or cs is None or int(config.k) <= 1:
        return None
    return float(cs)


def trust_model_note(method: str, aggregation: str, methods: Sequence[str]) -> str | None:
    """One line saying how the summable methods among ``methods`` ran — under the trust model of the
    run of ``method`` (its ``aggregation``), the same for every method of its table or sweep, not each
    method's own default — or None when none of the others is summable."""
    from dpfed_core.federation.protocol import is_summable

    summable = [m for m in dict.fromkeys(methods) if is_summable(m)]
    if not summable:
        return None
    how = ("with secure aggregation (the server learns only the entities' sum)" if aggregation == "secure"
           else "without secure aggregation (each entity adds the full noise to its own release)")
    why = ("the run's trust model, the same for every method here" if is_summable(method) else
           f"{method} sends each entity's release to the server, and the methods it is compared with run "
           "under that trust model")
    return f"{', '.join(summable)} ran {how}: {why}"


def sweep_mode(mode: str | None, metric: str = "mar") -> str | None:
    """The mode a sweep runs in when none is given (``mode`` None): zero for a ranking metric — a crossing
    on a ranking metric is a ranking claim, whatever the value kind (in observed mode a ratings federation
    ranks only the items each user rated, and the verdict against individual reverses on MovieLens) —
    else the run's own default (None). A given mode is kept. The CLI's ``sweep`` and the Trade-off page
    (before any Federate run) apply it alike."""
    from dpfed_core.evaluation.experiments import RMSE_METRICS

    return "zero" if mode is None and metric not in RMSE_METRICS else mode


def observed_ranking_note(docs: dict, mode: str, control: str = "Federate → Observation mode") -> str | None:
    """Why a rating model ranks badly in observed mode (the non-private ``central`` worst of all), when
    the comparison ``docs`` (method → run document) shows ranking metrics of observed-mode models; None
    otherwise. ``control``: where the reader switches to zero mode (a dashboard control, a CLI flag)."""
    if mode != "observed" or not any("mar" in (d.get("overall") or {}) for d in docs.values()):
        return None
    mars = {m: d["overall"]["mar"] for m, d in docs.items() if math.isfinite(float(d["overall"].get("mar", math.nan)))}
    worst = max(mars, key=mars.get) if mars else None
    text = ("Observed mode: each model fits only the values of the entries it observed (how much a user liked "
            "an item), never which items a user chose; MAR and the @10 metrics rank the hidden items among all "
            "items, which such a model was not trained to do. ")
    if worst == "central":
        text += ("That is why the non-private central MF ranks worst here (MAR "
                 f"{mars['central']:.3f}, the highest of the {len(mars)} compared): it fits the pooled ratings best, "
                 "not the choice of items. ")
    return text + (f"Compare rankings in zero mode ({control}); compare RMSE in observed mode. The verdict "
                   "against each entity alone stays on MAR: every site's blend, local's too, is chosen for "
                   "ranking, and a lower RMSE can come from shrinkage alone (a random V lowers it too).")


def _arg(value) -> str:
    import shlex

    if isinstance(value, (list, tuple)):
        value = ",".join(map(str, value))
    if isinstance(value, float):
        # the shortest text that reads back as exactly this float (`:g` kept 6 digits: an ε or δ typed with
        # more would be another budget on the command line), a whole number without its '.0'
        value = "inf" if math.isinf(value) else repr(value).removesuffix(".0")
    return shlex.quote(str(value))


def cli_command(config: RunConfig | dict, data: str | None = None, data_options: dict | None = None,
                out: str = "r.json", command: str = "run", extra: Sequence[str] = (),
                per_point: Sequence[str] = ()) -> str:
    """The ``python -m dpfed_core run …`` line that reproduces a run of ``config`` exactly: every
    setting written out (not left to defaults, which may change), ``data``/``data_options`` as the
    loader was given them. Options without a flag (an uploaded item list) are named in a trailing
    comment instead of being dropped silently. ``command``: another command that takes the run's
    flags (``deploy-local``, ``sweep``), with its own ``extra`` flags after them; ``per_point``: the
    settings (``"epsilon"``, ``"seed"``) that command sets for each of its runs from its own flags, so
    they are not written as one run's."""
    from dpfed_core.data.long_table import fixed_duplicate_rule
    from dpfed_core.federation.protocol import PROTOTYPE_METHODS, is_summable
    from dpfed_core.methods import METHODS, available_methods

    available_methods()
    c = config.to_dict() if isinstance(config, RunConfig) else dict(config)
    method = c["method"]
    spec = METHODS.get(method)
    parts = [f"python -m dpfed_core {command}", "--data", _arg(data) if data else "YOUR_DATA"]
    missing = []
    options = dict(data_options or {})
    if fixed_duplicate_rule(options.get("value_kind")):
        # counts are summed and implicit data keep one row whatever the option says: the loader applies
        # that rule on the CLI too, and a ratings rule written beside it would misstate what the run did
        options.pop("duplicates", None)
    for key, value in sorted(options.items()):
        flag = _DATA_FLAGS.get(key)
        if value in (None, [], "", False):
            continue
        if flag is None:
            missing.append(key.replace("_", " "))
        elif value is True:  # a switch
            parts.append(flag)
        else:
            parts += [flag, _arg(value)]
    parts += ["--method", method]
    eps = c.get("epsilon")
    if spec is None or spec.uses_epsilon:
        if "epsilon" not in per_point:
            parts += ["--epsilon", _arg(float(eps) if eps not in ("inf", None) else math.inf)]
        parts += ["--delta", _arg(float(c.get("delta", DEFAULT_DELTA)))]
    if spec is not None and spec.uses_k:
        parts += ["--k", str(c["k"])]
    for key, flag in (("rank", "--rank"), ("lam", "--lam"), ("mode", "--mode"), ("seed", "--seed"),
                      ("max_iter", "--max-iter"), ("test_fraction", "--test-fraction"), ("n_hidden", "--n-hidden"),
                      ("top_n", "--top-n")):
        if c.get(key) is not None and key not in per_point:
            parts += [flag, _arg(c[key])]
    if c.get("simulation"):
        parts.append("--simulation")
    if method in PROTOTYPE_METHODS:
        parts += ["--server-weighting", c.get("server_weighting", "none")]
    if is_summable(method):
        parts += ["--aggregation", c.get("aggregation", "none")]
        if c.get("max_dropouts"):
            parts += ["--max-dropouts", str(c["max_dropouts"])]
    for key, value in {**(c.get("prototype_params") or {}), **(c.get("method_params") or {})}.items():
        if isinstance(value, dict):
            value = ",".join(f"{k}:{v:g}" if isinstance(v, float) else f"{k}:{v}" for k, v in value.items())
        parts += ["--param", _arg(f"{key}={'none' if value is None else value}")]
    parts += ["--out", out, *extra]
    line = " ".join(parts)
    if missing:
        files = [_LIST_FILES[k.replace(" ", "_")] for k in missing if k.replace(" ", "_") in _LIST_FILES]
        line += f"  # not expressible as flags here: {', '.join(missing)}"
        if files:
            line += f" — give the files you loaded on the Data page ({', '.join(files)})"
    return line


def sweep_command(config: RunConfig, epsilons: Sequence[float], seeds: Sequence[int], references: Sequence[str],
                  metric: str = "mar", data: str | None = None, data_options: dict | None = None,
                  out: str = "sweep.json", allow_non_private: bool = False) -> str:
    """The ``python -m dpfed_core sweep …`` line of the sweep of ``config`` over ``epsilons`` × ``seeds``
    with ``references`` (:func:`cli_command`'s run settings, each written out; ε and the seed are the
    grid's and the seeds'), its crossing stated on ``metric``. A method that spends no ε gets no
    ``--epsilons``: the command line refuses a grid it would ignore."""
    from dpfed_core.methods import METHODS, available_methods

    available_methods()
    spec = METHODS.get(config.method)
    extra: list[str] = []
    if spec is None or spec.uses_epsilon:
        extra += ["--epsilons", _arg([float(e) for e in epsilons])]
    extra += ["--seeds", _arg([int(s) for s in seeds]), "--references", _arg(list(references)),
              "--metric", _arg(metric)]
    if allow_non_private:
        extra.append("--allow-non-private")
    line = cli_command(config, data, data_options, out=out, command="sweep", extra=extra,
                       per_point=("epsilon", "seed"))
    # the command line takes --k only for a method that sends prototypes: its prototype references
    # then run with the default k, and a sweep whose references ran with another is not reproduced
    with_k = [m for m in references if m in METHODS and METHODS[m].uses_k]
    if with_k and spec is not None and not spec.uses_k and config.k != DEFAULT_K:
        line += (f"{'; ' if '  # ' in line else '  # not expressible as flags here: '}k = {config.k} of "
                 f"{', '.join(with_k)} (this command runs {'them' if len(with_k) > 1 else 'it'} with k = {DEFAULT_K})")
    return line


def method_words(config: RunConfig | Mapping) -> str:
    """The method and, for a summable one run with secure aggregation, its trust model:
    "dp-cooccurrence (secure aggregation)"."""
    from dpfed_core.federation.protocol import is_summable

    c = config.to_dict() if isinstance(config, RunConfig) else dict(config)
    method = str(c.get("method") or "?")
    return method + (" (secure aggregation)" if is_summable(method) and c.get("aggregation") == "secure" else "")


def settings_line(config: RunConfig | Mapping) -> str:
    """A run's settings in one line, naming only what its method uses (no k for a method without
    prototypes, no ε for a non-private one, the trust model of a summable one); ``config`` a RunConfig
    or a result document's ``config`` (a setting it does not hold is left out)."""
    from dpfed_core.evaluation.verdicts import format_epsilon
    from dpfed_core.methods import METHODS, available_methods

    available_methods()
    c = config.to_dict() if isinstance(config, RunConfig) else dict(config)
    spec = METHODS.get(c.get("method"))
    parts = [method_words(c)]
    if spec is None or spec.uses_epsilon:
        parts.append(f"ε = {format_epsilon(c.get('epsilon'))}")
    if spec is not None and spec.uses_k:
        parts.append(f"k ≤ {c.get('k')}")
    parts += [f"{name} = {c[name]}" for name in ("rank", "seed") if c.get(name) is not None]
    return ", ".join(parts)
