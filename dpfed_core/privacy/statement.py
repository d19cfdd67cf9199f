"""How a run's privacy guarantee is stated: the same words in the JSON result,
the dashboard and the report.

A guarantee is computed from the ledger (sequential composition within an entity, parallel across
entities); it is a *guarantee (ledger)*, not a proof about the deployment, and it holds only under
the assumptions listed with it. A simulation run states no guarantee at all.
"""
from __future__ import annotations

import math

from dpfed_core.privacy.noise import PRODUCTION_SAMPLER_LABEL, SIMULATION_LABEL

#: The name of the (ε, δ) computed from the ledger, everywhere it is shown.
GUARANTEE_NAME = "guarantee (ledger)"

#: Shown wherever a float sampler drew the noise (simulation mode: NumPy's inverse-CDF Laplace and
#: Box–Muller Gaussian on doubles, open to floating-point attacks, Mironov 2012).
FLOAT_SAMPLER_NOTE = ("Some noise was drawn by NumPy's floating-point samplers (simulation mode, or a "
                      "comparison system's own sampling steps): not hardened against floating-point "
                      "attacks (Mironov 2012); dpfed's mechanisms in production use OpenDP's exact samplers.")

#: Sampler label of a ledger row that does not state its sampler (the comparison systems).
UNSTATED_SAMPLER = "not stated (comparison system; NumPy floating-point steps)"


def assumptions(samplers: set[str] | list[str], simulation: bool) -> list[str]:
    """The assumptions under which the ledger's (ε, δ) holds, in plain words."""
    out = [
        "Privacy unit: one user of one entity (all of that user's row); neighbouring datasets add or "
        "remove one user. Entities hold disjoint users (a person in two entities counts twice).",
        "The noise is secret: " + ("it is NOT — this is a simulation run whose noise anyone who knows the "
                                   "seed can reproduce." if simulation else
                                   "drawn by OpenDP's exact samplers (discrete Laplace for counts, exact "
                                   "float Laplace/Gaussian on a 2^-40 grid, Gumbel selection) from the "
                                   "operating system's entropy, not from the seed."),
        "Bounds (Λ∞, Λ, support), the item catalogue and the entity list are public inputs or DP releases "
        "charged to this ledger; none is read off the private data.",
        "The guarantee covers this one release. Every further release of the same data (a re-run, a sweep "
        "point, an audit) spends more budget; the budget odometer accounts for them.",
        "The server and round 2 only post-process what the entities released — their prototypes, or a "
        "summable method's noisy sum of statistics (no further cost).",
    ]
    if any(s and s != PRODUCTION_SAMPLER_LABEL for s in samplers):
        out.append(FLOAT_SAMPLER_NOTE)
    return out


#: Significant digits of every ε shown (CLI, dashboard, report): one precision, so they never disagree.
EPSILON_DIGITS = 4


def _rounded(eps: float, digits: int, up: bool) -> str:
    """``eps`` at ``digits`` significant digits rounded toward the safe side, ``up`` or down; a value
    within a relative 1e-9 of its rounding to nearest (on the side being rounded from) is that rounding:
    floating-point residue is no privacy loss. ∞ for the non-private limit."""
    x = float(eps)
    if not math.isfinite(x):
        return "∞"
    nearest = float(f"{x:.{digits}g}")
    if x <= 0 or (nearest >= x * (1 - 1e-9) if up else nearest <= x * (1 + 1e-9)):
        return f"{nearest:.{digits}g}"
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    units = math.ceil(x / step * (1 - 1e-12)) if up else math.floor(x / step * (1 + 1e-12))
    return f"{units * step:.{digits}g}"


def epsilon_that_holds(eps: float, digits: int = EPSILON_DIGITS) -> str:
    """ε for people at ``digits`` significant digits, rounded *up*: a shown ε is never below the ε that
    holds (0.92034 → 0.9204, where rounding to nearest said 0.9203); the float 0.1 or a ledger's
    0.69999997 for 0.7 read as their rounding. What is spent is shown so too."""
    return _rounded(eps, digits, up=True)


def epsilon_left(eps: float, digits: int = EPSILON_DIGITS) -> str:
    """ε of budget for people (a cap, what is left of it) at ``digits`` significant digits, rounded
    *down*: never more budget shown than there is (9.0796 left → 9.079)."""
    return _rounded(eps, digits, up=False)


def statement(eps: float, delta: float, simulation: bool) -> str:
    """One line: "(ε, δ)-DP … — guarantee (ledger)", or the simulation / non-private label."""
    if not math.isfinite(eps):
        return "non-private (ε = ∞): no differential-privacy guarantee"
    if simulation:
        return f"{SIMULATION_LABEL} (configured budget ({eps:.4g}, {delta:.3g}))"
    return f"({epsilon_that_holds(eps)}, {delta:.3g})-DP per user of each entity — {GUARANTEE_NAME}"


def _eps(x) -> str:
    return epsilon_that_holds(float(x) if x not in (None, "inf") else float("inf"))


def _num(x) -> str:
    return "—" if x is None else f"{float(x):.3g}"


def trust_model_text(privacy: dict) -> str:
    """The trust model in one sentence for a compliance officer: secure aggregation or not, where the
    sum was formed, and the weaker guarantee against the server colluding with every other entity."""
    t = privacy.get("trust")
    if not t:
        return ("each entity's release goes to the server as it is (no secure aggregation); the guarantee "
                "holds against the server and against everyone else")
    against = t.get("against_server_and_other_entities", {})
    coal = _eps(against.get("epsilon"))
    if t.get("aggregation") == "secure":
        where = ("formed in-process (a simulation of secure aggregation; the cryptographic secure sum runs in "
                 "the Flower deployment)" if t.get("in_process") else "formed by Flower's SecAgg+")
        return (f"secure aggregation: the server learns only the sum of the entities' releases, {where}; "
                f"against the server colluding with all other entities each entity's own noise share gives "
                f"ε = {coal} (δ = {_num(against.get('delta'))})")
    return ("no secure aggregation: the server sees every entity's release; the guarantee is the same against "
            f"the server and any coalition (ε = {coal})")


#: The assumption stated instead of "the entity list is a public input" when the user accepted an
#: entity list read from the private data (``entities_from_data``).
ENTITY_FROM_DATA = ("The entity list was read from the private data (accepted with entities_from_data), not "
                    "declared: membership of an entity is NOT protected — which entities exist and take part "
                    "reveals that they have users (an entity with one user loses that user's privacy).")


def entity_assumptions(items: list[str]) -> list[str]:
    """``items`` (from :func:`assumptions`) for a run whose entity list was read from the data: the
    public-inputs line no longer counts the entity list, and the exception is stated."""
    out = [x.replace(", the item catalogue and the entity list are public inputs",
                     " and the item catalogue are public inputs") for x in items]
    return [*out, ENTITY_FROM_DATA]
