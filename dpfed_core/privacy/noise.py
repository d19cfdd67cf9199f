"""Where a run's randomness comes from.

A DP guarantee holds only if the noise is unknown to the observer. A seed that fixes the noise and
is printed in the report lets anyone who reads the server's inbox subtract the noise again. So:

* **production** (default): every run of a DP method draws its randomness — the mechanisms' noise
  and the method's own random choices — from a fresh :class:`numpy.random.SeedSequence` seeded by
  the operating system's entropy (``SeedSequence()`` reads 128 bits from ``secrets``). The run's
  seed still fixes the split and every non-private method, so comparisons stay paired.
* **simulation** (explicit switch: ``RunConfig(simulation=True)``, CLI ``--simulation``, the
  dashboard's "simulation" toggle): the noise is a function of the seed, reproducible for tests and
  benchmarks, and every output says so with :data:`SIMULATION_LABEL`. Such a run makes no privacy
  claim.

Samplers (who draws the mechanism noise):

* production — :class:`OpenDPSampler`: the exact samplers of OpenDP (pinned ``opendp``), which take
  their randomness from the operating system's CSPRNG and never form a floating-point inverse CDF
  (Mironov 2012): discrete Laplace on integer counts; OpenDP's float Laplace / Gaussian on real
  sums (input rounded to the grid 2^k, k = :data:`FLOAT_GRID_K`, discrete noise in grid units; its
  privacy map charges the rounding); Gumbel report-noisy-max / one-shot top-k for selections.
  One OpenDP call per vector (vector domains), never per element; a long vector is cut into one
  slice per core, each drawn by its own OpenDP call on a thread of its own (:func:`_sliced_draw`).
* simulation — :class:`NumpySampler`: the same distributions drawn from the seeded NumPy generator
  (continuous Laplace/Gaussian instead of the 2^-40 grid), reproducible, no privacy claim.

A private method's generator in production is a :class:`SecureGenerator` (a NumPy generator seeded
from OS entropy, used only for the method's data-independent random choices — projections, grid
shifts, tie-breaks); :func:`sampler_for` maps it to OpenDP. Any plain generator means simulation.
"""
from __future__ import annotations

import functools
import math
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

#: The label every output of a simulation run carries (ledger, JSON, dashboard, report).
SIMULATION_LABEL = "simulation: noise reproducible, no privacy claim"

#: Ledger label of noise drawn in production.
PRODUCTION_SAMPLER_LABEL = "OpenDP exact samplers, OS entropy"

#: Stream tag of a method's randomness under a seed (kept from the first build, so simulation runs
#: reproduce the numbers of the committed benchmarks).
METHOD_STREAM = 0x3E7



class SecureGenerator(np.random.Generator):
    """A NumPy generator seeded from OS entropy that marks its owner as a *production* DP release:
    mechanisms given one draw their noise from OpenDP (:func:`sampler_for`). It survives
    ``spawn`` and pickling (worker processes) as the same type."""

    def __init__(self, bit_generator=None) -> None:
        super().__init__(np.random.PCG64(np.random.SeedSequence()) if bit_generator is None else bit_generator)

    def __reduce__(self):
        return (SecureGenerator, (self.bit_generator,))


class SumNoise:
    """The Gaussian noise of one secure sum's ``n_shares`` shares, drawn once on the sum, for a process
    that forms the sum itself (the in-process run: its "entities" never send their shares anywhere).

    In a deployment each of the H entities adds N(0, s²) to its own share (s = σ/√(H − d)), so that
    the sum carries noise of variance H·s² ≥ σ² and no share is ever seen alone. Where one process
    forms the sum, only the sum is ever released: here the entities' exact values (what each would
    add its noise to) are summed, and the sum gets one draw of the production sampler at scale s·√H —
    OpenDP's Gaussian on the sum, its input rounded to OpenDP's grid and its rounding charged by
    OpenDP's map, noise of variance H·s² ≥ σ². Sensitivity: the summed values move by at most the
    sensitivity each entity's ledger row records (that of the sum); privacy map: OpenDP's at s·√H ≥ σ,
    monotone in the scale, so the rows — charged per entity, on σ, as before — hold unchanged, while
    the sampler draws one vector per release instead of H. Not the same distribution as the H shares'
    rounded draws added up (a deployment's sum), only at least as much noise.

    Each share's ``calls``-th Gaussian draw (every entity makes the same sequence, of public shapes)
    adds its exact values to that release's running sum and gets zeros back; the last of the
    ``n_shares`` gets the noisy sum. So every other share is exactly zero and the released sum is
    OpenDP's output, post-processed (divided by public weights, rounded to the secure sum's grid): no
    bit of any entity's exact values reaches it outside OpenDP's mechanism. Only for shares that apply
    public linear maps and rounding alone to their draw; :meth:`check_complete` after the shares
    refuses a release some share never reached."""

    def __init__(self, n_shares: int) -> None:
        import threading

        if int(n_shares) < 1:
            raise ValueError(f"a sum of {n_shares} shares has no noise to draw")
        self.n_shares = int(n_shares)
        self._seen: dict[int, dict] = {}
        self._lock = threading.Lock()
        self.draws = 0  # vectors drawn: one per release

    def gaussian(self, rng: "PooledGenerator", sampler, values, scale: float) -> np.ndarray:
        """Zeros for every share of this release but the last, which gets the sum of all the shares'
        ``values`` plus N(0, n·scale²) (each share's own ``scale`` = s)."""
        v = np.asarray(values, dtype=np.float64)
        call, rng.calls = rng.calls, rng.calls + 1
        with self._lock:
            seen = self._seen.setdefault(call, {"shape": v.shape, "scale": float(scale), "shares": 0,
                                                "sum": np.zeros(v.shape)})
            if (seen["shape"], seen["scale"]) != (v.shape, float(scale)):
                raise RuntimeError(f"shares of one release differ in shape or noise scale ({seen['shape']}, "
                                   f"{seen['scale']} against {v.shape}, {float(scale)}); their noise cannot be drawn "
                                   "once for the sum")
            if seen["shares"] >= self.n_shares:
                raise RuntimeError(f"release {call} has more than the {self.n_shares} shares its noise was drawn for")
            seen["shares"] += 1
            seen["sum"] += v
            last = seen["shares"] == self.n_shares
            total = seen.pop("sum") if last else None
            self.draws += int(last)
        if last:
            return sampler.gaussian(total, float(scale) * math.sqrt(self.n_shares))
        return np.zeros(v.shape)

    def check_complete(self) -> None:
        """Refuse a release whose noise was never drawn: some share did not reach it (its sum would be
        released as zeros)."""
        short = {call: seen["shares"] for call, seen in self._seen.items() if seen["shares"] != self.n_shares}
        if short:
            raise RuntimeError(f"releases {sorted(short)} were reached by {sorted(set(short.values()))} of the "
                               f"{self.n_shares} shares their noise is drawn for; nothing of them is released")


class PooledGenerator(SecureGenerator):
    """An entity's production generator whose Gaussian shares draw through a :class:`SumNoise` (its
    other random choices are its own stream's, as with a plain :class:`SecureGenerator`). It pickles,
    copies and spawns as plain :class:`SecureGenerator` streams: a share computed from those draws its
    own noise."""

    def __init__(self, bit_generator, noise: SumNoise) -> None:
        super().__init__(bit_generator)
        self.sum_noise = noise
        self.calls = 0

    def spawn(self, n_children: int) -> list[SecureGenerator]:
        return [SecureGenerator(g) for g in self.bit_generator.spawn(n_children)]


def pooled_streams(rngs) -> list[PooledGenerator]:
    """The streams of one sum's shares, one per entity, that draw its noise once through one
    :class:`SumNoise` (each keeps its own state for every other random choice). Production streams
    only: a simulation's shares keep their own seeded draws."""
    rngs = list(rngs)
    if not rngs or any(is_simulation(r) for r in rngs):
        raise ValueError("a sum's noise is drawn once only from production streams")
    pool = SumNoise(len(rngs))
    return [PooledGenerator(r.bit_generator, pool) for r in rngs]


def method_generator(seed: int, *, private: bool, simulation: bool) -> np.random.Generator:
    """The generator a method draws from.

    seed : the run's public seed. private : the method spends privacy budget. simulation : the
    explicit reproducible-noise switch. A private method outside simulation gets a
    :class:`SecureGenerator` (OS entropy; its mechanisms sample with OpenDP); a non-private
    method, or any method in simulation, gets a stream fixed by the seed.
    """
    if private and not simulation:
        return SecureGenerator()
    return np.random.default_rng([seed, METHOD_STREAM])


def noise_provenance(private: bool, simulation: bool) -> str:
    """One line for result documents: where the noise of this run came from."""
    if not private:
        return "no noise (non-private method); randomness seeded by the run's seed"
    if simulation:
        return SIMULATION_LABEL
    return ("OpenDP exact samplers, operating-system entropy (fresh per run; not reproducible "
            "from the seed)")


#: Grid 2^k of OpenDP's float mechanisms. k = −40 (≈ 9e-13) is far below any released value's
#: meaning and ~3× faster than OpenDP's default exact grid; the map charges the rounding.
FLOAT_GRID_K = -40


@functools.lru_cache(maxsize=1)
def _dp():
    """The parts of OpenDP the mechanisms use, as one namespace (``dp.m``, ``dp.c``, domains, metrics,
    measures). Not ``opendp.prelude``: it also imports OpenDP's scikit-learn extras, which pull in
    scikit-learn, SciPy's stats and pandas — seconds of start-up no draw needs."""
    from types import SimpleNamespace

    from opendp import combinators, domains, measurements, measures, metrics, mod, typing

    mod.enable_features("contrib")
    return SimpleNamespace(m=measurements, c=combinators, i64=typing.i64, **{
        name: getattr(module, name) for module, names in (
            (domains, ("atom_domain", "vector_domain", "map_domain")),
            (metrics, ("absolute_distance", "l1_distance", "l2_distance", "linf_distance", "l01inf_distance")),
            (measures, ("max_divergence", "zero_concentrated_divergence")))
        for name in names})


def _float_space(size: int, metric: str):
    dp = _dp()
    dom = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=int(size))
    return dom, (dp.l1_distance(T=float) if metric == "l1" else dp.l2_distance(T=float))


@functools.lru_cache(maxsize=4096)
def laplace_float_epsilon(scale: float, sensitivity: float, size: int) -> float:
    """OpenDP's privacy map of its float Laplace on ``size`` coordinates: ε for L1 sensitivity Δ
    (includes the rounding to the grid 2^k)."""
    dp = _dp()
    meas = dp.m.make_laplace(*_float_space(size, "l1"), scale=float(scale), k=FLOAT_GRID_K)
    return float(meas.map(float(sensitivity)))


@functools.lru_cache(maxsize=4096)
def gaussian_float_delta(scale: float, sensitivity: float, size: int, epsilon: float) -> float:
    """OpenDP's privacy map of its float Gaussian on ``size`` coordinates: δ at ε for L2
    sensitivity Δ (zCDP ρ, converted to (ε, δ) by OpenDP's optimal zCDP → approx-DP conversion;
    includes the rounding to the grid 2^k)."""
    dp = _dp()
    meas = dp.c.make_zCDP_to_approxDP(
        dp.m.make_gaussian(*_float_space(size, "l2"), scale=float(scale), k=FLOAT_GRID_K))
    return float(meas.map(float(sensitivity)).delta(float(epsilon)))


@functools.lru_cache(maxsize=4096)
def noisy_top_k_rho(k: int, scale: float, sensitivity: float, monotone: bool) -> float:
    """OpenDP's privacy map of the Gumbel report-noisy-top-k it samples (``make_noisy_top_k`` with
    the zero-concentrated measure): ρ at ℓ∞ sensitivity Δ — k·(cΔ/β)²/8 with c = 1 for monotone
    utilities, 2 otherwise (the exponential mechanism is ε²/8-zCDP, Cesar & Rogers 2021)."""
    dp = _dp()
    space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float, monotonic=monotone))
    meas = dp.m.make_noisy_top_k(*space, dp.zero_concentrated_divergence(), k=int(k), scale=float(scale))
    return float(meas.map(float(sensitivity)))


@functools.lru_cache(maxsize=256)
def laplace_threshold(scale: float, threshold: int):
    """OpenDP's ``make_laplace_threshold`` on integer counts keyed by integers, under the (ℓ0, ℓ1, ℓ∞)
    distance: partition selection (its noise is discrete Laplace; its map gives (ε, δ))."""
    dp = _dp()
    dom = dp.map_domain(dp.atom_domain(T=dp.i64), dp.atom_domain(T=dp.i64))
    metric = dp.l01inf_distance(dp.absolute_distance(T=dp.i64))
    return dp.m.make_laplace_threshold(dom, metric, scale=float(scale), threshold=int(threshold))


@functools.lru_cache(maxsize=4096)
def gaussian_float_rho(scale: float, sensitivity: float, size: int) -> float:
    """OpenDP's privacy map of its float Gaussian on ``size`` coordinates: the zCDP ρ at L2
    sensitivity Δ (includes the rounding to the grid 2^k). ρ's of any sequence of such releases —
    chosen adaptively or not — add up (zCDP composition, Bun & Steinke 2016, Lemma 2.3)."""
    dp = _dp()
    meas = dp.m.make_gaussian(*_float_space(size, "l2"), scale=float(scale), k=FLOAT_GRID_K)
    return float(meas.map(float(sensitivity)))


@functools.lru_cache(maxsize=4096)
def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε at δ of a ρ-zCDP mechanism by OpenDP's optimal zCDP → approximate-DP conversion
    (Canonne, Kamath & Steinke 2020): the conversion of :func:`gaussian_float_delta`, for a total ρ.
    A discrete Gaussian on the integers at sensitivity 1 is exactly ρ-zCDP with σ = 1/√(2ρ); its
    conversion is the conversion of ρ (σ rounded down by 1e-12 so ρ is never under-stated)."""
    if rho <= 0:
        return 0.0
    if not 0 < delta < 1:
        return math.inf
    dp = _dp()
    scale = (1.0 / math.sqrt(2.0 * rho)) * (1 - 1e-12)
    meas = dp.c.make_zCDP_to_approxDP(dp.m.make_gaussian(dp.atom_domain(T=int), dp.absolute_distance(T=int),
                                                         scale=scale))
    try:
        return float(meas.map(1).epsilon(float(delta)))
    except Exception:  # OpenDP refuses a conversion that overflows: no finite ε at this δ
        return math.inf


@functools.lru_cache(maxsize=4096)
def zcdp_rho_for_epsilon(epsilon: float, delta: float) -> float:
    """The largest ρ (to 1e-9 relative, rounded down) whose OpenDP conversion is (ε, δ):
    ``zcdp_epsilon(ρ, δ) ≤ ε`` — the zCDP budget of several Gaussian releases that must together
    be (ε, δ)-DP."""
    if math.isinf(epsilon):
        return math.inf
    if not (epsilon > 0 and 0 < delta < 1):
        return 0.0
    # Bracket: the classic conversion ε = ρ + 2√(ρ ln(1/δ)) is looser than OpenDP's optimal one, so
    # its ρ is a lower end; doubling finds the upper end in one or two steps. Brent's method then
    # needs ~10 conversions where bisection from [0, 1] needed ~36 (0.7 s on a loaded node, once
    # per share in a deployment, whose processes start with empty caches).
    root_log = math.sqrt(math.log(1.0 / delta))
    lo = (math.sqrt(root_log ** 2 + epsilon) - root_log) ** 2
    if zcdp_epsilon(lo, delta) > epsilon:  # guard: never start above the answer
        lo = 0.0
    hi = max(2.0 * lo, 1e-12)
    while zcdp_epsilon(hi, delta) <= epsilon:
        lo, hi = hi, hi * 2.0
        if hi > 1e12:
            return lo
    if lo > 0:
        from scipy.optimize import brentq  # deferred: only a calibration needs it

        rho = brentq(lambda r: zcdp_epsilon(r, delta) - epsilon, lo, hi, xtol=1e-300, rtol=1e-10)
        # rounded down: the largest ρ found whose conversion is within ε
        for _ in range(60):
            if zcdp_epsilon(rho, delta) <= epsilon:
                return max(rho, lo)
            rho *= 1 - 1e-10
        return lo
    while hi - lo > 1e-9 * hi:  # no usable lower end (tiny ε): plain bisection
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if zcdp_epsilon(mid, delta) <= epsilon else (lo, mid)
    return lo


#: Coordinates assumed when a Gaussian σ is planned before the size of the vector is known: OpenDP's
#: map charges the rounding to the grid 2^k through the size, so a σ planned at this bound is valid
#: for any vector up to 2^31 coordinates (σ larger by ~4e-8 relative); each ledger row then records ρ
#: by the map at the vector's actual size.
PLANNING_SIZE = 2 ** 31 - 1


@functools.lru_cache(maxsize=4096)
def gaussian_float_sigma_for_rho(rho: float, sensitivity: float, size: int = PLANNING_SIZE) -> float:
    """The smallest σ whose OpenDP float-Gaussian map at L2 sensitivity Δ on ``size`` coordinates is
    ≤ ρ (ρ(σ) = Δ'²/2σ², Δ' the sensitivity with the rounding: σ = √(ρ(1)/ρ), rounded up)."""
    if math.isinf(rho):
        return 0.0
    if rho <= 0:
        raise ValueError(f"ρ must be positive, got {rho}")
    sigma = math.sqrt(gaussian_float_rho(1.0, sensitivity, size) / rho) * (1 + 1e-12)
    step = 1e-12
    while gaussian_float_rho(sigma, sensitivity, size) > rho:  # guard the float arithmetic
        # the first steps are float residue; a step that doubles ends in ~40 steps even if the
        # estimate above were far off, where a fixed 1e-12 would loop for ever
        sigma *= 1 + step
        step *= 2
    return sigma


def _finite_index(u: np.ndarray) -> np.ndarray:
    idx = np.flatnonzero(np.isfinite(u))
    if idx.size == 0:
        raise ValueError("no finite utility to choose from")
    return idx


#: Coordinates below which a vector is drawn on the calling thread alone, and the most one OpenDP
#: call draws. OpenDP's exact samplers cost 11–16 µs a coordinate whatever the scale or grid
#: (measured 2026-11-26, opendp 0.16: Gaussian at k = −40, −20, −10 and discrete Gaussian on
#: integers alike), so 2^15 coordinates are ~0.4 CPU-s, against ~0.1 ms to start a thread or to
#: build a measurement: above this size a second core pays many times over.
PARALLEL_MIN_DRAWS = 2 ** 15


def draw_workers(size: int) -> int:
    """How many slices a vector of ``size`` coordinates is drawn in: one per core this process may
    run on (``os.sched_getaffinity``), each slice at least :data:`PARALLEL_MIN_DRAWS` long."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, min(cores, int(size) // PARALLEL_MIN_DRAWS))


def _sliced_draw(flat: np.ndarray, measurement: Callable[[int], object], dtype) -> np.ndarray:
    """``measurement(n)(x)`` for the flat vector ``flat``, drawn in :func:`draw_workers` slices, each
    slice in calls of at most :data:`PARALLEL_MIN_DRAWS` coordinates.

    Why this is the same mechanism: OpenDP's vector Laplace / Gaussian add independent noise to
    each coordinate (after the same rounding to the grid), so noising the pieces by separate calls
    of the same measurement on their own lengths gives the whole vector the same distribution; each
    call takes fresh OS entropy. The privacy map is not computed here: the ledger row keeps the map
    of the whole vector (:mod:`dpfed_core.privacy.mechanisms`).

    Why pieces: OpenDP takes and returns Python lists (~32 bytes a coordinate each way), so a
    180,000-coordinate release held ~12 MB of lists at once; pieces of 2^15 hold ~2 MB a thread.

    Why threads and not processes: OpenDP's Python binding calls its Rust library through
    ``ctypes.cdll``, which releases the GIL for the whole call, so the slices run on separate cores
    with no start-up, no pickling, and nothing that could outlive the run (the pool is shut down
    before this returns, also on error)."""
    n = int(flat.size)
    out = np.empty(n, dtype=dtype)

    def draw(a: int, b: int) -> None:
        for lo in range(a, b, PARALLEL_MIN_DRAWS):
            hi = min(b, lo + PARALLEL_MIN_DRAWS)
            out[lo:hi] = measurement(hi - lo)(flat[lo:hi].tolist())

    workers = draw_workers(n)
    if workers == 1:
        draw(0, n)
        return out
    cuts = np.linspace(0, n, workers + 1).astype(np.int64)
    with ThreadPoolExecutor(max_workers=workers - 1, thread_name_prefix="opendp-draw") as pool:
        rest = [pool.submit(draw, int(a), int(b)) for a, b in zip(cuts[1:-1], cuts[2:])]
        draw(int(cuts[0]), int(cuts[1]))  # the calling thread draws a slice too
        for f in rest:
            f.result()  # re-raises a worker's error here
    return out


class OpenDPSampler:
    """Production sampler: OpenDP, OS entropy, exact. Stateless; one OpenDP call per vector (per
    slice of a long vector, :func:`_sliced_draw`)."""

    simulation = False

    def discrete_laplace(self, values, scale: float) -> np.ndarray:
        """values (any shape, integers) + discrete Laplace(scale) noise, as int64."""
        v = np.asarray(values)
        if scale == 0 or v.size == 0:
            return v.astype(np.int64)
        dp = _dp()
        meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=int)), dp.l1_distance(T=int),
                                 scale=float(scale))
        return _sliced_draw(v.astype(np.int64).ravel(), lambda n: meas, np.int64).reshape(v.shape)

    def laplace(self, values, scale: float) -> np.ndarray:
        v = np.asarray(values, dtype=np.float64)
        if scale == 0 or v.size == 0:
            return v.copy()
        make = _dp().m.make_laplace
        return _sliced_draw(v.ravel(), lambda n: make(*_float_space(n, "l1"), scale=float(scale), k=FLOAT_GRID_K),
                            np.float64).reshape(v.shape)

    def gaussian(self, values, sigma: float) -> np.ndarray:
        v = np.asarray(values, dtype=np.float64)
        if sigma == 0 or v.size == 0:
            return v.copy()
        make = _dp().m.make_gaussian
        return _sliced_draw(v.ravel(), lambda n: make(*_float_space(n, "l2"), scale=float(sigma), k=FLOAT_GRID_K),
                            np.float64).reshape(v.shape)

    def _top(self, u: np.ndarray, k: int, scale: float) -> np.ndarray:
        dp = _dp()
        idx = _finite_index(u)
        space = (dp.vector_domain(dp.atom_domain(T=float, nan=False)),
                 dp.linf_distance(T=float, monotonic=True))
        # the zero-concentrated measure makes OpenDP use Gumbel noise (= exponential mechanism)
        meas = dp.m.make_noisy_top_k(*space, dp.zero_concentrated_divergence(), k=int(k),
                                     scale=float(scale))
        return idx[np.asarray(meas(u[idx].tolist()), dtype=np.int64)]

    def noisy_max(self, utilities, scale: float) -> int:
        """argmax of u + Gumbel(scale) (entries −inf never chosen)."""
        return int(self._top(np.asarray(utilities, dtype=np.float64).ravel(), 1, scale)[0])

    def noisy_top_k(self, utilities, k: int, scale: float) -> np.ndarray:
        """Row-wise: the k largest of u + Gumbel(scale), in decreasing order of the noisy value."""
        u = np.asarray(utilities, dtype=np.float64)
        rows = u[None, :] if u.ndim == 1 else u
        if rows.shape[0] == 0:
            return np.zeros((0, k), dtype=np.int64)
        out = np.stack([self._top(r, k, scale) for r in rows])
        return out[0] if u.ndim == 1 else out


class NumpySampler:
    """Simulation sampler: the same distributions from a seeded NumPy Generator (reproducible,
    floating-point, no privacy claim)."""

    simulation = True

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng

    def discrete_laplace(self, values, scale: float) -> np.ndarray:
        v = np.asarray(values).astype(np.int64)
        if scale == 0:
            return v
        p = -math.expm1(-1.0 / scale)  # 1 − q: G1 − G2 of two geometrics is discrete Laplace
        return v + self.rng.geometric(p, v.shape) - self.rng.geometric(p, v.shape)

    def laplace(self, values, scale: float) -> np.ndarray:
        v = np.asarray(values, dtype=np.float64)
        return v + (self.rng.laplace(0.0, scale, v.shape) if scale > 0 else 0.0)

    def gaussian(self, values, sigma: float) -> np.ndarray:
        v = np.asarray(values, dtype=np.float64)
        return v + (sigma * self.rng.standard_normal(v.shape) if sigma > 0 else 0.0)

    def noisy_top_k(self, utilities, k: int, scale: float) -> np.ndarray:
        u = np.asarray(utilities, dtype=np.float64)
        rows = u[None, :] if u.ndim == 1 else u
        noisy = rows + (scale * self.rng.gumbel(0.0, 1.0, rows.shape) if scale > 0 else 0.0)
        noisy = np.where(np.isfinite(rows), noisy, -np.inf)
        part = np.argpartition(-noisy, k - 1, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(noisy, part, axis=1), axis=1, kind="stable")
        out = np.take_along_axis(part, order, axis=1)
        return out[0] if u.ndim == 1 else out

    def noisy_max(self, utilities, scale: float) -> int:
        u = np.asarray(utilities, dtype=np.float64).ravel()
        _finite_index(u)
        return int(self.noisy_top_k(u, 1, scale)[0])


def sampler_for(rng: np.random.Generator):
    """The sampler a mechanism draws its noise from: OpenDP for a :class:`SecureGenerator`
    (production), the generator itself through :class:`NumpySampler` otherwise (simulation)."""
    if isinstance(rng, SecureGenerator):
        return _OPENDP
    return NumpySampler(rng)


def is_simulation(rng: np.random.Generator) -> bool:
    """True when mechanism noise drawn with ``rng`` is reproducible (no privacy claim)."""
    return not isinstance(rng, SecureGenerator)


def noise_label(rng: np.random.Generator) -> str:
    """Short provenance of the noise drawn with ``rng`` (for ledger rows)."""
    return SIMULATION_LABEL if is_simulation(rng) else PRODUCTION_SAMPLER_LABEL


#: Which values each sampler kind never reaches exactly: the float samplers of OpenDP release a
#: value on the grid 2^k; NumPy's release any double (the dashboard and report say which ran).
FLOAT_SAMPLER_NOTE = (
    "Real-valued sums use OpenDP's exact float mechanisms (noise sampled on the grid 2^-40 from "
    "OS entropy); counts use the discrete Laplace. In simulation mode the noise is NumPy "
    "floating-point noise (not hardened against floating-point attacks, Mironov 2012).")


_OPENDP = OpenDPSampler()
