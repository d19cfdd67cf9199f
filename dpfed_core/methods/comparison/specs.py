"""What the other papers' systems are — names, labels, privacy models, declared parameters — as data,
registered without importing their implementations: ``python -m dpfed_core methods`` and the method
lists stay light, and a system's module (:mod:`.friedman`, :mod:`.fcf`, :mod:`.xin`) is imported only
when one of its methods is fitted.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable

from dpfed_core.config import Param
from dpfed_core.privacy.model import PrivacyModel

_BASELINES = {
    "global-average": ("Global average", "Every prediction is the global mean rating (Friedman et al. Table 3 GA)."),
    "item-average": ("Item average", "Each item's mean rating (Friedman et al. Table 3 IA)."),
    "global-effects": ("Global effects", "Item mean + user mean of item residuals (Friedman et al. Table 3 GE)."),
    "ge-mf": ("Clean MF on global effects",
              "Non-private ALS-WR (or SGD) on the global-effects residuals (Friedman et al. Table 3 clean MF)."),
}
_PRIVATE = {
    "friedman-ge": ("ge", "Private global effects (Friedman et al.)",
                    "Noisy β-stabilised item and user averages (Alg. 1–2), split 0.02/0.54/0.44."),
    "friedman-isgd": ("isgd", "ISGD: input perturbation (Friedman et al.)",
                      "Laplace on every preprocessed rating, then non-private SGD MF (Alg. 3)."),
    "friedman-psgd": ("psgd", "PSGD: gradient perturbation (Friedman et al.)",
                      "SGD with Laplace noise on every error (Alg. 4) / K-norm noise per epoch (Alg. 5)."),
    "friedman-pals": ("pals", "PALS: ALS output perturbation (Friedman et al.)",
                      "ALS-WR with K-norm noise on every solved factor (Alg. 6)."),
}
#: Declared parameters (``--param``); ``factors`` and ``lam`` default to the run's rank and λ, the
#: scale (r_min, r_max) to the data's public value bound.
FRIEDMAN_PARAMETERS = (
    Param("variant", "choice", "bounded", "bounded (clamped) or unbounded (as claimed by the paper) updates",
          choices=("bounded", "unbounded")),
    Param("factors", "int", None, "d latent factors; none = the run's rank", low=1, high=1000, optional=True),
    Param("lam", "float", None, "λ ridge; none = the run's λ", low=0, optional=True),
    Param("lr", "float", 0.01, "γ, SGD learning rate", low=0, low_open=True),
    Param("iterations", "int", None, "epochs / ALS iterations; none = the paper's per algorithm", low=1,
          high=10_000, optional=True),
    Param("B", "float", 1.0, "residual clamp", low=0, low_open=True),
    Param("p_max", "float", 0.4, "user-factor norm bound (PSGD, PALS)", low=0, low_open=True),
    Param("q_max", "float", 0.5, "item-factor norm bound (PSGD, PALS)", low=0, low_open=True),
    Param("e_max", "float", None, "error clamp; none = the variant's", low=0, low_open=True, optional=True),
    Param("alpha", "float", 0.6, "unbounded ISGD zeroing threshold", low=0),
    Param("beta_m", "float", 15.0, "stabiliser of the private item averages", low=0),
    Param("beta_u", "float", 15.0, "stabiliser of the private user averages", low=0),
    Param("split", "floats", None, "5 ε shares: global-items,items,global-users,users,MF (0 unless isgd, psgd "
          "or pals fits factors); none = §5.2, friedman-ge §5.4", optional=True),
    Param("r_min", "float", None, "public rating scale minimum; none = 1 for ratings, 0 otherwise", optional=True),
    Param("r_max", "float", None, "public rating scale maximum; none = the value bound", optional=True),
    Param("batch_size", "text", "auto", "SGD mini-batch: auto or a whole number (1 = exact)"),
    Param("private_preprocessing", "bool", False, "ge-mf: β-stabilised global effects instead of exact ones "
          "(drawn without noise: ge-mf runs at ε = ∞)"),
    Param("solver", "choice", "als", "friedman-ge-mf: ALS or SGD", choices=("als", "sgd")),
)

# --------------------------------------------------------------------------- FCF (Ammad-ud-din et al.)
PRIVACY_FCF_DETAIL = "gradients of raw data leave every round"
PRIVACY_ALS_DETAIL = "all raw interactions pooled at the server"

#: Declared parameters (``--param``); ``factors`` and ``lam`` default to the run's rank and λ.
ALS_PARAMETERS = (
    Param("factors", "int", None, "K latent factors; none = the run's rank", low=1, high=1000, optional=True),
    Param("alpha", "float", 1.0, "α of the confidence c = 1 + α·r (Hu et al. 2008)", low=0),
    Param("lam", "float", None, "λ ridge; none = the run's λ", low=0, optional=True),
    Param("epochs", "int", 20, "epochs (X then Y per epoch)", low=1, high=10_000),
    Param("binarize", "bool", None, "any value = 1 (none: ratings binarised, counts kept)", optional=True),
    Param("init_scale", "float", 0.1, "X, Y ~ N(0, init_scale²) at start", low=0, low_open=True),
)
FCF_PARAMETERS = ALS_PARAMETERS + (
    Param("gd_iters", "int", 10, "server steps (= communication rounds) per epoch", low=1, high=10_000),
    Param("optimizer", "choice", "adam", "server optimiser", choices=("adam", "gd")),
    Param("gamma", "float", 0.2, "server step size", low=0, low_open=True),
    Param("beta1", "float", 0.4, "Adam β₁", low=0, high=1, high_open=True),
    Param("beta2", "float", 0.99, "Adam β₂", low=0, high=1, high_open=True),
    Param("adam_eps", "float", 1e-8, "Adam ε (numerical)", low=0, low_open=True),
    Param("adam_bias", "choice", "paper", "bias correction without (paper) / with (standard) the step exponent",
          choices=("paper", "standard")),
    Param("grad_reduction", "choice", "sum", "how client gradients are combined (Eq. 12 sums)",
          choices=("sum", "mean")),
    Param("reset_state_each_epoch", "bool", True, "restart Adam's moments each epoch"),
    Param("x_refresh", "choice", "epoch", "clients re-solve x_u once per epoch or every round",
          choices=("epoch", "round")),
)

# --------------------------------------------------------------------------- Xin & Jaakkola 2014
PRIVACY_PUBLIC = ("public users share all their ratings (no privacy); private users release nothing "
                  "(local fit) — not differential privacy")
PRIVACY_MECH = ("not differential privacy (first-order/marginal deniability only; public users share "
                "all their ratings)")

#: Declared parameters (``--param``).
XIN_PARAMETERS = (
    Param("public_fraction", "float", 0.01, "share of users that are public", low=0, high=1, low_open=True),
    Param("n_public", "int", None, "number of public users (overrides public_fraction)", low=1, optional=True),
    Param("public_selection", "choice", "heaviest", "which users are public", choices=("heaviest", "random")),
    Param("tau", "float", 10.0, "singular-value threshold τ of the trace-norm EM", low=0, low_open=True),
    Param("max_rank", "int", 50, "cap on the rank of V (none = no cap)", low=1, optional=True),
    Param("max_iter", "int", 100, "EM iterations", low=1, high=100_000),
    Param("tol", "float", 1e-4, "EM stopping tolerance", low=0, low_open=True),
    Param("batch", "int", 20, "private users per server update (w)", low=1),
    Param("private_weight", "float", 0.5, "weight of private users' contributions", low=0, high=1),
    Param("pmd_sweeps", "int", 2, "PMD search sweeps", low=1, high=1000),
    Param("pmd_tries", "int", 5, "PMD candidates tried", low=1, high=1000),
    Param("values", "floats", None, "PMD's rating set S; none = 1..value bound for ratings (other data must give it)",
          optional=True),
)


def _lazy(module: str, factory: str, *args) -> Callable:
    """A fit function that imports its system's module on first use: ``module.factory(*args)`` is
    the real fit (or ``module.factory`` itself when no arguments are given)."""
    def fit(dataset, train, config, rng, progress):
        obj = getattr(importlib.import_module(f"dpfed_core.methods.comparison.{module}"), factory)
        return (obj(*args) if args else obj)(dataset, train, config, rng, progress)
    fit.__qualname__ = f"{module}.{factory}{args!r}"
    return fit


def check_output_perturbation_ridge(config) -> None:
    """PALS releases each solved factor with noise of sensitivity G/(n·λ) (the objective's strong
    convexity 2nλ, Friedman et al. Theorem 6): at λ = 0 no finite noise protects it, and the
    sensitivity its ledger states is undefined at any ε."""
    from dpfed_core.errors import ConfigError

    own = (config.params or {}).get("lam")
    lam = float(config.lam if own is None else own)
    if not lam > 0:
        raise ConfigError(f"{config.method} needs a ridge penalty λ > 0: its output perturbation's sensitivity is "
                          f"G/(n·λ), unbounded at λ = {lam:g}; give λ > 0 such as 0.1",
                          param="lam" if own is None else "prototype_params")


@dataclass(frozen=True)
class Reads:
    """Which of its declared parameters a method reads: those in ``always`` whatever the others say;
    each ``(setting, value, why, names)`` of ``when`` reads ``names`` only while the parameter
    ``setting`` is ``value`` (``why`` says what it does otherwise); every other declared parameter
    never, for the reason ``why``."""

    why: str
    always: tuple[str, ...] = ()
    when: tuple[tuple[str, object, str, tuple[str, ...]], ...] = ()


#: The Friedman methods that read none of the Friedman parameters: exact averages of the ratings.
AVERAGE_BASELINES = ("global-average", "item-average", "global-effects")
#: What private global effects (Alg. 1–2, :func:`~.friedman.private_global_effects`) read.
_PRIVATE_GE = ("variant", "beta_m", "beta_u", "split", "r_min", "r_max")
_SGD = ("factors", "lam", "iterations", "lr", "batch_size")
FRIEDMAN_READS = {
    **{name: Reads("computes exact averages of the ratings and reads none of its parameters")
       for name in AVERAGE_BASELINES},
    # clean MF runs at ε = ∞: its global effects, even the β-stabilised ones of private_preprocessing,
    # draw no noise (no variant, no split), exact residuals are not clamped by B, and predictions are
    # U @ Vᵀ, unclamped (r_min, r_max bound only the stabilised item averages)
    "ge-mf": Reads("fits clean MF with no ε: its global effects are exact, or β-stabilised without noise when "
                   "private_preprocessing is on",
                   ("solver", "private_preprocessing", "factors", "lam", "iterations"),
                   (("solver", "sgd", "fits by ALS unless solver is sgd", ("lr", "batch_size")),
                    ("private_preprocessing", True, "fits exact global effects unless private_preprocessing is on",
                     ("beta_m", "beta_u", "r_min", "r_max", "B")))),
    "friedman-ge": Reads("releases private global effects only and fits no factors", _PRIVATE_GE),
    "friedman-isgd": Reads("perturbs the ratings, then runs SGD without norm bounds or error clamp",
                           _PRIVATE_GE + _SGD + ("B",),
                           (("variant", "unbounded", "drops no noisy rating unless variant is unbounded",
                             ("alpha",)),)),
    "friedman-psgd": Reads("perturbs SGD's errors and drops no rating", _PRIVATE_GE + _SGD + ("B", "p_max", "q_max",
                                                                                          "e_max")),
    "friedman-pals": Reads("solves ALS exactly (no SGD step, no error clamp) and drops no rating",
                           _PRIVATE_GE + ("factors", "lam", "iterations", "B", "p_max", "q_max")),
}
_ALS = tuple(p.name for p in ALS_PARAMETERS)
FCF_READS = {
    "implicit-als": Reads("fits implicit ALS", _ALS),
    "fcf": Reads("fits federated implicit ALS",
                 _ALS + ("gd_iters", "optimizer", "gamma", "grad_reduction", "x_refresh"),
                 (("optimizer", "adam", "takes plain gradient steps unless optimizer is adam",
                   ("beta1", "beta2", "adam_eps", "adam_bias", "reset_state_each_epoch")),)),
}
_EM = ("tau", "max_rank", "max_iter", "tol")
_PUBLIC = ("n_public", "public_selection")
_PUBLIC_FRACTION = (("n_public", None, "takes n_public public users when n_public is given", ("public_fraction",)),)
XIN_READS = {
    "xin-full": Reads("fits trace-norm EM on every user's ratings: no user is public and none releases a vector",
                      _EM),
    "xin-public": Reads("learns from the public users only: the private users release nothing", _EM + _PUBLIC,
                        _PUBLIC_FRACTION),
    "xin-pmc": Reads("releases PMC vectors, which need no rating set and no PMD search",
                     _EM + _PUBLIC + ("batch", "private_weight"), _PUBLIC_FRACTION),
    "xin-pmd": Reads("releases PMD vectors", _EM + _PUBLIC + ("batch", "private_weight", "pmd_sweeps",
                                                             "pmd_tries", "values"), _PUBLIC_FRACTION),
}
#: Every comparison method's declared parameters and which of them it reads.
PARAMETER_READS = {**{name: (FRIEDMAN_PARAMETERS, reads) for name, reads in FRIEDMAN_READS.items()},
                   "implicit-als": (ALS_PARAMETERS, FCF_READS["implicit-als"]),
                   "fcf": (FCF_PARAMETERS, FCF_READS["fcf"]),
                   **{name: (XIN_PARAMETERS, reads) for name, reads in XIN_READS.items()}}

#: Federated methods (declared by their classes) whose parameters are not all read in every setting.
FEDERATED_READS = {
    # without local_blend round 2 fits U_h on the broadcast popularity alone: no hold-out to weigh
    "dp-popularity": Reads("releases the DP popularity", ("row_norm", "local_blend"),
                           (("local_blend", True, "ranks every user by the plain DP popularity list unless "
                             "local_blend is on", ("holdout_evidence",)),)),
    # without local_blend dp-als fits U_h on the broadcast V alone; dp-cooccurrence still weighs the
    # federation's parts on the hold-out, but keeps no default of the entity's own
    "dp-als": Reads("learns federated ALS factors", ("steps", "pop_share", "max_items", "local_blend"),
                    (("local_blend", True, "fits every user on the broadcast factors alone unless local_blend is on",
                      ("holdout_evidence", "round2_default")),)),
    "dp-cooccurrence": Reads("releases the DP co-occurrence", ("pop_share", "max_items", "local_blend",
                                                               "holdout_evidence"),
                             (("local_blend", True, "weighs the federation's parts alone, with no default of the "
                               "entity's own to keep, unless local_blend is on", ("round2_default",)),)),
    # the LSH tree's settings are read by the LSH coreset alone (its release and its checks); the LSH
    # coreset clusters the unprojected rows by a local k-means on its noisy leaves, so the projection,
    # the grids and the private local search are read by the private partition alone
    **{name: Reads("finds its candidates by the private partition",
                   ("variant", "row_norm", "row_scaling", "value_min", "support", "threshold", "cluster_size",
                    "candidates", "split", "refine_steps", "trials"),
                   (("candidates", "lsh", "finds its candidates by the private partition unless candidates is lsh",
                     ("lsh_depth", "lsh_node_factor", "lsh_node_cap")),
                    ("candidates", "partition", "grows an LSH tree over the unprojected rows, with no grid partition "
                     "and no private local search, unless candidates is partition",
                     ("projection_dim", "n_grids", "depth", "max_candidates", "search_steps", "final_choice"))))
       for name in ("dp-prototypes", "dp-gaussian")},
}


def _as_given(value: object) -> str:
    """A parameter value as ``--param`` takes it (``true``, ``0.1,0.9``)."""
    if isinstance(value, (tuple, list)):
        return ",".join(_as_given(v) for v in value)
    return "true" if value is True else "false" if value is False else f"{value:g}" if isinstance(value, float) \
        else str(value)


def check_parameters_used(config) -> None:
    """Refuse a parameter the method does not read (:data:`PARAMETER_READS`, :data:`FEDERATED_READS`)
    when it is set to another value than its default, naming it, why it has no effect and the fix:
    the run would report a result that silently did not use the value asked for. The default value
    (what the run does anyway) is accepted."""
    from dpfed_core.config import check_params
    from dpfed_core.errors import ConfigError

    if config.method in PARAMETER_READS:
        declared, reads = PARAMETER_READS[config.method]
    elif config.method in FEDERATED_READS:
        from dpfed_core.methods.registry import get_method

        declared, reads = get_method(config.method).parameters, FEDERATED_READS[config.method]
    else:
        return
    given = check_params(declared, config.params, config.method)
    defaults = {p.name: p.default for p in declared}
    setting = {**defaults, **given}
    for key, value in given.items():
        if key in reads.always or value == defaults[key]:
            continue
        conditions = [c for c in reads.when if key in c[3]]
        if any(setting[name] == wanted for name, wanted, _, _ in conditions):
            continue
        # "key, given as value" rather than "key = value": the dashboard reads "name = value" as one of
        # its main controls (split, lam), which are not where a method's parameter is set
        if not conditions:
            raise ConfigError(f"{config.method} {reads.why}: its parameter {key}, given as {_as_given(value)}, "
                              f"would be ignored; drop {key} from prototype_params", param="prototype_params")
        name, wanted, why, _ = conditions[0]
        fix = f"drop {name}" if wanted is None else f"set {name}={_as_given(wanted)}"
        raise ConfigError(f"{config.method} {why}: its parameter {key}, given as {_as_given(value)}, would be "
                          f"ignored ({key} is read only then); {fix} or drop {key} from prototype_params",
                          param="prototype_params")
    split = given.get("split")
    if config.method == "friedman-ge" and split is not None and len(split) == 5 and split[4] != 0:
        # the ledger would charge the four averages their shares and leave this one unspent
        private_mf = ", ".join(n for n in FRIEDMAN_READS if n.startswith("friedman-") and n != config.method)
        private_mf = " and ".join(private_mf.rsplit(", ", 1))
        raise ConfigError(f"{config.method} {reads.why}: the fifth (MF) share of its parameter split, given as "
                          f"{_as_given(split)}, would be left unspent (only {private_mf} spend it on their "
                          "factorisation); give 0 as the fifth share of split in prototype_params",
                          param="prototype_params")


def _fit_check(config) -> None:
    """The registry's check before every fit: :func:`check_parameters_used`, looked up when it runs (one name
    to replace for the whole engine)."""
    check_parameters_used(config)


def _check_pals(config) -> None:
    check_parameters_used(config)
    check_output_perturbation_ridge(config)


def _check_pmd_scale(dataset, config) -> None:
    importlib.import_module("dpfed_core.methods.comparison.xin").check_pmd_scale(dataset, config)


def register() -> None:
    """Register every comparison method (the implementations load when fitted)."""
    from dpfed_core.methods.registry import MethodSpec, add_fit_check, register_method

    add_fit_check(_fit_check)  # every fit through the registry, these systems' and the others'
    for name, (label, desc) in _BASELINES.items():
        register_method(MethodSpec(name, _lazy("friedman", "_make_fit", name, False), label, PrivacyModel.NON_PRIVATE,
                                   desc, detail="trusted central curator holds all ratings",
                                   parameters=FRIEDMAN_PARAMETERS, check=check_parameters_used))
    for name, (algo, label, desc) in _PRIVATE.items():
        detail = "not comparable one-for-one with user-level federated ε" + (
            "" if algo in ("ge", "isgd") else "; unbounded variant: guarantee as claimed by the paper")
        register_method(MethodSpec(name, _lazy("friedman", "_make_fit", algo, True), label,
                                   PrivacyModel.CENTRAL_RATING_DP, desc, detail=detail,
                                   parameters=FRIEDMAN_PARAMETERS,
                                   check=_check_pals if algo == "pals" else check_parameters_used))
    register_method(MethodSpec(
        "implicit-als", _lazy("fcf", "_fit_implicit_als"), "Implicit ALS (Hu et al. 2008, centralised)",
        PrivacyModel.NON_PRIVATE,
        "Confidence-weighted ALS on pooled implicit feedback — the centralised model FCF federates.",
        detail=PRIVACY_ALS_DETAIL, parameters=ALS_PARAMETERS, check=check_parameters_used))
    register_method(MethodSpec(
        "fcf", _lazy("fcf", "_fit_fcf"), "FCF (Ammad-ud-din et al. 2019)", PrivacyModel.NO_FORMAL_CLAIM,
        "Federated implicit ALS: clients solve their own factors, the server steps item factors by Adam "
        "on every client's gradient; epochs × gd_iters communication rounds.",
        detail=PRIVACY_FCF_DETAIL, parameters=FCF_PARAMETERS, check=check_parameters_used))
    for name, mech, label, model, detail, desc in (
            ("xin-public", "none", "Xin & Jaakkola: public users only", PrivacyModel.NO_FORMAL_CLAIM, PRIVACY_PUBLIC,
             "Item model (μ, V) learned by trace-norm EM from the heaviest public users (default 1%); every "
             "other user fits locally with Eq. 4."),
            ("xin-pmc", "pmc", "Xin & Jaakkola: public + PMC private vectors", PrivacyModel.NO_FORMAL_CLAIM,
             PRIVACY_MECH, "Public-user EM, then private users each release ±h·sign(r − μ) (PMC), streamed in "
                           "batches of 20."),
            ("xin-pmd", "pmd", "Xin & Jaakkola: public + PMD private vectors", PrivacyModel.NO_FORMAL_CLAIM,
             PRIVACY_MECH, "Public-user EM, then private users each release one of K permutation candidates (PMD)."),
            ("xin-full", "full", "Xin & Jaakkola: full EM (all users)", PrivacyModel.NON_PRIVATE,
             "all users' ratings pooled at the server",
             "Trace-norm EM over every user's ratings: the non-private reference ('Full EM').")):
        register_method(MethodSpec(name, _lazy("xin", "_make_fit", mech), label, model, desc, detail=detail,
                                   parameters=XIN_PARAMETERS, check=check_parameters_used,
                                   check_data=_check_pmd_scale if mech == "pmd" else None))
