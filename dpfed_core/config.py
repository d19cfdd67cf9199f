"""The full configuration of a run — everything that decides its numbers, seed included."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from dpfed_core.errors import ConfigError
from dpfed_core.privacy.ledger import validate_budget


#: Largest finite ε a run accepts (ε ≥ 1e50 crashed the Gaussian calibration).
#: Every limit of a run's inputs, once (the CLI, the dashboard and the engine read these).
#: Largest finite ε accepted. Beyond it DP noise is below float resolution of any statistic, and the
#: Gaussian calibration's search range overflows (from ε ≈ 1e50); use inf for non-private.
MAX_EPSILON = 1e4

#: The ε grid of a privacy–utility sweep left at its default: the CLI's ``sweep`` without ``--epsilons``
#: and the dashboard's Trade-off page, one grid so the two spend and show the same.
DEFAULT_SWEEP_EPSILONS = (0.1, 0.3, 1.0, 3.0, 10.0, math.inf)
#: Smallest finite ε accepted. Below it the calibrations fail or lose meaning: the Gaussian σ grows as
#: 1/ε and the samplers' scales overflow float64 near ε = 1e-300 (ε = 5e-324 raised
#: ZeroDivisionError); at 1e-6 every noise scale is already ~1e6× the value bound.
MIN_EPSILON = 1e-6
#: Largest rank ℓ accepted (also bounded by the number of items, a public shape).
MAX_RANK = 1000
#: Largest k (prototypes per entity) accepted: k × items floats per entity message.
MAX_K = 10_000
#: Largest seed accepted (NumPy seeds are unsigned 64-bit; the split adds its own word).
MAX_SEED = 2**63 - 1
#: Largest ridge penalty λ accepted: beyond it the penalty swamps every fit.
MAX_LAM = 1e6


def check_epsilon(epsilon: float, param: str = "epsilon") -> float:
    """One ε of a run or a grid within [MIN_EPSILON, MAX_EPSILON] (or inf, non-private); the error
    names ``param`` so that each front end shows its own flag or control."""
    eps = float(epsilon)
    if math.isfinite(eps) and 0 < eps < MIN_EPSILON:
        raise ConfigError(f"ε = {eps:g} is below {MIN_EPSILON:g}, the smallest ε the noise calibration handles (the "
                          "noise would be millions of times the data's bound: nothing could be learned)", param=param)
    if math.isfinite(eps) and eps > MAX_EPSILON:
        raise ConfigError(f"ε = {eps:g} is above {MAX_EPSILON:g}; beyond it the noise is negligible — use inf for a "
                          "non-private run", param=param)
    return eps


@dataclass
class RunConfig:
    """Parameters of one run (one method on one split).

    method : name of a registered comparison method (see :data:`dpfed_core.methods.METHODS`).
    epsilon, delta : privacy budget per entity; ``inf`` = non-private. Only DP methods use them.
    k : prototypes per entity. rank : latent factors ℓ. lam : ridge λ. mode : "zero" | "observed".
    seed : fixes the split and every non-private step. A DP method's noise comes from the operating
        system's entropy unless ``simulation`` is set (:mod:`dpfed_core.privacy.noise`).
    simulation : reproducible noise from the seed, for tests and benchmarks only; every output of
        such a run is labelled "simulation: noise reproducible, no privacy claim".
    test_fraction, n_hidden : the split of SPEC §4. top_n : N of precision/recall/NDCG@N.
    server_weighting : "none" | "counts" (weight prototypes by released cluster sizes).
    n_jobs : entities fitted at once (prototype methods: worker processes; a summable method's round-1
        shares and round-2 sites: threads; 1 = none, -1 = all cores); same results.
    prototype_params : extra keyword arguments of the prototype method (bounds, split, …).
    method_params : extra keyword arguments of non-prototype methods.
    aggregation : trust model of summable releases (``dp-popularity``, ``dp-cooccurrence``):
        "none" — each entity adds the full noise and the server sees every release; "secure" — each
        adds a share σ/√(H − d) and the server learns only the sum (secure aggregation).
    max_dropouts : d, entities that may drop out of a secure sum (the shares are sized for it).
    """

    method: str = "kmeans"
    epsilon: float = math.inf
    delta: float = 1e-6
    k: int = 50
    rank: int = 10
    lam: float = 0.1
    mode: str = "zero"
    seed: int = 0
    simulation: bool = False
    max_iter: int = 200
    test_fraction: float = 0.2
    n_hidden: int = 5
    top_n: int = 10
    server_weighting: str = "none"
    n_jobs: int = 1
    prototype_params: dict = field(default_factory=dict)
    method_params: dict = field(default_factory=dict)
    aggregation: str = "none"
    max_dropouts: int = 0

    def __post_init__(self) -> None:
        # A configuration is checked where it is made, whoever makes it (the CLI's flags, a dashboard
        # page, a stored document, a node's message, ``replace``): one rule, and no later step has
        # to re-check what cannot exist invalid.
        self.validate()

    def validate(self) -> "RunConfig":
        """Raise :class:`~dpfed_core.errors.ConfigError` naming the first unusable value; returns
        ``self``. Runs when the configuration is made; call it again only after changing a field."""
        validate_budget(self.epsilon, self.delta)
        check_epsilon(self.epsilon)
        for name in ("k", "rank", "top_n", "n_hidden", "max_iter"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name} must be a positive whole number, got {v!r}", param=name)
        if not isinstance(self.lam, (int, float)) or not math.isfinite(self.lam) or self.lam < 0:
            raise ConfigError(f"λ (lam) must be a non-negative number, got {self.lam!r}", param="lam")
        if self.lam > MAX_LAM:
            raise ConfigError(f"λ (lam) = {self.lam:g} is above {MAX_LAM:g}; the ridge penalty would swamp every fit",
                              param="lam")
        for name, limit in (("rank", MAX_RANK), ("k", MAX_K)):
            if getattr(self, name) > limit:
                raise ConfigError(f"{name} = {getattr(self, name)} is above {limit}; lower it", param=name)
        if self.mode not in ("zero", "observed"):
            raise ConfigError(f"mode must be 'zero' or 'observed', got {self.mode!r}", param="mode")
        if isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, int) or not (self.n_jobs == -1 or self.n_jobs >= 1):
            raise ConfigError(f"n_jobs must be -1 (all cores) or a whole number ≥ 1, got {self.n_jobs!r}",
                              param="n_jobs")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed <= MAX_SEED:
            raise ConfigError(f"seed must be a whole number from 0 to 2^63 − 1, got {self.seed!r}", param="seed")
        if self.aggregation not in ("none", "secure"):
            raise ConfigError(f"aggregation must be 'none' or 'secure', got {self.aggregation!r}",
                              param="aggregation")
        if isinstance(self.max_dropouts, bool) or not isinstance(self.max_dropouts, int) or self.max_dropouts < 0:
            raise ConfigError(f"max_dropouts must be a whole number ≥ 0, got {self.max_dropouts!r}",
                              param="max_dropouts")
        if not 0 < self.test_fraction < 1:
            raise ConfigError(f"test fraction must be strictly between 0 and 1, got {self.test_fraction}",
                              param="test_fraction")
        return self

    @property
    def params(self) -> dict:
        """The method's parameters: ``--param KEY=VALUE`` (stored as ``prototype_params``, the name
        kept for stored documents) and the Python API's ``method_params`` (which wins on a clash).
        Every method reads its parameters here, so ``--param`` reaches every method."""
        return {**dict(self.prototype_params or {}), **dict(self.method_params or {})}

    def replace(self, **changes) -> "RunConfig":
        known = {f.name for f in fields(self)}
        bad = set(changes) - known
        if bad:
            raise ConfigError(f"unknown configuration keys: {', '.join(sorted(bad))}")
        d = asdict(self)
        if "method" in changes and changes["method"] != self.method:
            # ``--param`` values belong to the method they were given for: another method (a compared
            # one, a reference) runs with its own defaults, never with keys it may not even have
            d["prototype_params"], d["method_params"] = {}, {}
        d.update(changes)
        return RunConfig(**d)

    def to_dict(self) -> dict:
        return asdict(self)


# ------------------------------------------------------------------------------- declared parameters
_KINDS = ("int", "float", "bool", "choice", "text", "mapping", "floats")


@dataclass(frozen=True)
class Param:
    """One declared parameter of a method (like scikit-learn's ``_parameter_constraints``): the
    dashboard's Advanced panel, ``--param`` checking and ``python -m dpfed_core methods`` all read it.

    name : keyword of the method's constructor. kind : "int" | "float" | "bool" | "choice" | "text" |
    "mapping" (names → non-negative numbers, e.g. a budget split; ``--param split=size:0.1,sums:0.9``) |
    "floats" (a tuple of numbers: ``--param values=1,2,3``; ``high`` bounds its length).
    default : the constructor's default. doc : one line, with units. low, high : inclusive bounds
    (``low_open``/``high_open`` make them strict). choices : the allowed values of a "choice".
    optional : ``None`` is allowed (and means what ``doc`` says). advanced : shown in the Advanced
    panel (False: set through a main control, e.g. ``rank``).
    """

    name: str
    kind: str
    default: Any
    doc: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    choices: tuple = ()
    optional: bool = False
    advanced: bool = True

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ValueError(f"Param {self.name}: kind must be one of {_KINDS}, got {self.kind!r}")
        if self.kind == "choice" and self.default not in self.choices and self.default is not None:
            raise ValueError(f"Param {self.name}: default {self.default!r} is not among {self.choices}")

    def describe(self) -> str:
        """The allowed values in words, e.g. ``float in (0, 1)``, ``one of partition, lsh``."""
        if self.kind == "choice":
            text = "one of " + ", ".join(map(str, self.choices))
        elif self.kind in ("int", "float") and (self.low is not None or self.high is not None):
            lo = "−∞" if self.low is None else f"{self.low:g}"
            hi = "∞" if self.high is None else f"{self.high:g}"
            text = (f"{'whole number' if self.kind == 'int' else 'number'} in "
                    f"{'(' if self.low_open or self.low is None else '['}{lo}, {hi}"
                    f"{')' if self.high_open or self.high is None else ']'}")
        else:
            text = {"int": "whole number", "float": "number", "bool": "true or false", "text": "text",
                    "mapping": f"mapping of {', '.join(map(str, self.choices)) or 'names'} to shares ≥ 0",
                    "floats": "comma-separated numbers"}[self.kind]
        return text + (" or none" if self.optional else "")

    def coerce(self, value: Any, method: str = "") -> Any:
        """``value`` (a Python value or the text of ``--param``) as this parameter's type, checked
        against its bounds and choices; a :class:`ConfigError` naming the parameter otherwise."""
        where = f"{method} parameter {self.name}" if method else f"parameter {self.name}"

        def bad(why: str = ""):
            said = self.describe()
            return ConfigError(f"{where} must be {said if said.startswith('one of') else 'a ' + said}, got "
                               f"{value!r}{why} — {self.doc}",
                               param="prototype_params")

        if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "null")):
            if self.optional:
                return None
            raise bad()
        if self.kind == "bool":
            if isinstance(value, (bool,)):
                return value
            text = str(value).strip().lower()
            if text in ("true", "1", "yes", "on"):
                return True
            if text in ("false", "0", "no", "off"):
                return False
            raise bad()
        if self.kind == "choice":
            for c in self.choices:
                if value == c or str(value).strip() == str(c):
                    return c
            raise bad()
        if self.kind == "text":
            return str(value)
        if self.kind == "mapping":
            return self._coerce_mapping(value, bad)
        if self.kind == "floats":
            parts = value.split(",") if isinstance(value, str) else list(value) if isinstance(value, (list, tuple)) else None
            if not parts:
                raise bad()
            number = Param(self.name, "float", 0.0, self.doc)
            return tuple(number.coerce(v.strip() if isinstance(v, str) else v) for v in parts)
        if isinstance(value, bool):
            raise bad()
        if isinstance(value, str):
            from dpfed_core.data.inputs import strict_float, strict_int

            try:  # strictly: Python's int()/float() would read '1_0' as 10, or full-width digits
                value = strict_int(value) if self.kind == "int" and "." not in value and "e" not in value.lower() \
                    else strict_float(value)
            except ValueError:
                raise bad() from None
        if self.kind == "int":
            import numbers

            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, numbers.Integral):
                raise bad()
            value = int(value)
        else:
            try:
                value = float(value)
            except (TypeError, ValueError):
                raise bad() from None
            if not math.isfinite(value):
                raise bad()
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            raise bad()
        if self.high is not None and (value > self.high or (self.high_open and value == self.high)):
            raise bad()
        return value

    def _coerce_mapping(self, value: Any, bad) -> dict:
        if isinstance(value, str):
            pairs = [p for p in value.replace(";", ",").split(",") if p.strip()]
            try:
                value = {k.strip(): v for k, v in (p.split(":", 1) for p in pairs)}
            except ValueError:
                raise bad(" (write NAME:SHARE,NAME:SHARE)") from None
        if not isinstance(value, dict):
            raise bad()
        share = Param(self.name, "float", 0.0, self.doc, low=0)
        out = {}
        for k, v in value.items():
            if self.choices and k not in self.choices:
                raise bad(f" (unknown key {k!r})")
            try:
                out[k] = share.coerce(v)
            except ConfigError:  # named as the whole parameter is: its method, and the stage whose share is bad
                raise bad(f" (the share of {k!r} must be a finite number ≥ 0, got {v!r})") from None
        return out


def check_params(declared: tuple[Param, ...] | list[Param], given: dict, method: str,
                 reserved: dict[str, str] | None = None) -> dict:
    """``given`` (``--param`` values or Python values) coerced and checked against ``declared``:
    an unknown key names the method's parameters; a key set by a main control (``reserved``: key →
    what sets it) names that control. Returns the coerced dict."""
    by_name = {p.name: p for p in declared}
    out = {}
    for key, value in dict(given or {}).items():
        if reserved and key in reserved:
            raise ConfigError(f"{method}'s {key!r} is a main setting, set by {reserved[key]}, not as a method parameter",
                              param="prototype_params")
        p = by_name.get(key)
        if p is None:
            known = ", ".join(sorted(by_name)) or "none"
            raise ConfigError(f"{method} has no parameter {key!r}; its parameters: {known}",
                              param="prototype_params")
        out[key] = p.coerce(value, method)
    return out


def no_progress(*_args, **_kwargs) -> None:
    """The progress callback that reports nothing (every ``progress=`` parameter's default)."""
    return None
