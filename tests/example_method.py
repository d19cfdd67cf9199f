"""A small summable DP method, written only against the public hooks (docs/EXTENDING.md): it shows
that a new method needs its module, its registration (the decorator below), its tests and its docs —
nothing else. The in-process estimator, the registry (CLI ``--method``, ``--param``, the dashboard's
Advanced panel), the audit and the deployment's node and server code pick it up by name.

``dp-item-reach-example``: each entity releases how many of its users touched each item (each user's
row binarised and scaled to ℓ2 ≤ 1, so one user moves the sum by at most 1 in ℓ2), plus Gaussian
noise through the secure sum; the server's V is the clipped sum as one latent factor.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from dpfed_core.config import Param
from dpfed_core.federation.summable import SummableMethod, register_summable_method

NAME = "dp-item-reach-example"


@register_summable_method(NAME)
class DPItemReach(SummableMethod):
    """Example: DP number of users per item (binarised, unit-norm rows) through a secure sum.

    Sensitivity: one user adds a row of ℓ2 norm ≤ 1 to the sum: Δ₂ = 1. Privacy map: the Gaussian
    mechanism calibrated by OpenDP's map on the secure sum
    (:meth:`~dpfed_core.federation.summable.SummableMethod.gaussian_share`); each entity adds
    σ/√(H − d) under secure aggregation.
    """

    parameters = (
        Param("power", "float", 1.0, "scores are reach^power (post-processing of the released sum)", low=0,
              low_open=True, high=4),
    )

    def __init__(self, value_max: float = 1.0, epsilon: float = math.inf, delta: float = 1e-6,
                 max_dropouts: int = 0, aggregation: str = "secure", power: float = 1.0) -> None:
        super().__init__(value_max, epsilon, delta, max_dropouts, aggregation)
        self.power = power

    def share(self, X, rng, ledger, n_entities, stage="release", public=None):
        self.check(n_entities)
        B = sp.csr_matrix(X, dtype=np.float64, copy=True)
        B.data[:] = 1.0
        norms = np.sqrt(np.asarray(B.sum(axis=1)).ravel())
        B = sp.diags(np.where(norms > 0, 1.0 / np.maximum(norms, 1e-300), 0.0)) @ B
        totals = np.asarray(B.sum(axis=0)).ravel()
        # calibrates σ, charges the ledger, then draws this entity's share (σ/√(H − d) when secure)
        return self.gaussian_share(totals, 1.0, rng, ledger, n_entities, stage="reach")

    def finish(self, total):
        return np.maximum(np.asarray(total, dtype=np.float64), 0.0)[:, None] ** float(self.power)
