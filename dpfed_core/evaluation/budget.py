"""What a run, a sweep or an audit will charge to the odometer — computed from the configuration
alone, before anything touches the data — and the charges read back from a finished run's ledger.

Charge of one method run to each entity (``method_charges``), from the method's declared
:class:`~dpfed_core.privacy.model.PrivacyModel` (never its wording):

* ``FEDERATED_USER_DP`` — the requested (ε, δ) per entity (the ledger refuses any spend above it);
  settled afterwards to what the ledger actually recorded for the entity;
* ``NO_RELEASE`` (``individual``, ``random-v``) — nothing leaves: 0;
* anything else (raw data or exact statistics pooled, a rating-level ε at a trusted central
  curator, no formal DP) and a DP method at ε = inf — non-private: ∞ for every entity.

:func:`~dpfed_core.evaluation.service.charged_run` and :func:`~dpfed_core.evaluation.service.charged_sweep` are the engine calls with the odometer in front (the CLI
and the dashboard use them): reserve — which may refuse — then compute, settle, keep in the history.

An audit runs the audited entity's mechanism thousands of times on its exact rows and picks its
targets from them: it is charged as a non-private analysis of that entity (∞), nothing to others.

A planned release also carries its ρ (zCDP) where the configuration gives it
(:func:`planned_rho`: the summable methods that declare ``zcdp_budget``), a settled run the ρ of its ledger rows
(:func:`ledger_rhos`), and a sweep's points form one non-adaptive batch; the odometer composes them
(docs/PRIVACY.md). :func:`planned_charge` says what plans would charge without charging (dry runs,
button labels); :func:`accountant_record` is the ``privacy.accountant`` field of a result document.
"""
from __future__ import annotations

import math
import os
from typing import Iterable, Mapping, Sequence

from dpfed_core.config import RunConfig
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError
from dpfed_core.methods import check_methods, get_method
from dpfed_core.evaluation.history import RunHistory
from dpfed_core.privacy.model import PrivacyModel
from dpfed_core.privacy.odometer import BudgetOdometer, PlannedRelease, Reservation
from dpfed_core.privacy.store import Store

def gaussian_method(method: str) -> bool:
    """Is every release of ``method`` Gaussian noise calibrated to (ε, δ) as a whole, so that its ρ is
    known before it runs (:func:`planned_rho`)? The summable methods that declare ``zcdp_budget``:
    dp-popularity (one Gaussian sum), dp-cooccurrence (two Gaussian sums, one zCDP budget split),
    dp-als (the popularity and the ALS steps, one split). dp-gaussian is not: its candidate stage is an
    approximate-DP selection with no ρ, so it composes by its (ε, δ) only (see docs/PRIVACY.md)."""
    from dpfed_core.federation.protocol import is_summable, method_class

    return is_summable(method) and bool(getattr(method_class(method), "zcdp_budget", False))


def check_gaussian_delta(methods: Sequence[str], epsilon: float, delta: float) -> None:
    """Refuse δ = 0 for a finite ε when any of ``methods`` is Gaussian (:func:`gaussian_method`): its
    stages split a zCDP budget ρ(ε, δ), which is 0 at δ = 0, so no noise scale gives that ε. The one
    rule the run's check and the pages' budget boxes apply before anything is charged."""
    zcdp = list(dict.fromkeys(m for m in methods if gaussian_method(m)))
    if zcdp and delta <= 0 and math.isfinite(epsilon):
        raise ConfigError(f"{', '.join(zcdp)} add{'s' if len(zcdp) == 1 else ''} Gaussian noise, whose (ε, δ) "
                          f"guarantee needs δ > 0: at δ = 0 there is no noise that gives ε = {epsilon:g}. Give "
                          "δ > 0, e.g. 1e-6", param="delta")


def method_charges(method: str, epsilon: float, delta: float,
                   entities: Sequence[str]) -> dict[str, tuple[float, float]]:
    """entity → (ε, δ) that one run of ``method`` at (ε, δ) charges (an upper bound of its ledger),
    from the method's declared :class:`~dpfed_core.privacy.model.PrivacyModel` (never its wording)."""
    model = get_method(method).privacy_model
    if model is PrivacyModel.NO_RELEASE:
        return {}
    if model.user_level and math.isfinite(epsilon):
        return {e: (float(epsilon), float(delta)) for e in entities}
    # non-private, no formal claim, a rating-level ε (no bound per user), or a DP method at ε = inf
    return {e: (math.inf, 0.0) for e in entities}


def planned_rho(method: str, epsilon: float, delta: float) -> tuple[float | None, bool]:
    """(ρ, Gaussian-only) of one run of ``method`` at (ε, δ) before it runs, what its ledger will
    record at most: the zCDP budget ρ(ε, δ) the method splits over its Gaussian stages
    (:func:`~dpfed_core.privacy.noise.zcdp_rho_for_epsilon`, rounded down; each stage's σ carries its
    margin over OpenDP's map inside it), so a dry run states the charge the run settles, not a looser
    bound. (None, False) when it cannot be derived from the configuration (the release then composes
    by (ε, δ) only)."""
    if (not gaussian_method(method) or not get_method(method).privacy_model.user_level
            or not math.isfinite(float(epsilon))):
        return None, False
    from dpfed_core.privacy.noise import zcdp_rho_for_epsilon

    return zcdp_rho_for_epsilon(float(epsilon), float(delta)), True


#: A simulation run on real data: its noise is a function of the public seed, so re-running
#: it on an all-zero dataset of the same shape recovers the exact statistics — an exact release.
SIMULATION_ON_REAL_DATA = ("simulation on real data: the noise is reproducible from the seed, so the run is an "
                           "exact release — charged as non-private (ε = ∞)")


def _plan(kind: str, method: str, eps: float, delta: float, entities: Sequence[str], seed, simulation: bool,
          batch: bool = False, note: str = "", generated: bool = True):
    charges = method_charges(method, eps, delta, entities)
    if simulation and not generated and charges:
        # not a way around the budget: on people's records a reproducible-noise run is non-private
        return PlannedRelease(kind=kind, method=method, epsilon=math.inf, delta=0.0,
                              charges={e: (math.inf, 0.0) for e in charges}, seed=seed, simulation=False,
                              note="; ".join(x for x in (note, SIMULATION_ON_REAL_DATA) if x), batch=batch)
    rho, gaussian = planned_rho(method, eps, delta) if charges else (None, False)
    # a method that releases nothing draws no noise: it is recorded as releasing nothing in either mode (as
    # a simulation it would be listed as uncharged simulation noise at ε = ∞)
    return PlannedRelease(kind=kind, method=method, epsilon=eps, delta=delta if math.isfinite(eps) else 0.0,
                          charges=charges, seed=seed, simulation=bool(simulation) and bool(charges), note=note,
                          rho=rho, gaussian=gaussian, batch=batch)


def _generated(dataset: FederatedDataset) -> bool:
    return bool(getattr(dataset, "generated", False))


def simulation_is_non_private(dataset: FederatedDataset) -> bool:
    """True when a simulation's DP releases on these data are charged as non-private (ε = ∞):
    on people's records, as :func:`_plan` charges them; a generated sample's are not charged."""
    return not _generated(dataset)


def _effective_epsilon(method: str, epsilon: float) -> float:
    # run_method records ε = inf for a method that has no budget; the plan says the same.
    return float(epsilon) if get_method(method).uses_epsilon else math.inf


def plan_run(dataset: FederatedDataset, config: RunConfig, compare: Iterable[str] = (),
             comparison: bool = False) -> list[PlannedRelease]:
    """Releases of ``python -m dpfed_core run``: the method, then each compared method (same ε).
    ``comparison``: the method itself is a comparison of another run (the dashboard's Evaluate page runs
    each on its own), recorded as one, as the CLI's ``--compare`` records it."""
    from dpfed_core.evaluation.defaults import compared_config

    out = []
    for i, m in enumerate(dict.fromkeys([config.method, *compare])):
        c = config if m == config.method else compared_config(dataset, config, m)
        eps = _effective_epsilon(m, c.epsilon)
        out.append(_plan("run" if i == 0 and not comparison else "comparison", m, eps, c.delta,
                         dataset.entity_names,
                         config.seed, config.simulation, generated=_generated(dataset)))
    return out


def plan_sweep(dataset: FederatedDataset, config: RunConfig, epsilons: Iterable[float], seeds: Iterable[int],
               references: Iterable[str] | None = None, done: Iterable = ()) -> list[PlannedRelease]:
    """One release per sweep point: per seed, the sweep's own job list
    (:func:`~dpfed_core.evaluation.experiments.sweep_jobs`), checked by the sweep's own grid check,
    so the plan and the sweep cannot drift (:func:`settle_sweep` is the safety net all the same).
    ``done``: job keys of points a resumed document already holds — not computed, not planned."""
    from dpfed_core.evaluation.experiments import DEFAULT_REFERENCES, job_key, check_sweep_grid, sweep_jobs

    references = DEFAULT_REFERENCES if references is None else references

    epsilons, seeds = check_sweep_grid(config, epsilons, seeds)
    references = check_methods(references, "references")
    out = []
    for seed in seeds:
        jobs = sweep_jobs(config.method, epsilons, references)
        for m, e in jobs:
            if job_key(m, e, int(seed), config.method) in done:
                continue
            e = _effective_epsilon(m, e)
            # Every point is fixed before the first runs: one non-adaptive batch (PLD among them).
            out.append(_plan("sweep point", m, e, config.delta, dataset.entity_names, int(seed),
                             config.simulation, batch=True, generated=_generated(dataset)))
    return out


def plan_audit(dataset: FederatedDataset, entity: str | int, methods: Iterable[str],
               epsilons: Iterable[float], delta: float, seed: int | None = None,
               simulation: bool = False, all_entities: bool = False) -> list[PlannedRelease]:
    """An audit of one entity: a non-private analysis of that entity's exact rows (∞), nothing else.
    ``all_entities``: the audit of a summable method also reads every other entity's exact rows
    (``--others data``: they simulate the rest of the secure sum), so every entity is charged ∞."""
    name = dataset.entity_names[dataset.entity_index(entity)]
    methods = list(methods)
    eps = [float(e) for e in epsilons]
    charges = {n: (math.inf, 0.0) for n in dataset.entity_names} if all_entities else {name: (math.inf, 0.0)}
    return [PlannedRelease(
        kind="audit", method=",".join(methods), epsilon=math.inf, delta=float(delta),
        charges=charges, seed=seed, simulation=bool(simulation),
        note=f"membership-inference audit of entity {name!r} at ε ∈ {{{', '.join(f'{e:g}' for e in eps)}}}: "
             "targets and thousands of releases from its exact rows"
             + (" and the other entities' exact rows (they simulate the rest of the secure sum)"
                if all_entities else ""))]


def settle_sweep(odometer, reservation, dataset: FederatedDataset, doc: Mapping,
                 resumed: Iterable = ()) -> list[PlannedRelease]:
    """Safety net after a sweep: every point it ran must have been charged. A point its plan did not
    list (the sweep's job list changed) is recorded now, charged like a planned one and noted;
    returns those points (empty when the plan was exact). ``resumed``: job keys of the points the
    resumed document already held (charged by the sweep that computed them)."""
    from dpfed_core.evaluation.experiments import job_key

    swept = str(doc.get("config", {}).get("method", ""))
    # points are identified as the sweep identifies them (a non-private reference by its seed only:
    # its plan says ε = inf, its run the ε its ledger guarantees)
    left: dict[tuple, int] = {}
    for p in reservation.plans:
        k = job_key(p.method, float(p.epsilon), p.seed, swept)
        left[k] = left.get(k, 0) + 1
    extra = []
    cfg = doc.get("config", {})
    delta = float(cfg.get("delta", 0.0) or 0.0)
    simulation = bool(cfg.get("simulation", False))
    for r in doc.get("runs", []):
        eps = float(r["epsilon"])
        if resumed and job_key(r["method"], eps, int(r["seed"]), swept) in resumed:
            continue
        point = _plan("sweep point", r["method"], eps, delta, dataset.entity_names, int(r["seed"]),
                      simulation, note="ran outside the sweep's plan: charged after it ran",
                      generated=_generated(dataset))
        # keyed by the point's own plan: a simulation on real data is planned at ε = inf, whatever ε it ran at
        k = job_key(point.method, float(point.epsilon), int(r["seed"]), swept)
        if left.get(k, 0) > 0:
            left[k] -= 1
            continue
        extra.append(point)
    if extra:
        odometer.reserve(dataset, extra, key=reservation.dataset_key, operation=reservation.operation,
                         enforce=False).close()
    return extra


def ledger_charges(privacy: Mapping, entities: Sequence[str] | None = None) -> dict[str, tuple[float, float]]:
    """entity → (ε, δ) of a result document's ledger: each entity's spend as the ledger composed it
    (``privacy.per_entity``: basic, or zCDP for Gaussian releases); documents without it (older
    ones) by basic composition of the ``privacy.ledger`` rows. Accepts the JSON form (``"inf"``)."""
    if privacy.get("per_entity"):
        return {str(r["entity"]): (float(r["epsilon"]), min(float(r.get("delta") or 0.0), 1.0))
                for r in privacy["per_entity"] if entities is None or r["entity"] in entities}
    acc: dict[str, list[float]] = {}
    for row in privacy.get("ledger", []):
        a = acc.setdefault(str(row["entity"]), [0.0, 0.0])
        a[0] += float(row["epsilon"])
        a[1] += float(row.get("delta") or 0.0)
    return {e: (v[0], min(v[1], 1.0)) for e, v in acc.items() if entities is None or e in entities}


def ledger_rhos(privacy: Mapping) -> dict[str, tuple[float | None, bool]]:
    """entity → (ρ, Gaussian-only) of a result document's ledger rows: Gaussian rows ρ = Δ²/2σ² from
    their sensitivity and noise scale, pure rows ε²/2; None when a row is neither
    (:func:`~dpfed_core.privacy.accounting.ledger_rho`)."""
    from dpfed_core.privacy.accounting import ledger_rho

    rows: dict[str, list] = {}
    for row in privacy.get("ledger", []):
        rows.setdefault(str(row["entity"]), []).append(row)
    return {e: ledger_rho(r) for e, r in rows.items()}


def settle_run(reservation, docs: Sequence[Mapping]) -> None:
    """Replace the reserved charges of a run's releases by their ledgers' (same order as
    :func:`plan_run`), with the ρ the ledger rows give. DP methods only: for the others the plan
    (0 or ∞) is already exact."""
    for i, (plan, doc) in enumerate(zip(reservation.plans, docs)):
        if plan.simulation or plan.non_private or not plan.charges:
            reservation.settle(i)
        else:
            # The ledger's own record (never above the reservation: the ledger refuses such spends).
            reservation.settle(i, ledger_charges(doc["privacy"]), ledger_rhos(doc["privacy"]))


# ------------------------------------------------------------------------------ what it will spend
def planned_charge(store: Store | str | os.PathLike | None, dataset: FederatedDataset,
                   plans: Sequence[PlannedRelease]) -> dict:
    """What ``plans`` would charge, computed without charging (a dry run, a button's label): see
    :meth:`~dpfed_core.privacy.odometer.BudgetOdometer.preview`, plus ``"text"`` — e.g. "spends ε ≈ 0.35
    of the 4.2 left per entity (accountant: zCDP)". A simulation plan reads no store."""
    if plans and all(p.simulation for p in plans):
        return {"spend": 0.0, "left": math.inf, "fits": True, "simulation": True, "non_private": False,
                "cap_epsilon": math.inf, "after": 0.0, "accountant": "none", "identity": "",
                "n_releases": len(plans),
                "text": "simulation: noise reproducible, no privacy claim — nothing is charged"}
    store = store if isinstance(store, Store) else Store(store)
    p = BudgetOdometer(store).preview(dataset, plans)
    # a simulation on people's records is charged as non-private: say why, not that exact data leaves
    p["simulated_on_records"] = any(SIMULATION_ON_REAL_DATA in (q.note or "") for q in plans)
    p["text"] = charge_text(p)
    dp_plans = [q for q in plans if not q.simulation and not q.non_private and q.charges]
    own = {float(q.delta) for q in dp_plans}
    if p.get("dp_spend", 0.0) > 0 and own and own != {float(p["delta"])}:
        # the store composes every release at one δ; a run stated at another δ reads a different ε
        p["text"] += f" (ε at δ = {float(p['delta']):.3g}, the budget's δ)"
    own_eps = sum(float(q.epsilon) for q in dp_plans)
    if not p.get("non_private") and math.isfinite(own_eps) and float(p.get("spend", 0.0)) > own_eps * 1.001:
        # the tight accountant can cost a release more than its own ε once the earlier ones are counted
        p["text"] += (f" — more than the ε = {own_eps:.3g} asked for: composed with this data's earlier releases "
                      "at the budget's δ (budget show lists them)")
    return p


def charge_text(p: Mapping) -> str:
    """One phrase for a planned charge (``preview``'s dict): its ε per entity, the ε left under a cap and,
    for non-private releases, that they charge ε = ∞ and need an explicit allowance under a cap."""
    # a cap and what is left of it are shown rounded down, a spend rounded up: never more budget shown than there is
    from dpfed_core.privacy.statement import epsilon_left, epsilon_that_holds

    def spent(x) -> str:
        return epsilon_that_holds(float(x), 3)

    def left(x) -> str:
        return epsilon_left(float(x), 3)

    if p.get("simulation"):
        return "simulation: nothing is charged"
    capped = math.isfinite(p["cap_epsilon"])
    if p.get("non_private"):
        dp = float(p.get("dp_spend", 0.0))
        what = ("a simulation on people's records (its noise is reproducible from the seed, so its releases are "
                "as exact as non-private ones" if p.get("simulated_on_records") else
                "non-private releases (exact data-derived values leave the entities")
        text = (f"spends ε = ∞: {what}; no overall guarantee for their people afterwards)"
                + (f"; its DP releases alone ε ≈ {spent(dp)}" if dp > 0 else ""))
        if capped:
            text += (f"; {left(p['left'])} left per entity under the cap ε = {epsilon_left(p['cap_epsilon'])}: refused "
                     "unless non-private releases are explicitly allowed")
        else:
            text += " (no cap set)"
    elif capped and "binding_spend" in p and not (math.isclose(p["binding_spend"], p["spend"], rel_tol=1e-3)
                                                  and math.isclose(p["binding_left"], p["left"], rel_tol=1e-3)):
        # entities spent unequally: the largest increase and the smallest ε left are not one entity's
        text = (f"spends ε ≈ {spent(p['spend'])} per entity at most; the most-spent entity ε ≈ "
                f"{spent(p['binding_spend'])} of the {left(p['binding_left'])} it has left")
    elif capped:
        text = f"spends ε ≈ {spent(p['spend'])} of the {left(p['left'])} left per entity"
    else:
        text = f"spends ε ≈ {spent(p['spend'])} per entity (no cap set)"
    if not p.get("non_private") and p.get("delta_exceeded"):
        # an ε of ∞ on a DP release needs its cause: δ, not ε, is what binds
        text += (" — basic composition's Σδ would pass half the budget's δ and a release here has no ρ before it "
                 "runs, so no accountant bounds it")
    if capped and not p.get("dp_fits", p["fits"]):
        text += f" — more than is left (cap ε = {epsilon_left(p['cap_epsilon'])}): it will be refused"
    return text


def spend_reason(preview: Mapping, plans: Sequence, identity: bool = True) -> str:
    """``preview["text"]`` (:func:`planned_charge`) and, when the spend is not the requested ε, why: these
    data were recognised as a re-export of a stored dataset (``identity``: said here; the CLI gives it a
    line of its own) and/or already spent, and releases compose to less than the sum of their ε — the
    same sentence on the dashboard and in the CLI's dry run."""
    text = preview["text"]
    if preview.get("simulation"):
        return text
    asked = [float(p.epsilon) for p in plans if not p.simulation and math.isfinite(float(p.epsilon))]
    requested = max(asked) if len(asked) == 1 else None
    spend = float(preview.get("dp_spend", preview.get("spend", 0.0)))
    after = float(preview.get("dp_after", preview.get("after", 0.0)))
    # what the entity that ends highest has spent before: its own increase, not the largest one (a fresh
    # entity adds the most, and its increase taken from another's total would state neither's spend)
    already = max(after - float(preview.get("binding_spend", spend)), 0.0)
    why = []
    if identity and preview.get("identity"):
        why.append(f"these data were recognised as a re-export: {preview['identity']}")
    binding = float(preview.get("binding_spend", spend))
    if requested is not None and spend < requested * 0.995 and already > 0:
        # (the δ at which the store composes is said by the charge text when it is not the run's)
        if math.isclose(binding, spend, rel_tol=1e-3):
            why.append(f"less than the requested ε = {requested:.3g} because it composes with the ε ≈ {already:.3g} "
                       "already spent on these data (releases compose to less than the sum of their ε)")
        else:
            # the largest increase is an entity's with less spent before (one the stored data never held:
            # below ε only by the budget's δ); the composition lowers the most-spent entity's increase
            why.append(f"the most-spent entity adds less, ε ≈ {binding:.3g}, because it composes with the "
                       f"ε ≈ {already:.3g} it has already spent (releases compose to less than the sum of their ε)")
    return text + (" — " + "; ".join(why) if why else "")


def release_cells(r: Mapping) -> tuple[str, str]:
    """(ε, charged ε) of one row of the releases list as every front end states them: a release that
    charged no entity (a reference that sends nothing) shows no ε — an ε of ∞ there would read as a
    non-private release — and says "releases nothing"."""
    from dpfed_core.privacy.odometer import _fmt as f

    nothing = not r.get("n_entities_charged")
    charged = ("simulation: not charged" if r["simulation"] else "withdrawn: 0" if r["status"] == "withdrawn" else
               "releases nothing" if nothing else ("non-private" if r["non_private"] else f(r["max_charge_epsilon"])))
    return ("—" if nothing and not r["simulation"] else f(r["epsilon"])), charged


def runs_left_text(left: Mapping | None) -> str | None:
    """What ``BudgetOdometer.runs_left`` found, as one phrase for ``budget show`` and the History page:
    how many more releases like the last operation fit under the cap (none when the next would be
    refused). None when nothing was charged yet."""
    if left is None:
        return None
    eps = left["epsilon"]
    what = f"{left['kind']} of {left['method']} at ε = {'∞' if math.isinf(eps) else format(eps, '.4g')}"
    n = left["n"]
    if n is None:
        return f"no cap set — any number of further releases like the last ({what}) is charged"
    if n <= 0:
        # "0 more … fit" read as a count, not as the refusal it announces
        return f"none — another release like the last operation ({what}, same points) would be refused under the cap"
    more = f"at least {n}" if n >= 200 else str(n)
    return f"{more} more like the last operation ({what}, same points) {'fits' if n == 1 else 'fit'} under the cap"


def basic_epsilon_note(balances: Sequence[Mapping]) -> str | None:
    """Why an entity's basic ε reads ∞ (balances as ``EntityBalance.to_dict()``): its spent δ passed half
    the guarantee's δ, where Σε bounds nothing — a reader would take ∞ for an infinite spend."""
    over = [b for b in balances if math.isinf(b["basic_epsilon"]) and not b["void"] and b["spent_delta"] > 0]
    if not over:
        return None
    top = max(over, key=lambda b: b["spent_delta"])
    n = len(over)
    return (f"basic ε is ∞ for {n} entit{'y' if n == 1 else 'ies'}: the δ spent (up to {top['spent_delta']:.3g}) "
            f"is past half the guarantee's δ ({top['guarantee_delta']:.3g}), where basic composition (Σε) bounds "
            "nothing — not an infinite spend; the zCDP ε is what holds")


def most_spent(balances: Sequence) -> tuple:
    """``(top, alike)``: the balance that has spent the most ε (None when there is none) and whether
    every one of several entities has spent exactly as much — then no one entity is "the most spent"."""
    if not balances:
        return None, False
    top = max(balances, key=lambda b: b.spent_epsilon)
    return top, len(balances) > 1 and all(b.spent_epsilon == top.spent_epsilon for b in balances)


def accountant_record(store: Store, dataset: FederatedDataset, key: str | None = None) -> dict:
    """The ``privacy.accountant`` field of a charged result document: how releases compose across
    runs, at which δ, and the most-spent entity's charge after this one."""
    from dpfed_core.privacy.accounting import ACCOUNTANT

    odo = BudgetOdometer(store)
    key = key or odo.account_key(dataset)
    bal = odo.balance(key)
    top, alike = most_spent(bal)
    ident = odo.identity(key)
    return {"across_releases": ACCOUNTANT,
            "delta": top.guarantee_delta if top else None,
            "most_spent_entity": top.entity if top else None,
            "every_entity_alike": alike,
            "spent_epsilon": top.spent_epsilon if top else 0.0,
            "basic_epsilon": top.stated_basic_epsilon if top else 0.0,
            "zcdp_epsilon": top.tight_epsilon if top else 0.0,
            "used": top.accountant if top else "none",
            # entities whose people have no overall guarantee: a non-private release touched them
            "non_private_entities": [b.entity for b in bal if b.n_non_private > 0],
            "same_people_as": ident.describe() or None}


def skip_store(store, plans: Sequence[PlannedRelease]) -> bool:
    """True when nothing is released (every plan charges no entity: ``individual``, ``random-v``), or
    when every release is a simulation and no store was chosen explicitly (no path, no
    ``$DPFED_STORE``): a simulation makes no privacy claim and never opens the home directory's store."""
    from dpfed_core.privacy.store import STORE_ENV

    if plans and all(not p.charges for p in plans):
        return True  # nothing leaves any entity (individual, random-v): no release, nothing to record
    if not plans or not all(p.simulation for p in plans):
        return False
    if isinstance(store, Store):
        return False
    return (store is None or str(store) == "") and not os.environ.get(STORE_ENV, "").strip()


# ------------------------------------------------------------------------------ charged computations
def save_result(store, kind: str, document: dict, dataset: FederatedDataset,
                reservation: Reservation | None = None, key: str | None = None) -> int:
    """Keep a result document in the store's history (kind: run | sweep | audit); returns its id."""
    key = key or (reservation.dataset_key if reservation else BudgetOdometer(store).account_key(dataset))
    return RunHistory(store).add(kind, document, dataset_key=key,
                                 operation=reservation.operation if reservation else None)


