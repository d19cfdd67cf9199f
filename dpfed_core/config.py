"""The full configuration of a run — everything that decides its numbers, seed included."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, fields

from dpfed_core.errors import ConfigError
from dpfed_core.privacy.ledger import validate_budget


#: Largest finite ε a run accepts (issue 12: ε ≥ 1e50 crashed the Gaussian calibration).
MAX_EPSILON = 1e4


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
    n_jobs : parallel worker processes over entities (1 = none, -1 = all cores); same results.
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

    def validate(self) -> "RunConfig":
        validate_budget(self.epsilon, self.delta)
        if math.isfinite(self.epsilon) and self.epsilon > MAX_EPSILON:
            # beyond it DP noise is below float resolution and the Gaussian calibration overflows
            raise ConfigError(f"ε = {self.epsilon:g} is above {MAX_EPSILON:g}; use inf for a non-private run",
                              param="epsilon")
        for name in ("k", "rank", "top_n", "n_hidden", "max_iter"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ConfigError(f"{name} must be a positive whole number, got {v!r}")
        if not isinstance(self.lam, (int, float)) or not math.isfinite(self.lam) or self.lam < 0:
            raise ConfigError(f"λ (lam) must be a non-negative number, got {self.lam!r}")
        if self.mode not in ("zero", "observed"):
            raise ConfigError(f"mode must be 'zero' or 'observed', got {self.mode!r}")
        if isinstance(self.n_jobs, bool) or not isinstance(self.n_jobs, int) or not (self.n_jobs == -1 or self.n_jobs >= 1):
            raise ConfigError(f"n_jobs must be -1 (all cores) or a whole number ≥ 1, got {self.n_jobs!r}",
                              param="n_jobs")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**63:
            raise ConfigError(f"seed must be a whole number from 0 to 2^63 − 1, got {self.seed!r}", param="seed")
        if self.aggregation not in ("none", "secure"):
            raise ConfigError(f"aggregation must be 'none' or 'secure', got {self.aggregation!r} (--aggregation)",
                              param="aggregation")
        if isinstance(self.max_dropouts, bool) or not isinstance(self.max_dropouts, int) or self.max_dropouts < 0:
            raise ConfigError(f"max_dropouts must be a whole number ≥ 0, got {self.max_dropouts!r} (--max-dropouts)",
                              param="max_dropouts")
        if not 0 < self.test_fraction < 1:
            raise ConfigError(f"test fraction must be strictly between 0 and 1, got {self.test_fraction}")
        return self

    def replace(self, **changes) -> "RunConfig":
        known = {f.name for f in fields(self)}
        bad = set(changes) - known
        if bad:
            raise ConfigError(f"unknown configuration keys: {', '.join(sorted(bad))}")
        d = asdict(self)
        d.update(changes)
        return RunConfig(**d)

    def to_dict(self) -> dict:
        return asdict(self)
