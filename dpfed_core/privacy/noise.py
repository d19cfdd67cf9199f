"""Where a run's randomness comes from (issue 11, finding 1).

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
"""
from __future__ import annotations

import numpy as np

#: The label every output of a simulation run carries (ledger, JSON, dashboard, report).
SIMULATION_LABEL = "simulation: noise reproducible, no privacy claim"

#: Stream tag of a method's randomness under a seed (kept from the first build, so simulation runs
#: reproduce the numbers of the committed benchmarks).
METHOD_STREAM = 0x3E7


def method_generator(seed: int, *, private: bool, simulation: bool) -> np.random.Generator:
    """The generator a method draws from.

    seed : the run's public seed. private : the method spends privacy budget. simulation : the
    explicit reproducible-noise switch. A private method outside simulation gets OS entropy; a
    non-private method, or any method in simulation, gets a stream fixed by the seed.
    """
    if private and not simulation:
        return np.random.default_rng(np.random.SeedSequence())
    return np.random.default_rng([seed, METHOD_STREAM])


def noise_provenance(private: bool, simulation: bool) -> str:
    """One line for result documents: where the noise of this run came from."""
    if not private:
        return "no noise (non-private method); randomness seeded by the run's seed"
    if simulation:
        return SIMULATION_LABEL
    return "operating-system entropy (fresh per run; not reproducible from the seed)"
