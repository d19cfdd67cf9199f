"""The method registry: every comparison method fits factors U (n_users × r), V (n_items × r) on a
split's training matrix, so all are evaluated by the same code on the same split.

Each method declares its privacy model as a :class:`~dpfed_core.privacy.model.PrivacyModel` (an
enum); its label, the odometer's charge and the catalogue logic are derived from that enum, never
from wording. ``detail`` adds the method's own words (e.g. what exactly leaves the entities).

Register more with :func:`register_method`. The registry itself imports no method: the package
``dpfed_core.methods`` imports the built-in methods and the comparison systems, which register here.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable

import numpy as np
import scipy.sparse as sp

from ..config import Param, RunConfig
from ..data.dataset import FederatedDataset
from ..errors import ConfigError
from ..federation.messages import Message
from ..models.entity_factors import EntityFactors
from ..federation.protocol import FederatedRecommender, federated_method_names, is_summable, method_class
from ..privacy.ledger import PrivacyLedger
from ..privacy.model import PrivacyModel


@dataclass
class MethodResult:
    """Fitted factors plus what the run released and cost.

    ``U``, ``V``: the shared factors (a federation's: on the broadcast V). ``factors``: the scores
    when entities also keep columns of their own (summable round 2, ``local``, ``individual``);
    None means ``U @ V.T`` is the whole model. Score through :meth:`entity_factors`."""

    U: np.ndarray
    V: np.ndarray
    ledger: PrivacyLedger
    messages: list[Message] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    model: object | None = None
    extra: dict = field(default_factory=dict)
    factors: EntityFactors | None = None

    def entity_factors(self) -> EntityFactors:
        """The model's scores as :class:`EntityFactors` (each entity's own factors)."""
        return self.factors if self.factors is not None else EntityFactors(self.U, self.V)


FitFn = Callable[[FederatedDataset, sp.csr_matrix, RunConfig, np.random.Generator, Callable], MethodResult]


@dataclass(frozen=True)
class MethodSpec:
    """A registered method.

    name : its registry key. fit : ``fit(dataset, train, config, rng, progress) -> MethodResult``.
    label : display name. privacy_model : what protects its numbers (:class:`PrivacyModel`).
    description : one line. detail : the method's own words on its privacy (shown after the model's
    label). uses_k : it takes ``k`` (prototypes per entity). parameters : its declared parameters
    (:class:`~dpfed_core.config.Param`), settable by ``--param`` / the dashboard's Advanced panel.
    federated : it runs the federation protocol (a prototype or summable method).
    site_rows : its fit reads the training data only a site's block of rows at a time (``train[sl]``),
    so it is given the split's rows (:class:`~dpfed_core.data.split.TrainRows`) and the whole
    training matrix is never built; every federated method does. check : a rule the run's
    configuration must meet for the fit to run (raises :class:`~dpfed_core.errors.ConfigError`),
    checked before the run is charged. check_data : a rule on the configuration against the data's
    public description (its declared kind of value, bound, shape), checked at the same point.
    """

    name: str
    fit: FitFn
    label: str
    privacy_model: PrivacyModel
    description: str
    detail: str = ""
    uses_k: bool = False
    parameters: tuple[Param, ...] = ()
    federated: bool = False
    site_rows: bool = False
    check: Callable[[RunConfig], None] | None = None
    check_data: Callable[[Any, RunConfig], None] | None = None

    @property
    def uses_epsilon(self) -> bool:
        """The method calibrates noise to an (ε, δ) (derived from :attr:`privacy_model`)."""
        return self.privacy_model.uses_budget

    @property
    def privacy(self) -> str:
        """The label shown next to the method's numbers: the model, then the method's detail."""
        label = self.privacy_model.label
        return f"{label} — {self.detail}" if self.detail else label

    def parameter(self, name: str) -> Param | None:
        return next((p for p in self.parameters if p.name == name), None)


METHODS: dict[str, MethodSpec] = {}


#: What every fit checks of its run before it starts. The comparison specs add the parameter check
#: (:func:`~dpfed_core.methods.comparison.specs.check_parameters_used`) when they register, before any
#: method can be looked up: the registry imports no method's module.
FIT_CHECKS: list[Callable] = []


def add_fit_check(check: Callable) -> None:
    """Have every registered fit run ``check(config)`` first (once, however often it is added)."""
    if check not in FIT_CHECKS:
        FIT_CHECKS.append(check)


def _checked(fit: FitFn) -> FitFn:
    """``fit`` behind the checks of :data:`FIT_CHECKS`: every fit reached through the registry — a run, a
    compared method, a script's ``run_method`` — refuses a parameter its method would not read, and no
    system's fit checks again."""
    @functools.wraps(fit)
    def checked(dataset, train, config, rng, progress, **kwargs):
        for check in FIT_CHECKS:
            check(config)
        return fit(dataset, train, config, rng, progress, **kwargs)

    checked.checks_parameters = True
    return checked


def register_method(spec: MethodSpec) -> MethodSpec:
    """Register ``spec`` under its name, its fit behind the parameter check (a spec registered again,
    its fit already checked, is kept as given)."""
    if not getattr(spec.fit, "checks_parameters", False):
        spec = replace(spec, fit=_checked(spec.fit))
    METHODS[spec.name] = spec
    return spec


def get_method(name: str) -> MethodSpec:
    _register_federated_methods()
    if name not in METHODS:
        raise ConfigError(f"unknown method {name!r}; choose one of {', '.join(sorted(METHODS))}")
    return METHODS[name]


def check_methods(names: Iterable[str], param: str) -> list[str]:
    """Every name of a method list known (plug-ins registered where their module is loaded), or one
    :class:`~dpfed_core.errors.ConfigError` named by the list's own control ``param`` (a run's
    ``compare``, a sweep's ``references``): the list it came from names the fix."""
    names = list(names)
    for name in names:
        try:
            get_method(name)
        except ConfigError as exc:
            raise ConfigError(str(exc), param=param) from None
    return names


def available_methods() -> list[str]:
    _register_federated_methods()
    return sorted(METHODS)



# ---------------------------------------------------------------------------- federated (ours)
def _fit_federated(dataset, train, config, rng, progress, shared=None):
    """Every federated method — prototype or summable — through the one estimator; ``shared``: a
    DP-selected catalogue (:class:`~dpfed_core.models.shared_items.SharedItems`), what is shared while
    each entity keeps its own items."""
    model = FederatedRecommender.from_config(config, random_state=rng).fit(dataset, train, progress=progress,
                                                                          shared=shared)
    extra = {"releases": model.releases_, "notes": model.notes_}
    if hasattr(model, "trust_"):
        extra.update(trust=model.trust_, public=model.public_, secure_sum=model.secure_sum_)
    return MethodResult(model.U_, model.V_, model.ledger_, model.messages_, dict(model.timings_), model, extra,
                        factors=model.factors_)


def _register_federated_methods() -> None:
    """Every registered prototype and summable method is a method of the same name, with its
    declared parameters and its privacy model (a DP mechanism or raw prototypes)."""
    for name in federated_method_names():
        if name in METHODS:
            continue
        cls = method_class(name)
        private = bool(getattr(cls, "private", False))
        summable = is_summable(name)
        register_method(MethodSpec(
            name=name,
            fit=_fit_federated,
            label=f"{name} (summable release)" if summable else f"Federated MF + {name}",
            privacy_model=PrivacyModel.FEDERATED_USER_DP if private else PrivacyModel.NON_PRIVATE,
            detail=("summable release" if summable else "") if private else "raw prototypes leave entities",
            description=(cls.__doc__ or "").strip().split("\n")[0],
            uses_k=not summable,
            parameters=tuple(cls.parameters),
            federated=True,
            site_rows=True,
        ))
