"""A site's own privacy policy in a deployment: the coordinator asks, the site decides.

A SuperNode reads its policy from its own configuration (``--node-config "policy-path='…'"``, a TOML
file on the site's disk), never from a message. Every request of a run (the run's public JSON the
ServerApp sends) is checked against it before the site draws anything:

========================  ===================================================================
TOML key                  rule (the name a refusal gives)
========================  ===================================================================
``methods``               the methods the site accepts (list of names; default: none — must be given)
``max_epsilon``           the most ε of one run (per entity; required)
``max_delta``             the most δ of one run (default 1e-5)
``max_coalition_epsilon`` the most ε of one run against the server colluding with every other site —
                          what this site's own noise shares alone guarantee under secure aggregation
                          (default: no limit); checked on the run as planned when the site decides
                          (before any charge) and again on each share before it leaves the site;
                          every release's log row states it
``budget_epsilon``        the site's total ε over every run (required); ``budget_delta`` its δ
                          (default 1e-4) — kept in the site's own odometer, which composes runs
                          at δ/2 of it (so ``budget_delta`` ≥ 2 × each run's δ)
                          (:class:`~dpfed_core.privacy.odometer.BudgetOdometer`) in ``store``
``store``                 the site's SQLite store (odometer and release log; required; a relative
                          path is relative to the policy file; ``{site}`` in it is the site's name)
``value_bounds``          ``[low, high]``: every public bound the run uses (the shard's value bound,
                          ``row_norm``, ``value_min``, ``r_min``, ``r_max``) must lie within it —
                          those it names and the method's defaults it leaves them to (dp-gaussian's
                          ``row_norm`` Λ∞·√min(m, 64) from the value bound and the catalogue's size)
                          (default: any)
``allow_simulation``      reproducible noise from the coordinator's seed (default false: the
                          coordinator could subtract the noise); an accepted simulation run is
                          charged as a non-private release (ε = ∞: the site's guarantee is void)
``allow_non_private``     methods that release exact statistics (ε = ∞; default false)
``max_dropouts``          the most dropouts a secure sum may tolerate (default 0): the run's
                          ``max_dropouts`` and SecAgg+'s share count minus its threshold
``site``                  the entity this policy is written for (default: any): a node whose shard
                          holds another entity refuses every run under it (a policy file copied to
                          the wrong site)
========================  ===================================================================

The decision is one of :func:`check` (pure: policy × request) and :func:`accept` (the check, then
the run's charge in the site's odometer — refused there when the budget would pass — and a row in
the site's release log). The site logs every release it makes (:class:`SiteLog`: run, method,
stage, ε, δ, ρ, shapes, bytes, the coordinator's identity) in the same store, which
``python -m dpfed_core site …`` prints with the remaining budget without the coordinator. Each stage
a share draws is marked in the store before the draw (:func:`claim_draw`), so the site itself can
give back the charge of a run it drew nothing in (:func:`withdraw_by_site`, ``site withdraw``) when
its coordinator never asks for a share nor withdraws the run.

Nothing here imports Flower: the ClientApp only carries the messages (``deployment/client_app.py``).
"""
from __future__ import annotations

import contextlib
import json
import math
import os
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from dpfed_core.errors import ConfigError, DpfedError
from dpfed_core.privacy.statement import epsilon_that_holds

#: The rules a refusal can name (one per policy key that binds a request).
RULES = ("methods", "max_epsilon", "max_delta", "max_coalition_epsilon", "budget_epsilon", "value_bounds",
         "allow_simulation",
         "allow_non_private", "max_dropouts", "one_request_per_run", "accepted_request", "policy_file",
         "item_catalogue", "site", "run_parameters")

#: Public bound parameters a run may name (checked against ``value_bounds``).
BOUND_PARAMS = ("row_norm", "value_min", "r_min", "r_max")

_KEYS = {"methods": list, "max_epsilon": (int, float), "max_delta": (int, float), "budget_epsilon": (int, float),
         "max_coalition_epsilon": (int, float),
         "budget_delta": (int, float), "store": str, "value_bounds": list, "allow_simulation": bool,
         "allow_non_private": bool, "max_dropouts": int, "site": str}
_REQUIRED = ("methods", "max_epsilon", "budget_epsilon", "store")
#: An example value of each numeric key, for the message refusing a non-positive one.
_POSITIVE_EXAMPLE = {"max_epsilon": "1", "budget_epsilon": "5", "max_coalition_epsilon": "10", "max_delta": "1e-5",
                     "budget_delta": "1e-4"}
#: What each key holds, as a type error says it (TOML spelling).
_TYPE_WORDS = {k: {list: "a list", str: "a quoted string", bool: "true or false", int: "a whole number"}.get(
    t, "a number (unquoted, e.g. 1.0)") for k, t in _KEYS.items()}
_TYPE_WORDS.update(methods='a list of method names, e.g. ["dp-cooccurrence"]',
                   value_bounds="a list [low, high] of numbers", store='a quoted path, e.g. "stores/{site}.sqlite3"')

#: Names a site's policy messages use as written in its policy file or its request — its keys, its
#: rules and the public bounds it checks — which a front end must never rewrite into its own flags
#: (the CLI's --max-dropouts is the run's, not the key an operator writes in the file).
POLICY_NAMES = frozenset({*_KEYS, *RULES, *BOUND_PARAMS, "value_max"})


def policy_names_kept(names: Mapping[str, str] | None) -> dict[str, str] | None:
    """``names`` (a front end's parameter → flag or control map) without the policy's own names."""
    return None if names is None else {k: v for k, v in names.items() if k not in POLICY_NAMES}


#: How a budget refusal of the site's odometer names its fixes (the site's policy keys).
SITE_CONTROLS = {"cap": "budget_epsilon / budget_delta in the site policy", "epsilon": "a smaller ε per run",
                 "allow_non_private": "allow_non_private = true in the site policy",
                 "simulation": "allow_simulation = true in the site policy", "confirm_raise": "the site policy"}


class PolicyError(ConfigError):
    """The policy file itself is wrong (missing, not TOML, a bad key or value)."""

    def render(self, names: Mapping[str, str] | None = None) -> str:
        return super().render(policy_names_kept(names))


class PolicyWouldRefuse(PolicyError):
    """Before anything starts: the policy every local site is given would refuse the run (its rule and
    key are written as in the policy file, the run's own flags as flags)."""


class PolicyRefused(DpfedError):
    """The site refuses a request; ``rule`` names the policy key that refused it, ``reason`` says why.
    The message is what the coordinator is told; ``detail`` is what only the site's own log holds (its
    balance, which stored account its people were recognised as: facts of its data and of its other
    runs)."""

    def __init__(self, rule: str, message: str, detail: str = "", limit: str = "") -> None:
        self.rule = rule
        self.reason = message
        self.detail = detail
        #: the policy's own value the request broke (" = 0.5", the methods it lists): the site's log and its
        #: operator's pre-check state it; the coordinator is told the rule, not the site's settings
        self.limit = limit
        super().__init__(f"refused by site policy rule {rule!r}: {message}")

    def render(self, names: Mapping[str, str] | None = None) -> str:
        return super().render(policy_names_kept(names))

    def for_site(self) -> str:
        """The refusal with the policy's value and its detail, for the site's own log."""
        return f"{self}{self.limit}" + (f" — {self.detail}" if self.detail else "")


@dataclass(frozen=True)
class SitePolicy:
    """A site's policy, as :func:`load_policy` reads it (see the module doc for each key)."""

    path: Path
    methods: tuple[str, ...]
    max_epsilon: float
    budget_epsilon: float
    store: Path
    max_delta: float = 1e-5
    budget_delta: float = 1e-4
    value_bounds: tuple[float, float] | None = None
    allow_simulation: bool = False
    allow_non_private: bool = False
    max_dropouts: int = 0
    site: str = ""
    max_coalition_epsilon: float = math.inf

    def store_for(self, entity: str) -> Path:
        """The site's store file: ``store`` with ``{site}`` replaced by the entity's name (one policy
        file for several local sites still gives each its own store)."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in str(entity))
        return Path(str(self.store).replace("{site}", safe))

    def check_store_folder(self, entity: str) -> Path:
        """The entity's store file (:meth:`store_for`), its folder checked to exist and the file not to be a
        folder. A site's budget is the history in its store: a store key naming a folder nobody made is
        taken for a typo, never the start of a fresh, empty budget beside the real one. Raises
        :class:`PolicyError` naming the folder."""
        path = self.store_for(entity)
        if not path.parent.is_dir():
            state = "is a file, not a folder" if path.parent.exists() else "does not exist"
            raise PolicyError(f"the store folder {path.parent} {state} (the store key of the site policy "
                              f"{self.path} names it); the site's budget lives in its store, so create the folder "
                              "(once, for a new site) or fix the store key")
        if path.is_dir():
            # a store key naming the folder, not a file in it: every node would refuse every run
            raise PolicyError(f"the store {path} is a folder, not a file (the store key of the site policy {self.path} "
                              "names it); name the store file in it, e.g. store = \"stores/{site}.sqlite3\"")
        return path

    def to_dict(self) -> dict:
        return {"path": str(self.path), "methods": list(self.methods), "max_epsilon": self.max_epsilon,
                "max_delta": self.max_delta, "budget_epsilon": self.budget_epsilon,
                "budget_delta": self.budget_delta, "store": str(self.store),
                "value_bounds": list(self.value_bounds) if self.value_bounds else None,
                "allow_simulation": self.allow_simulation, "allow_non_private": self.allow_non_private,
                "max_dropouts": self.max_dropouts, "max_coalition_epsilon": self.max_coalition_epsilon}


#: Where a SuperNode's policy file is named (the fix an unreadable file's error names by default).
NODE_POLICY_CONTROL = "the SuperNode's --node-config \"policy-path='…'\""


def load_policy(path: str | os.PathLike, control: str = NODE_POLICY_CONTROL) -> SitePolicy:
    """Read and check a site policy file; a :class:`PolicyError` names the file and the key.
    ``control``: what names the file (an unreadable file's error says to fix it there). A name in
    ``methods`` need not be registered where the file is read (a plug-in's method is registered only
    where its module is loaded); a run refused under ``methods`` names a listed name close to its own."""
    p = Path(path)
    try:
        # utf-8-sig: a byte-order mark (as some Windows editors save UTF-8) is no TOML, and invisible in the file
        raw = tomllib.loads(p.read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise PolicyError(f"cannot read the site policy {p} ({exc.strerror}); fix {control}") from None
    except UnicodeDecodeError as exc:
        # TOML is UTF-8 only: a file saved in another encoding (or a binary file named by mistake)
        raise PolicyError(f"the site policy {p} is not UTF-8 text (byte {exc.object[exc.start]:#04x} at position "
                          f"{exc.start}); save it as UTF-8, or fix {control} if it names another file") from None
    except tomllib.TOMLDecodeError as exc:
        raise PolicyError(f"the site policy {p} is not valid TOML ({exc})") from None
    return _checked_policy(raw, p)


def _checked_policy(raw: dict, p: Path) -> SitePolicy:
    """The policy of the keys ``raw`` read from the file ``p`` (which names it in every error, and which
    a relative store path is relative to), every rule checked."""
    unknown = sorted(set(raw) - set(_KEYS))
    if unknown:
        import difflib

        # a misspelt key is a rule the site believes it set: point at the key meant
        meant = {k: difflib.get_close_matches(k, list(_KEYS), 1) for k in unknown}
        hints = "; ".join(f"{k!r} — a misspelling of {m[0]!r}?" for k, m in meant.items() if m)
        raise PolicyError(f"the site policy {p} has unknown keys {unknown}" + (f" ({hints})" if hints else "")
                          + f"; known: {sorted(_KEYS)}")
    missing = [k for k in _REQUIRED if k not in raw]
    if missing:
        raise PolicyError(f"the site policy {p} lacks {missing}; every policy states them")
    for key, kind in _KEYS.items():
        if key in raw and (not isinstance(raw[key], kind) or (kind is int and isinstance(raw[key], bool))
                           or (kind == (int, float) and isinstance(raw[key], bool))):
            raise PolicyError(f"the site policy {p}: {key} = {raw[key]!r} has the wrong type; {key} is "
                              f"{_TYPE_WORDS[key]}")
    num = {k: float(raw[k]) for k in ("max_epsilon", "max_delta", "budget_epsilon", "budget_delta",
                                      "max_coalition_epsilon") if k in raw}
    for k, v in num.items():
        if math.isnan(v) or v < 0 or (k.endswith("epsilon") and v == 0):
            raise PolicyError(f"the site policy {p}: {k} = {v} must be a positive number; set it in the policy "
                              f"(e.g. {k} = {_POSITIVE_EXAMPLE[k]})")
        if k.endswith("delta") and v >= 1e-2:
            raise PolicyError(f"the site policy {p}: {k} = {v} must be below 0.01 (a usual δ is 1e-5)")
    if math.isinf(num["budget_epsilon"]):
        raise PolicyError(f"the site policy {p}: budget_epsilon must be finite (a site's total budget)")
    bounds = raw.get("value_bounds")
    if bounds is not None:
        if len(bounds) != 2 or not all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds):
            # a quoted number is text in TOML: name the type, not the order, so the fix is the quotes
            raise PolicyError(f"the site policy {p}: value_bounds = {bounds!r} must be two numbers [low, high], "
                              "unquoted (e.g. value_bounds = [0, 5])")
        if not all(math.isfinite(b) for b in bounds):
            # NaN compares false with every value: "low ≤ high" would name the wrong fault
            raise PolicyError(f"the site policy {p}: value_bounds = {bounds!r} must be two finite numbers "
                              "[low, high] (e.g. value_bounds = [0, 5])")
        if not bounds[0] <= bounds[1]:
            raise PolicyError(f"the site policy {p}: value_bounds = {bounds!r} must be [low, high] with low ≤ high")
        bounds = (float(bounds[0]), float(bounds[1]))
    if not all(isinstance(m, str) for m in raw["methods"]):
        raise PolicyError(f"the site policy {p}: methods must be a list of method names")
    if raw.get("max_dropouts", 0) < 0:
        raise PolicyError(f"the site policy {p}: max_dropouts must be ≥ 0")
    if not raw["methods"]:
        raise PolicyError(f"the site policy {p}: methods = [] accepts no method, so this site would refuse every "
                          "run; list the methods it accepts (e.g. [\"dp-cooccurrence\"])")
    max_delta, budget_delta = num.get("max_delta", 1e-5), num.get("budget_delta", 1e-4)
    if budget_delta < 2 * max_delta:
        # the odometer composes runs at half the budget's δ: a run at max_delta would never fit
        raise PolicyError(f"the site policy {p}: budget_delta = {budget_delta:g} is below twice max_delta = "
                          f"{max_delta:g}; runs are composed at half the budget's δ, so raise budget_delta or lower "
                          "max_delta")
    if not str(raw["store"]).strip():
        raise PolicyError(f"the site policy {p}: store is empty; name the site's store file "
                          "(e.g. \"/var/lib/dpfed/{site}.sqlite3\")")
    store = Path(raw["store"]).expanduser()
    if not store.is_absolute():
        store = (p.parent / store).resolve()
    return SitePolicy(path=p.resolve(), methods=tuple(raw["methods"]), max_epsilon=num["max_epsilon"],
                      budget_epsilon=num["budget_epsilon"], store=store, max_delta=max_delta,
                      budget_delta=budget_delta, value_bounds=bounds,
                      allow_simulation=bool(raw.get("allow_simulation", False)),
                      allow_non_private=bool(raw.get("allow_non_private", False)),
                      max_dropouts=int(raw.get("max_dropouts", 0)), site=str(raw.get("site", "")),
                      max_coalition_epsilon=num.get("max_coalition_epsilon", math.inf))


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return "inf" if math.isinf(v) else repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    return json.dumps(v) if isinstance(v, str) else str(v)


def write_policy(path: str | os.PathLike, **keys) -> Path:
    """Write a policy file with ``keys`` (checked by reading it back). Returns its path."""
    unknown = sorted(set(keys) - set(_KEYS))
    if unknown:
        raise PolicyError(f"unknown site policy keys {unknown}; known: {sorted(_KEYS)}")
    from dpfed_core.data.atomic import atomic_write

    p = Path(path)
    body = "".join(f"{k} = {_toml_value(v)}\n" for k, v in keys.items() if v is not None)
    # checked before anything is written: a policy its own check refuses is never left on disk
    policy = _checked_policy(tomllib.loads(body), p)
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(p, "# dpfed site policy (docs/DEPLOYMENT.md, \"Each site decides\")\n" + body,
                 flag="the site policy path")
    # the tool that writes a policy makes its store folder (the operator's act); a node never does
    folder = policy.store.parent
    if "{site}" not in str(folder):
        with contextlib.suppress(OSError):  # a folder it cannot make is refused by every node, naming it
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return p


def policy_matching(config, store: str | os.PathLike, budget_epsilon: float | None = None) -> dict:
    """The keys of a policy that accepts exactly ``config``'s request (its method, ε, δ, dropouts and
    non-private use) and never simulation: what ``deploy-local`` writes when it is given none. The
    budget defaults to the run's ε (one such run)."""
    eps = float(config.epsilon)
    private = math.isfinite(eps)
    return {"methods": [config.method], "max_epsilon": eps if private else 1.0,
            "max_delta": max(float(config.delta), 1e-12) if private and math.isfinite(config.delta) else 1e-5,
            "budget_epsilon": budget_epsilon if budget_epsilon is not None else (eps if private else 1.0),
            # the odometer composes at δ/2 of the cap: room for this run's δ
            "budget_delta": min(2 * max(float(config.delta), 1e-12), 9e-3) if private and math.isfinite(config.delta)
            else 1e-4,
            "store": str(store), "allow_simulation": False, "allow_non_private": not private,
            "max_dropouts": int(config.max_dropouts)}


# ================================================================================ requests
@dataclass(frozen=True)
class Request:
    """What the coordinator asks of a site in one run (public: the run's JSON and the node count)."""

    method: str
    epsilon: float
    delta: float
    simulation: bool
    max_dropouts: int
    n_entities: int
    non_private: bool
    bounds: dict = field(default_factory=dict)
    #: the bounds in ``bounds`` the run does not name: the method's own defaults, derived from public inputs
    derived: tuple[str, ...] = ()
    #: how the run fixes its item catalogue (the run JSON's public field: "declared" or "secure")
    item_catalogue: str = "declared"
    #: ε of the run as planned against the server colluding with every other site
    #: (:func:`planned_coalition_epsilon`); None when it is known only at the method's first share
    coalition_epsilon: float | None = None
    #: what the method says of the run's parameters when the node cannot build it from them (a value out
    #: of its range, an unknown name, a wrong type): the parameter and what is wrong; empty when it builds
    parameter_error: str = ""

    def to_dict(self) -> dict:
        return {"method": self.method, "epsilon": self.epsilon, "delta": self.delta, "simulation": self.simulation,
                "max_dropouts": self.max_dropouts, "n_entities": self.n_entities, "non_private": self.non_private,
                "bounds": dict(self.bounds), "derived": list(self.derived), "item_catalogue": self.item_catalogue,
                "coalition_epsilon": self.coalition_epsilon, "parameter_error": self.parameter_error}


def request_of(config, n_entities: int, value_max: float, item_catalogue: str = "declared",
               n_items: int | None = None) -> Request:
    """The request a run's configuration makes of a site holding data of public bound ``value_max``
    (``item_catalogue``: the run JSON's catalogue field). Its bounds are those the method will use: the
    ones the run names, and the method's defaults derived from public inputs where it names none
    (dp-gaussian's row bound Λ∞·√min(m, 64) from the value bound and ``n_items``, the size m of the
    catalogue its release reads; None: not known, the default taken at its largest). The method is built
    as the node's handlers build it (:func:`~dpfed_core.deployment.hooks.node_method`): a run whose
    parameters it cannot take is a request with its ``parameter_error``, which :func:`check` refuses."""
    from dpfed_core.deployment.hooks import public_bounds
    from dpfed_core.federation.protocol import method_class

    try:
        cls = method_class(config.method)
    except ConfigError:  # a method this node does not have: refused by check, as invalid parameters are
        cls = None
    summable = config.method in _summable_names()
    private = bool(getattr(cls, "private", False)) or summable
    eps = float(config.epsilon)
    non_private = (not private) or not math.isfinite(eps)
    bounds = {"value_max": float(value_max)}
    for k in BOUND_PARAMS:
        v = config.params.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            bounds[k] = float(v)
    if cls is None:
        # named without the list of the node's methods the registry's error gives: its plug-ins are the
        # site's own configuration
        own, problem = {}, f"this site's node has no federated method {config.method!r}"
    else:
        try:
            own = public_bounds(config, float(value_max), n_items, secure_catalogue=item_catalogue == "secure",
                                n_entities=int(n_entities))
            problem = ""
        except ConfigError as exc:
            # a request the method cannot be built from is the coordinator's fault, not the node's: the site
            # refuses it (check) — logged, nothing charged, like any refusal — instead of failing
            own, problem = {}, " ".join(str(exc).split())
    # a bound the run leaves to the method still sizes its noise: a site's value_bounds binds it too
    derived = {k: v for k, v in own.items() if k in BOUND_PARAMS and k not in bounds}
    bounds.update(derived)
    return Request(config.method, eps, float(config.delta) if not non_private else 0.0, bool(config.simulation),
                   int(config.max_dropouts), int(n_entities), non_private, bounds, tuple(derived),
                   str(item_catalogue), None if non_private else planned_coalition_epsilon(config, n_entities),
                   parameter_error=problem)


def planned_coalition_epsilon(config, n_entities: int) -> float | None:
    """ε of a private run, as planned, of one site's people against the server colluding with every other
    site — a function of the run's public configuration only, so the site decides on it before any charge.

    A prototype method's release reaches the server whole: its ε. A summable method that plans its
    shares' ρ (``zcdp_budget``: ρ(ε, δ) split over its stages, a federation-wide catalogue's share
    included): only the site's own noise shares σ/√(H − d) protect it under secure aggregation, so ρ·(H − d)
    converted at the run's δ (ρ without secure aggregation) — what every share then states to 10⁻⁶
    (the release log's "the run as planned"). Any other summable method: None (its share states it)."""
    from dpfed_core.evaluation.budget import gaussian_method
    from dpfed_core.privacy.noise import zcdp_epsilon, zcdp_rho_for_epsilon

    eps, dlt = float(config.epsilon), float(config.delta)
    if config.method not in _summable_names():
        return eps
    if not gaussian_method(config.method):
        return None
    spread = int(n_entities) - int(config.max_dropouts) if config.aggregation == "secure" else 1
    return zcdp_epsilon(zcdp_rho_for_epsilon(eps, dlt) * max(spread, 1), dlt)


def _summable_names() -> set[str]:
    from dpfed_core.federation.summable import SUMMABLE_METHODS

    return set(SUMMABLE_METHODS)


def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:g}"


def check(policy: SitePolicy, req: Request) -> None:
    """Raise :class:`PolicyRefused` naming the first rule ``req`` breaks (budget aside: :func:`accept`)."""
    if req.parameter_error:
        # first: a request whose method cannot be built has no bounds or noise to weigh against the rest
        raise PolicyRefused("run_parameters", f"the run's parameters cannot be used: {req.parameter_error}")
    if req.method not in policy.methods:
        import difflib

        # a misspelt name in the policy accepts nothing under it: the refusal points at it
        near = difflib.get_close_matches(req.method, list(policy.methods), 1)
        raise PolicyRefused("methods", f"method {req.method!r} is not among the site's accepted methods",
                            limit=f" {list(policy.methods)}" + (f" (the policy lists {near[0]!r}: a misspelling of "
                                                               f"{req.method!r}?)" if near else ""))
    if req.simulation and not policy.allow_simulation:
        raise PolicyRefused("allow_simulation", "the coordinator asked for simulation mode (noise reproducible from "
                                                "its seed); this site does not allow it")
    if req.non_private:
        if not policy.allow_non_private:
            raise PolicyRefused("allow_non_private", f"method {req.method!r} at ε = {_fmt(req.epsilon)} releases "
                                                     "exact statistics; this site does not allow non-private methods")
    else:
        if req.epsilon > policy.max_epsilon * (1 + 1e-12):
            raise PolicyRefused("max_epsilon", f"ε = {_fmt(req.epsilon)} per run is above the site's max_epsilon",
                                limit=f" = {_fmt(policy.max_epsilon)}")
        if req.delta > policy.max_delta * (1 + 1e-12):
            raise PolicyRefused("max_delta", f"δ = {req.delta:g} per run is above the site's max_delta",
                                limit=f" = {policy.max_delta:g}")
    if (req.coalition_epsilon is not None
            and req.coalition_epsilon > policy.max_coalition_epsilon * (1 + COALITION_PLAN_SLACK)):
        raise PolicyRefused("max_coalition_epsilon", f"the run as planned would give this site's people ε = "
                                                     f"{epsilon_that_holds(req.coalition_epsilon)} against the "
                                                     "server colluding "
                                                     "with every other site, above the site's "
                                                     "max_coalition_epsilon",
                            limit=f" = {_fmt(policy.max_coalition_epsilon)}")
    if req.max_dropouts > policy.max_dropouts:
        raise PolicyRefused("max_dropouts", f"the run tolerates {req.max_dropouts} dropout(s), more than the site's "
                                            "max_dropouts", limit=f" = {policy.max_dropouts}")
    if policy.value_bounds is not None:
        lo, hi = policy.value_bounds
        out = {k: v for k, v in req.bounds.items() if not lo <= v <= hi}
        if out:
            derived = [k for k in out if k in req.derived]
            # the run does not name these: the refusal says where they come from and how the run sets them
            said = (f" ({', '.join(derived)}: {req.method}'s default for this run, which does not name "
                    f"{'them' if len(derived) > 1 else 'it'}; give {' and '.join(derived)} within the bounds)"
                    if derived else "")
            raise PolicyRefused("value_bounds", f"the public bounds {out} are outside the site's value_bounds{said}",
                                limit=f" [{lo:g}, {hi:g}]")


#: The decision's planned coalition ε agrees with what each share states to 10⁻⁶ relative (a one-stage
#: share's figure is OpenDP's map bisected to that precision): the decision refuses only beyond this
#: slack, and a share within it is checked exactly by :func:`check_coalition`.
COALITION_PLAN_SLACK = 1e-5


def check_coalition(policy: SitePolicy, coalition_epsilon: float, stage: str) -> None:
    """The run's ε against the server colluding with every other site (its own noise alone protects
    this site then), as planned when ``stage``'s share is about to leave (its shares so far and those
    still to come), checked before it leaves: :class:`PolicyRefused` above ``max_coalition_epsilon``."""
    if coalition_epsilon > policy.max_coalition_epsilon * (1 + 1e-12):
        raise PolicyRefused("max_coalition_epsilon", f"with its {stage} share, the run as planned would give this "
                                                     f"site's people ε = "
                                                     f"{epsilon_that_holds(coalition_epsilon)} against the server "
                                                     "colluding with "
                                                     "every other site, above the site's max_coalition_epsilon; "
                                                     "nothing was sent",
                            limit=f" (max_coalition_epsilon = {_fmt(policy.max_coalition_epsilon)})")


def check_secagg(policy: SitePolicy, n_accepted: int, sample_num: int, share_num: int, threshold: int,
                 max_dropouts: int = 0) -> None:
    """SecAgg+'s setup parameters as the coordinator sent them: the sum must be among the accepted
    number of sites, and survive no more dropouts than the site accepts (a share count above the
    threshold by d lets d key shares go missing; fewer colluders then rebuild a live node's mask).
    ``max_dropouts``: the accepted run's d — its shares carry σ/√(H − d), so a sum among fewer than
    H − d, or one that survives more lost nodes, carries less than σ whatever the policy would allow."""
    allowed = min(int(policy.max_dropouts), int(max_dropouts))
    if not n_accepted - allowed <= sample_num <= n_accepted:
        # fewer than accepted only after dropouts both the run and the site accept (a later stage
        # without the dropped)
        raise PolicyRefused("accepted_request", f"the secure sum has {sample_num} participants; the site accepted "
                                                f"a run of {n_accepted} with at most {allowed} dropout(s)")
    from dpfed_core.deployment.wire import secagg_shares

    rule = secagg_shares(sample_num, max_dropouts)
    if share_num < rule:
        # smaller neighbourhoods than the public rule: fewer colluding neighbours rebuild a mask
        raise PolicyRefused("max_dropouts", f"SecAgg+ with {share_num} key shares per node among {sample_num}; the "
                                            f"public rule (wire.secagg_shares) gives {rule}")
    if share_num - threshold > allowed or threshold < 2:
        raise PolicyRefused("max_dropouts", f"SecAgg+ with {share_num} shares and threshold {threshold} tolerates "
                                            f"{share_num - threshold} dropout(s); the run's shares are sized for "
                                            f"{int(max_dropouts)} and the site accepts at most "
                                            f"max_dropouts = {policy.max_dropouts}")


def check_unmask(policy: SitePolicy, own: int, active: Sequence[int], dropped: Sequence[int],
                 max_dropouts: int = 0) -> None:
    """SecAgg+'s last step as the coordinator asked for it. For each neighbour it names, a node reveals
    one of two key shares: a live neighbour's self-mask seed share, a dropped one's pairwise-mask key
    share. Both shares of one node would let the server strip that node's masks and read its share
    alone, so a node named both live and dropped (or twice), or this node named dropped while it
    answers, is refused and nothing is revealed. More dropped neighbours than the run's and the site's
    tolerated dropouts (``max_dropouts``, as at the setup) is refused too: the sum would hold fewer
    shares than the run's σ was split over. Flower's SecAgg+ has no consistency round: a server that
    shows different sites different lists is not caught here (docs/DEPLOYMENT.md)."""
    live, gone = [int(n) for n in active], [int(n) for n in dropped]
    both = sorted(set(live) & set(gone))
    if both or len(set(live)) != len(live) or len(set(gone)) != len(gone) or int(own) in gone:
        raise PolicyRefused("accepted_request", "the secure sum's unmasking names "
                            + (f"{len(both)} node(s) both live and dropped" if both else
                               "this node as dropped while it answers" if int(own) in gone else "a node twice")
                            + ": revealing both key shares of a node would let the server read its share alone; "
                              "nothing was revealed")
    allowed = min(int(policy.max_dropouts), int(max_dropouts))
    if len(gone) > allowed:
        raise PolicyRefused("max_dropouts", f"the secure sum's unmasking reports {len(gone)} dropped neighbour(s); "
                                            f"the run's shares are sized for {int(max_dropouts)} and the site "
                                            f"accepts at most max_dropouts = {policy.max_dropouts}: the sum would "
                                            "carry less noise than the run's σ; nothing was revealed")


# ================================================================================ the site's store
_SITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS site_releases (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    created     TEXT NOT NULL,
    run         TEXT NOT NULL,                -- the coordinator's run id
    coordinator TEXT NOT NULL,                -- who asked (from the site's own configuration)
    entity      TEXT NOT NULL,
    method      TEXT NOT NULL,
    stage       TEXT NOT NULL,                -- decision | round 1 | a stage of a secure sum
    decision    TEXT NOT NULL,                -- accepted | refused | released
    rule        TEXT NOT NULL DEFAULT '',     -- the policy rule of a refusal
    epsilon     REAL NOT NULL,
    delta       REAL NOT NULL,
    rho         REAL,
    simulation  INTEGER NOT NULL,
    shapes      TEXT NOT NULL DEFAULT '[]',   -- JSON list of the released arrays' shapes
    bytes       INTEGER NOT NULL DEFAULT 0,   -- bytes of the reply that carried the release
    note        TEXT NOT NULL DEFAULT ''
);
"""

# Each stage a share of a run draws, written before the draw in the transaction that checks the site
# has not withdrawn from that run: a withdrawal by the site and a draw can never both happen.
_DRAWS_SCHEMA = """
CREATE TABLE IF NOT EXISTS site_draws (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    created     TEXT NOT NULL,
    run         TEXT NOT NULL,
    coordinator TEXT NOT NULL,
    entity      TEXT NOT NULL,
    stage       TEXT NOT NULL
);
"""


class SiteLog:
    """The site's own log of decisions and releases, a table beside its odometer in its store."""

    def __init__(self, store: str | os.PathLike, fix: str = "fix the store key of the site's policy", *,
                 create: bool = True) -> None:
        """``create=False``: a reader (``site releases`` / ``budget``), which leaves the store as it is — a
        store no site decided in (a coordinator's, named by mistake) is never given the site's tables; the
        store is still opened, so a damaged file or a folder is one error naming ``fix``."""
        from dpfed_core.privacy.store import Store

        self.store = Store(store, fix=fix)  # fix: what the person who named the store changes
        if not create:
            with self.store.read() as con:
                con.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
            return
        with self.store.write() as con:
            con.execute(_SITE_SCHEMA)
            con.execute(_DRAWS_SCHEMA)

    def has_log(self) -> bool:
        """Whether the store holds a site's release log (a site decided a run in it)."""
        with self.store.read() as con:
            return con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'site_releases'"
                               ).fetchone() is not None

    def add(self, *, run: str, coordinator: str, entity: str, method: str, stage: str, decision: str,
            epsilon: float, delta: float, rho: float | None = None, simulation: bool = False, shapes=(),
            n_bytes: int = 0, rule: str = "", note: str = "") -> None:
        with self.store.write() as con:
            _add_row(con, run=run, coordinator=coordinator, entity=entity, method=method, stage=stage,
                     decision=decision, epsilon=epsilon, delta=delta, rho=rho, simulation=simulation, shapes=shapes,
                     n_bytes=n_bytes, rule=rule, note=note)

    def rows(self) -> list[dict]:
        if not self.has_log():
            return []
        with self.store.read() as con:
            return [dict(r) for r in con.execute("SELECT * FROM site_releases ORDER BY id")]


def _add_row(con, *, run: str, coordinator: str, entity: str, method: str, stage: str, decision: str,
             epsilon: float, delta: float, rho: float | None = None, simulation: bool = False, shapes=(),
             n_bytes: int = 0, rule: str = "", note: str = "") -> None:
    from dpfed_core.privacy.store import now_iso

    con.execute("INSERT INTO site_releases (created, run, coordinator, entity, method, stage, decision, rule, "
                "epsilon, delta, rho, simulation, shapes, bytes, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
                "?, ?, ?, ?, ?)",
                (now_iso(), str(run), str(coordinator), str(entity), str(method), str(stage), decision, rule,
                 float(epsilon), float(delta), None if rho is None else float(rho), int(bool(simulation)),
                 json.dumps([list(map(int, s)) for s in shapes]), int(n_bytes), note))


def _drawn(con, run: str, coordinator: str, entity: str) -> list[str]:
    """The stages this site marked drawn (before each draw) in one run; for a store written before
    stages were marked, the releases its log holds."""
    key = (str(run), str(coordinator), str(entity))
    marked = [r[0] for r in con.execute("SELECT stage FROM site_draws WHERE run = ? AND coordinator = ? AND "
                                        "entity = ? ORDER BY id", key)]
    logged = [r[0] for r in con.execute("SELECT stage FROM site_releases WHERE run = ? AND coordinator = ? AND "
                                        "entity = ? AND decision = 'released' ORDER BY id", key)]
    return list(dict.fromkeys(marked or logged))


def _withdrawn(con, run: str, coordinator: str, entity: str) -> bool:
    return con.execute("SELECT 1 FROM site_releases WHERE run = ? AND coordinator = ? AND entity = ? AND "
                       "decision = 'withdrawn' LIMIT 1", (str(run), str(coordinator), str(entity))).fetchone() is not None


_WITHDRAWAL_NOTES = {
    "operator": ("the site's operator asked to withdraw, but this site drew its noise in the run (stage {drew}): the "
                 "charge stays",
                 "withdrawn by the site's operator: this site drew nothing in the run; any later release in it "
                 "is refused"),
    "coordinator": ("the coordinator said the run ended, but this site drew its noise in it (stage {drew}): the charge "
                    "stays",
                    "the run ended before any share was asked for and this site drew nothing in it: its charge "
                    "was given back; any later release in this run is refused"),
}


def _decide_withdrawal(con, *, run: str, coordinator: str, entity: str, by: str) -> tuple[str, list[str]]:
    """One site's answer to a withdrawal asked ``by`` its operator or its coordinator, decided and logged
    in the caller's write transaction (the same one :func:`claim_draw` marks a draw in, so no draw slips
    between the check and the answer): ``already`` (withdrawn before; nothing logged), ``kept`` (its store
    marks a stage drawn: the charge stays) or ``withdrawn`` (logged before the charge is given back, so
    from that row on no share of the run is drawn). Returns the decision and the stages drawn."""
    drew = _drawn(con, run, coordinator, entity)
    if _withdrawn(con, run, coordinator, entity):
        return "already", drew
    kept, given = _WITHDRAWAL_NOTES[by]
    base = dict(run=run, coordinator=coordinator, entity=entity, method="", stage="withdrawal", epsilon=0.0,
                delta=0.0)
    if drew:
        _add_row(con, **base, decision="kept", note=kept.format(drew=", ".join(drew)))
        return "kept", drew
    _add_row(con, **base, decision="withdrawn", note=given)
    return "withdrawn", []


def claim_draw(policy: SitePolicy, entity: str, stages: list[str], *, run: str, coordinator: str,
               store: str | os.PathLike | None = None) -> None:
    """Mark in the site's store the stages a share of ``run`` is about to draw, before anything is drawn,
    in the one transaction that checks the site has not withdrawn from the run (:func:`withdraw` or
    :func:`withdraw_by_site`): a run the site withdrew from is never drawn on, and a run it drew on is
    never given back. Raises :class:`PolicyRefused` (``accepted_request``) when withdrawn. ``store``: the
    store the run was charged in (:func:`accept`'s record); the policy's store for ``entity`` without it."""
    from dpfed_core.privacy.store import now_iso

    log = SiteLog(store if store is not None else policy.store_for(entity))
    with log.store.write() as con:
        if _withdrawn(con, run, coordinator, entity):
            raise PolicyRefused("accepted_request", "this site withdrew from this run and gave its charge back; "
                                                    "nothing was drawn")
        con.executemany("INSERT INTO site_draws (created, run, coordinator, entity, stage) VALUES (?, ?, ?, ?, ?)",
                        [(now_iso(), str(run), str(coordinator), str(entity), str(s)) for s in stages])


def unclaim_draw(policy: SitePolicy, entity: str, stages: list[str], *, run: str, coordinator: str,
                 store: str | os.PathLike | None = None) -> None:
    """Take back the marks of stages whose share the site refused to send after drawing it (its own
    ``max_coalition_epsilon``, a pure function of public parameters): nothing that depends on its
    data left it, so the run's charge may be given back (:func:`withdraw_by_site`). ``store``: as
    :func:`claim_draw`'s."""
    log = SiteLog(store if store is not None else policy.store_for(entity))
    with log.store.write() as con:
        con.executemany("DELETE FROM site_draws WHERE run = ? AND coordinator = ? AND entity = ? AND stage = ?",
                        [(str(run), str(coordinator), str(entity), str(s)) for s in stages])


def withdraw_by_site(store: str | os.PathLike, run: str, entity: str | None = None) -> list[dict]:
    """The site's own withdrawal from a run it accepted, without the coordinator (``python -m dpfed_core
    site withdraw``): for a run whose coordinator never asked for a share nor sent ``query.withdraw``,
    the site gives its charge back when its own store says it drew nothing in the run (every stage
    is marked there before its draw), keeps it otherwise, and refuses every later release of the run.
    ``entity``: only that site's acceptance (a store several sites share). Returns one outcome per
    acceptance: ``{"entity", "coordinator", "decision": withdrawn | kept | already, "stages"}``."""
    from dpfed_core.privacy.budget_records import Reservation
    from dpfed_core.privacy.odometer import BudgetOdometer

    # a store no site decided in accepted no run: told so below, without giving it the site's tables
    log = SiteLog(store) if SiteLog(store, create=False).has_log() else None
    sql = "SELECT DISTINCT entity, coordinator FROM site_releases WHERE run = ? AND decision = 'accepted'"
    args: tuple = (str(run),)
    if entity is not None:
        sql, args = sql + " AND entity = ?", (*args, str(entity))
    out: list[dict] = []
    if log is None:
        raise ConfigError(f"the store {store} holds no site's release log, so no accepted run {run!r}: it is no "
                          "deployment site's store; give --store the site's store file (its policy's store key "
                          "names it)")
    with log.store.write() as con:
        accepted = [(str(r[0]), str(r[1])) for r in con.execute(sql + " ORDER BY id", args)]
        if not accepted:
            who = "" if entity is None else f" for site {entity!r}"
            raise ConfigError(f"this site's store {log.store.path} holds no accepted run {run!r}{who}; "
                              "`site releases` lists the runs it accepted (give --run one of them)")
        for ent, coord in accepted:
            decision, drew = _decide_withdrawal(con, run=run, coordinator=coord, entity=ent, by="operator")
            out.append({"entity": ent, "coordinator": coord, "decision": decision, "stages": drew})
    odo = BudgetOdometer(log.store)
    for o in out:
        if o["decision"] == "kept":
            continue
        # also a withdrawal whose charge a failure left reserved: the row above already stops every draw.
        # This site's reservation only (its dataset, :func:`site_dataset`): sites sharing one store
        # accept a run under the same operation, and another's may have drawn
        operation = run_operation(run, o["coordinator"])
        with log.store.read() as con:
            rows = [dict(r) for r in con.execute(
                "SELECT r.id, r.dataset_key FROM releases r JOIN datasets d ON d.key = r.dataset_key WHERE "
                "r.operation = ? AND r.status = 'reserved' AND d.name = ? ORDER BY r.id",
                (operation, site_dataset_name(o["entity"])))]
        if rows:
            Reservation(odo, str(rows[0]["dataset_key"]), operation, [int(r["id"]) for r in rows], []).withdraw(
                0, f"withdrawn by the site's operator: run {run} drew nothing at this site")
            o["decision"] = "withdrawn"
    return out


def run_operation(run: str, coordinator: str) -> str:
    """The odometer operation a site's acceptance of a run is charged under; the site's own withdrawal
    finds the reservation by it."""
    return f"run {run} · {coordinator}"


def site_dataset_name(entity: str) -> str:
    """The name a site's data is registered under in its odometer (one per entity it serves)."""
    return f"site {entity}"


def site_dataset(shard, *, by_position: bool = False):
    """The site's data as the odometer sees it (its training and held-out entries, its one entity):
    the odometer's content fingerprint follows the people, whatever the coordinator calls the run.

    Items are known by their ids (the shard's, else its item names): by column position, every change
    of the federation's item list — a site left out, an item added anywhere — would move every column
    and make the same people a new account with a fresh budget. ``by_position``: the positional ids
    a site store written before shards carried their ids registered its accounts under."""
    import numpy as np

    from dpfed_core.data.dataset import FederatedDataset

    X = (shard.train + shard.test).tocsr()
    names = shard.item_names if shard.item_names is not None else np.array([f"item {j}" for j in range(X.shape[1])])
    ids = shard.item_ids if shard.item_ids is not None else shard.item_names
    return FederatedDataset.from_parts(X, np.repeat(np.array([shard.entity], dtype=object), X.shape[0]),
                                       item_ids=None if by_position or ids is None else np.asarray(ids, dtype=object),
                                       item_names=np.asarray(names, dtype=object), value_kind="counts",
                                       value_max=float(shard.value_max), name=site_dataset_name(shard.entity))


def accept(policy: SitePolicy, req: Request, shard, *, run: str, coordinator: str) -> dict:
    """Decide one request: :func:`check`, then the run's charge in the site's odometer (atomic; a
    budget refusal names ``budget_epsilon``), logged either way. Returns the acceptance record
    (operation and release ids of the charge); raises :class:`PolicyRefused` with nothing charged."""
    from dpfed_core.evaluation.budget import planned_rho
    from dpfed_core.privacy.odometer import BudgetOdometer, BudgetRefused, PlannedRelease, dataset_key
    from dpfed_core.privacy.store import StoreError

    try:
        log = SiteLog(policy.check_store_folder(shard.entity))
    except StoreError as exc:
        # a fault of the site's own file: its operator reads it in the node's log, the coordinator only
        # that the policy cannot be used (never the site's paths)
        raise PolicyError(f"the store of the site policy {policy.path} cannot be used ({exc})") from None
    base = dict(run=run, coordinator=coordinator, entity=shard.entity, method=req.method, stage="decision",
                epsilon=req.epsilon, delta=req.delta, simulation=req.simulation)
    try:
        if policy.site and policy.site != shard.entity:
            raise PolicyRefused("site", "this node's policy is written for another site than its shard's entity; its "
                                        "operator starts it with the site's own policy",
                                limit=f" (the policy's site is {policy.site!r})")
        check(policy, req)
        declared = getattr(shard, "n_declared", None)
        if req.item_catalogue != "declared" and declared is not None and declared < shard.train.shape[1]:
            # the site's export declares its catalogue and holds items outside it: a federation-wide
            # selection would hash every one of its columns, its own items too, into the catalogue share
            raise PolicyRefused("item_catalogue", f"the run selects its item catalogue ({req.item_catalogue!r}); this "
                                                  "site declares its catalogue, and its items outside it are its own")
        if (req.item_catalogue == "declared" and not req.non_private
                and getattr(shard, "item_source", None) not in (None, "declared")):
            # items read from the site's own data are no public list: a DP run that calls them declared
            # would shape every share by the site's own item count and read every one of its items
            raise PolicyRefused("item_catalogue", "the run calls this site's items a declared catalogue; they are "
                                                  "read from its own data (a DP run selects them federation-wide)")
        odo = BudgetOdometer(log.store)
        ds = site_dataset(shard)
        legacy = site_dataset(shard, by_position=True)
        if dataset_key(ds) != dataset_key(legacy) and odo.knows(legacy):
            # this very shard is charged in a store written before items were known by id: it stays on
            # that account (a new key would match none of its positional fingerprints: a fresh budget)
            ds = legacy
        key = odo.register(ds)
        cap_e, cap_d = odo.cap(key)
        if (cap_e, cap_d) != (policy.budget_epsilon, policy.budget_delta):
            # the policy file is the site's law: its budget is the odometer's cap (every change logged);
            # one lowered below what the site has spent leaves it out of budget — the run is refused
            # below by the rule, never with the balance sent to the coordinator in an error
            odo.set_cap(key, policy.budget_epsilon, policy.budget_delta, confirm_raise=True,
                        refuse_below_spent=False, note=f"site policy {policy.path}")
        # Noise the coordinator can reproduce from its seed protects no one from the coordinator: on this
        # site's records (real, as far as the site knows) a simulation run is a non-private release,
        # charged ε = ∞ (its guarantee void), never a free one. allow_simulation is the consent to it.
        eps = math.inf if req.non_private or req.simulation else req.epsilon
        dlt = 0.0 if math.isinf(eps) else req.delta
        # its ρ as the coordinator plans it: the site composes its runs by zCDP as the coordinator does,
        # not by Σε alone (which would refuse runs the coordinator's own odometer admits)
        rho, gaussian = planned_rho(req.method, eps, dlt)
        plan = PlannedRelease(kind="run", method=req.method, epsilon=eps, delta=dlt,
                              charges={shard.entity: (eps, dlt)}, simulation=False, rho=rho, gaussian=gaussian,
                              note=f"deployment run {run} for {coordinator}"
                                   + ("; simulation: noise reproducible from the coordinator's seed, non-private on "
                                      "this site's records" if req.simulation else ""))
        try:
            res = odo.reserve(ds, [plan], allow_non_private=policy.allow_non_private or req.simulation, key=key,
                              operation=run_operation(run, coordinator))
        except BudgetRefused as exc:
            # the coordinator learns that the budget refused; the balance and the account the site's
            # people were matched to stay in the site's log
            raise PolicyRefused("budget_epsilon", f"the run (ε = {_fmt(req.epsilon)}) would pass this site's "
                                "budget; its own release log states the balance",
                                detail=exc.render(SITE_CONTROLS)) from None
    except PolicyRefused as exc:
        log.add(**base, decision="refused", rule=exc.rule, note=exc.for_site())
        raise
    # the row states the charge, as the odometer holds it: a simulation or non-private run is charged ε = ∞
    # whatever ε it names, and the ρ it is composed by is the planned one
    asked = (f"; the run names ε = {_fmt(req.epsilon)}, δ = {req.delta:g}, charged as a non-private release: "
             + ("simulation, noise the coordinator can reproduce from its seed" if req.simulation
                else "it releases exact statistics")) if math.isinf(eps) and math.isfinite(req.epsilon) else ""
    log.add(**{**base, "epsilon": eps, "delta": dlt}, rho=rho, decision="accepted",
            note=f"charged to the site's odometer ({log.store.path}){asked}")
    # the store the charge is in: the run's draws are marked, and its charge given back, there only
    return {"operation": res.operation, "release_ids": list(res.release_ids), "dataset_key": key,
            "store": str(log.store.path)}


def withdraw(policy: SitePolicy, shard, record: dict, *, run: str, coordinator: str) -> bool:
    """Give back this site's charge for a run the coordinator says ended (another site refused it, or it
    failed before it finished). The coordinator's word only asks: the site gives its charge back
    when its own store says it drew nothing in the run (each stage is marked there before its draw,
    :func:`claim_draw`), and keeps it otherwise. ``record``: the acceptance (:func:`accept`'s
    operation, release ids, dataset key and store). Logged either way; returns whether it was given back."""
    from dpfed_core.privacy.budget_records import Reservation
    from dpfed_core.privacy.odometer import BudgetOdometer

    # its release ids are the charged store's: another store's (a policy whose store key was edited
    # since) would name other runs' charges
    log = SiteLog(record.get("store") or policy.store_for(shard.entity))
    with log.store.write() as con:
        decision, _ = _decide_withdrawal(con, run=run, coordinator=coordinator, entity=shard.entity,
                                         by="coordinator")
    if decision == "already":
        return True  # its operator withdrew first (`site withdraw`): given back already, logged then
    if decision == "kept":
        return False
    odo = BudgetOdometer(log.store)
    res = Reservation(odo, str(record["dataset_key"]), str(record["operation"]),
                      [int(i) for i in record["release_ids"]], [])
    # 0 draws: the site's store holds no stage of the run, and each is marked there before its draw
    res.withdraw(0, f"withdrawn by the site: run {run} ended, the coordinator says; this site drew nothing in it")
    return True


def remaining_budget(store: str | os.PathLike) -> list[dict]:
    """The site's budget from its own store, without the coordinator: per account (a dataset the site
    holds, with the keys of its re-exports recognised as the same people in ``aliases`` and the other
    entity names they were decided for in ``alias_entities``), its cap, spent and remaining (ε, δ) (the
    odometer's balance of its one entity) and every change of its cap (``cap_changes``, newest first)."""
    from dpfed_core.privacy.odometer import BudgetOdometer

    odo = BudgetOdometer(SiteLog(store, create=False).store)
    datasets = odo.datasets()
    keys = {d["key"] for d in datasets}
    aliases: dict[str, list[str]] = {}
    alias_entities: dict[str, list[str]] = {}
    for d in datasets:
        if d.get("alias_of") in keys:
            aliases.setdefault(d["alias_of"], []).append(d["key"])
            alias_entities.setdefault(d["alias_of"], []).extend(str(e) for e in d.get("entities") or [])
    out = []
    for d in datasets:
        if d.get("alias_of") in keys:
            # a re-export of the same people is charged to its account: one balance, its aliases named,
            # never the account's balance once more for every re-export
            continue
        changes = odo.cap_changes(d["key"])  # every change of the site's cap, the policy's edits included
        for b in odo.balance(d["key"]):
            # a site whose people were recognised as this account's (another entity name, a shared store)
            # is charged here: its own name must find this balance
            others = sorted(set(alias_entities.get(d["key"], [])) - {b.entity})
            out.append({"dataset_key": d["key"], "dataset": d["name"], "aliases": aliases.get(d["key"], []),
                        "alias_entities": others, **b.to_dict(), "cap_changes": changes})
    return out
