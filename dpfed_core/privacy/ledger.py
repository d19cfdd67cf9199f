"""The privacy ledger: one row per mechanism invocation, and the run's proven (ε, δ).

Composition rules (SPEC §3):

* inside an entity, mechanisms compose **sequentially**. Every row states its own (ε, δ); a Gaussian
  row also states its zCDP ρ by OpenDP's map of the sampler that drew it. An entity's spend is the
  tighter of two valid accountings (:func:`compose`): *basic* (ε and δ add up) and *zCDP* (the ρ of
  the Gaussian rows add up — adaptively or not — and are converted to ε at the entity's remaining δ
  by OpenDP's optimal conversion; the other rows add their (ε, δ) to it). Which one held is stated
  (:meth:`PrivacyLedger.accountant`). No ε is ever split across rows in proportion;
* entities hold disjoint users, so across entities they compose in **parallel**: the run is
  (max_h ε_h, max_h δ_h)-DP with respect to adding or removing one user of one entity;
* the server's factorisation and round 2 only touch released prototypes or an entity's own data
  and release nothing, so they are post-processing and cost nothing.

A mechanism never decides on its own how much it may spend: it asks the ledger, which refuses
(:class:`~dpfed_core.errors.BudgetExceededError`) any spend that would take an entity above the
requested budget. ``ε = inf`` marks a non-private release (raw data leaves the entity).
"""
from __future__ import annotations

import math
import threading
from dataclasses import asdict, dataclass

from dpfed_core.errors import BudgetExceededError, ConfigError

#: Relative slack for floating-point sums of stage shares (e.g. 0.1 + 0.2 != 0.3).
_REL_TOL = 1e-9

#: Rows recorded by every ledger of this process (all threads). A mechanism records its row before it
#: draws, so an unchanged count proves that no noise was drawn in this process meanwhile (the odometer
#: gives back the reservation of a run that failed before its first draw).
_ROWS_RECORDED = [0]
_ROWS_LOCK = threading.Lock()


def rows_recorded() -> int:
    """How many ledger rows this process has recorded so far (every ledger, every thread)."""
    with _ROWS_LOCK:
        return _ROWS_RECORDED[0]


@dataclass(frozen=True)
class LedgerRow:
    """One mechanism invocation.

    ``sensitivity`` is in the units of the released quantity under the mechanism's norm (L1 for
    Laplace, L2 for Gaussian, utility range for the exponential mechanism); ``noise_scale`` is the
    Laplace/Gumbel scale b or the Gaussian σ. ``sampler`` says who drew the noise (OpenDP's exact
    samplers from OS entropy, or NumPy in simulation mode; see :mod:`dpfed_core.privacy.noise`).
    """

    entity: str
    stage: str
    mechanism: str
    epsilon: float
    delta: float
    sensitivity: float
    noise_scale: float
    note: str = ""
    sampler: str = ""
    rho: float | None = None

    @classmethod
    def from_record(cls, record: dict) -> "LedgerRow":
        """A row read back from :meth:`PrivacyLedger.to_records` as JSON: numbers kept as strings by
        some writers (``"inf"``) are read as floats, a missing or null number as NaN, a missing ρ as
        none. Raises KeyError, TypeError or ValueError for a record that is not a row."""
        def number(key: str) -> float:
            return float(record[key]) if record.get(key) is not None else math.nan

        rho = record.get("rho")
        return cls(str(record["entity"]), str(record["stage"]), str(record["mechanism"]), number("epsilon"),
                   number("delta"), number("sensitivity"), number("noise_scale"), str(record.get("note", "")),
                   str(record.get("sampler", "")), None if rho is None else float(rho))


BASIC = "basic composition (ε and δ add up)"
ZCDP = "zCDP composition (ρ adds up; OpenDP's zCDP → (ε, δ) conversion)"


def compose(rows, delta_budget: float) -> tuple[float, float, str]:
    """(ε, δ, accountant) of a sequence of ledger rows of one entity: the smaller ε of basic
    composition and of zCDP composition (Gaussian rows by their ρ, converted at the δ the budget
    leaves after the other rows' δ; the other rows by their (ε, δ)). Both are valid for adaptively
    chosen mechanisms, so the smaller is too (each is a valid bound on the same privacy loss)."""
    rows = list(rows)
    eps_b = sum(r.epsilon for r in rows)
    dlt_b = min(sum(r.delta for r in rows), 1.0)
    best = (eps_b, dlt_b, BASIC)
    gauss = [r for r in rows if r.rho is not None and math.isfinite(r.epsilon)]
    if gauss and math.isfinite(eps_b):
        from dpfed_core.privacy.noise import zcdp_epsilon

        other = [r for r in rows if r.rho is None or not math.isfinite(r.epsilon)]
        d_other = sum(r.delta for r in other)
        d_conv = float(delta_budget) - d_other
        if d_conv > 0:
            eps_z = sum(r.epsilon for r in other) + zcdp_epsilon(sum(r.rho for r in gauss), d_conv)
            if eps_z < eps_b:
                best = (eps_z, min(d_other + d_conv, 1.0), ZCDP)
    return best


#: δ at or above this is refused: (ε, δ)-DP with δ ≥ 1/100 allows a mechanism that publishes one
#: user in a hundred verbatim, which no reading of "private" supports.
DELTA_MAX = 1e-2


def validate_budget(epsilon: float, delta: float) -> None:
    """Raise a friendly :class:`ConfigError` unless 0 < ε ≤ inf and 0 ≤ δ < :data:`DELTA_MAX`
    (for a private ε; a non-private run ignores δ)."""
    try:
        epsilon = float(epsilon)
        delta = float(delta)
    except (TypeError, ValueError):
        raise ConfigError(f"ε and δ must be numbers, got ε={epsilon!r}, δ={delta!r}") from None
    if math.isnan(epsilon) or epsilon <= 0:
        raise ConfigError(
            f"ε must be a positive number (or inf for a non-private run), got {epsilon}; "
            "typical private values are 0.1 to 10", param="epsilon"
        )
    if math.isnan(delta) or not 0 <= delta < 1:
        raise ConfigError(f"δ must be in [0, 1), got {delta}; a usual choice is 1e-6 or 1/(10·n)", param="delta")
    if math.isfinite(epsilon) and delta >= DELTA_MAX:
        raise ConfigError(
            f"δ = {delta:g} is too large for a privacy guarantee: (ε, δ)-DP with δ ≥ {DELTA_MAX:g} "
            "permits publishing about one user in a hundred in the clear. Set δ below "
            f"{DELTA_MAX:g} (e.g. delta=1e-6): a usual choice is 1e-6 or well below 1/(number of users of "
            "the smallest entity)", param="delta")


def delta_warning(delta: float, smallest_noisy_size: float | None) -> str | None:
    """A warning when δ exceeds 1/n̂ of the smallest entity (n̂ a *released* noisy size, never a true
    count — so the warning itself leaks nothing): with δ > 1/n the guarantee tolerates a mechanism
    that publishes one of the entity's users outright. ``None`` when there is nothing to say."""
    if smallest_noisy_size is None or not math.isfinite(float(smallest_noisy_size)) or delta <= 0:
        return None
    n_hat = max(float(smallest_noisy_size), 1.0)
    if delta > 1.0 / n_hat:
        return (f"δ = {delta:g} is above 1/n̂ = {1.0 / n_hat:.2g} of the smallest entity (released noisy "
                f"size ≈ {n_hat:.0f}): the guarantee then tolerates publishing one of its users; "
                "lower δ")
    return None


class PrivacyLedger:
    """Ledger of one run: every entity gets the same requested budget (ε, δ).

    Parameters
    ----------
    epsilon : float
        Requested ε per entity (and therefore for the run). ``math.inf`` = non-private.
    delta : float
        Requested δ per entity.

    Attributes
    ----------
    simulation : bool
        Set by the protocol when the noise was reproducible from the seed (simulation mode): the
        rows then account for a mechanism whose noise an observer who knows the seed can remove,
        so the run makes no privacy claim.
    """

    def __init__(self, epsilon: float, delta: float = 0.0) -> None:
        validate_budget(epsilon, delta)
        self.epsilon = float(epsilon)
        self.delta = float(delta)
        self.rows: list[LedgerRow] = []
        self.simulation = False

    # ------------------------------------------------------------------ spending
    def spend(
        self,
        entity: str,
        stage: str,
        mechanism: str,
        epsilon: float,
        delta: float = 0.0,
        sensitivity: float = math.nan,
        noise_scale: float = math.nan,
        note: str = "",
        sampler: str = "",
        rho: float | None = None,
    ) -> LedgerRow:
        """Record one invocation, refusing it if the entity's total (:func:`compose`) would exceed
        the request. ``rho``: the invocation's zCDP ρ (Gaussian mechanisms), if it has one."""
        if epsilon < 0 or delta < 0 or math.isnan(epsilon) or math.isnan(delta):
            raise BudgetExceededError(f"{stage}: a spend must be non-negative, got ε={epsilon}, δ={delta}")
        if rho is not None and math.isnan(rho):
            rho = None  # a row without a ρ (rows read back from JSON carry NaN for a missing value)
        if rho is not None and rho < 0:
            raise BudgetExceededError(f"{stage}: ρ must be non-negative, got {rho}")
        row = LedgerRow(entity, stage, mechanism, float(epsilon), float(delta),
                        float(sensitivity), float(noise_scale), note, sampler,
                        None if rho is None else float(rho))
        if not math.isinf(self.epsilon):
            before = self.spent(entity)
            eps_h, delta_h, _ = compose([*self._rows_of(entity), row], self.delta)
            if math.isinf(epsilon) or eps_h > self.epsilon * (1 + _REL_TOL):
                raise BudgetExceededError(
                    f"entity {entity!r}, stage {stage!r}: spending ε={epsilon:.6g} on top of "
                    f"{before[0]:.6g} exceeds the budget ε={self.epsilon:.6g}"
                )
            if delta_h > self.delta * (1 + _REL_TOL) + 1e-300:
                raise BudgetExceededError(
                    f"entity {entity!r}, stage {stage!r}: spending δ={delta:.3g} on top of "
                    f"{before[1]:.3g} exceeds the budget δ={self.delta:.3g}"
                )
        with _ROWS_LOCK:
            _ROWS_RECORDED[0] += 1
        self.rows.append(row)
        return row

    def for_entity(self, entity: str) -> "EntityLedger":
        """A view that spends on behalf of one entity."""
        return EntityLedger(self, entity)

    # ------------------------------------------------------------------ accounting
    def rows_of(self, entity: str) -> list[LedgerRow]:
        """The entity's rows in the order they were spent (a list of its own)."""
        return self._rows_of(entity)

    def _rows_of(self, entity: str) -> list[LedgerRow]:
        """The entity's rows in order, from an index kept up to date with ``rows`` (appended to only):
        scanning every row for every spend would make a federation's accounting quadratic in its
        entities (10,000 one-user sites: 30,000 scans of up to 30,000 rows)."""
        index = self.__dict__.get("_by_entity")
        if index is None or index[0] is not self.rows or index[1] > len(self.rows):
            index = self.__dict__["_by_entity"] = [self.rows, 0, {}]
        rows, done, by = index
        for r in rows[done:]:
            by.setdefault(r.entity, []).append(r)
        index[1] = len(rows)
        return list(by.get(entity, ()))

    def spent(self, entity: str) -> tuple[float, float]:
        """(ε, δ) spent so far by one entity: the tighter of basic and zCDP composition (:func:`compose`)."""
        eps, dlt, _ = compose(self._rows_of(entity), self.delta)
        return eps, dlt

    def accountant(self, entity: str | None = None) -> str:
        """Which composition gave an entity's spend (the worst entity's when ``entity`` is None)."""
        if entity is None:
            per = [(self.spent(e)[0], e) for e in self.entities()]
            if not per:
                return BASIC
            entity = max(per)[1]
        return compose(self._rows_of(entity), self.delta)[2]

    def entities(self) -> list[str]:
        return list(dict.fromkeys(r.entity for r in self.rows))

    def guarantee(self) -> tuple[float, float]:
        """The run's proven (ε, δ): parallel composition (max) over entities of their sums."""
        per = [self.spent(e) for e in self.entities()]
        if not per:
            return 0.0, 0.0
        return max(p[0] for p in per), max(p[1] for p in per)

    @property
    def is_private(self) -> bool:
        return math.isfinite(self.guarantee()[0])

    def to_records(self) -> list[dict]:
        """Ledger rows as plain dicts (JSON-ready; inf is kept as float inf)."""
        return [asdict(r) for r in self.rows]

    def per_entity(self) -> list[dict]:
        """Each entity's composed spend and the accountant that gave it (JSON-ready)."""
        out = []
        for e in self.entities():
            eps, dlt, how = compose(self._rows_of(e), self.delta)
            out.append({"entity": e, "epsilon": eps, "delta": dlt, "accountant": how})
        return out

    def per_stage(self) -> list[dict]:
        """Spend per (entity, stage), in first-seen order."""
        acc: dict[tuple[str, str], list[float]] = {}
        for r in self.rows:
            a = acc.setdefault((r.entity, r.stage), [0.0, 0.0, 0])
            a[0] += r.epsilon
            a[1] += r.delta
            a[2] += 1
        return [
            {"entity": e, "stage": s, "epsilon": v[0], "delta": v[1], "invocations": int(v[2])}
            for (e, s), v in acc.items()
        ]


class EntityLedger:
    """Spending view of a :class:`PrivacyLedger` bound to one entity."""

    def __init__(self, ledger: PrivacyLedger, entity: str) -> None:
        self.ledger = ledger
        self.entity = entity

    @property
    def epsilon(self) -> float:
        """The entity's whole requested ε."""
        return self.ledger.epsilon

    @property
    def delta(self) -> float:
        return self.ledger.delta

    def remaining(self) -> tuple[float, float]:
        eps, dlt = self.ledger.spent(self.entity)
        return self.ledger.epsilon - eps, self.ledger.delta - dlt

    def spend(self, stage: str, mechanism: str, epsilon: float, delta: float = 0.0,
              sensitivity: float = math.nan, noise_scale: float = math.nan, note: str = "",
              sampler: str = "", rho: float | None = None) -> LedgerRow:
        return self.ledger.spend(self.entity, stage, mechanism, epsilon, delta,
                                 sensitivity, noise_scale, note, sampler, rho)
