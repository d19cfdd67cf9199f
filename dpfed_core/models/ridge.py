"""Solves of ridge systems (VᵀV + λI) x = Vᵀy, one or a stack of them, that hold at λ = 0.

λ = 0 is an accepted setting. There a system is singular as soon as a factor column is 0 over the
entries it sums (an item nobody holds in training, a user whose items all have a zero factor), and
NumPy's ``solve`` and ``inv`` raise. The ridge solution (VᵀV + λI)⁻¹Vᵀy tends, as λ → 0+, to the
minimum-norm least-squares solution (VᵀV)⁺Vᵀy = V⁺y, so that is what a singular system gets; a
non-singular one gets NumPy's solve, to the bit.
"""
from __future__ import annotations

import numpy as np


def ridge_solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``A⁻¹ b`` for a symmetric positive semi-definite ``A`` (``(..., d, d)``, ``b`` ``(..., d, k)``);
    the minimum-norm solution ``A⁺ b`` when a system of the stack is singular."""
    try:
        return np.linalg.solve(A, b)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(A, hermitian=True) @ b


def ridge_inverse(A: np.ndarray) -> np.ndarray:
    """``A⁻¹`` for a symmetric positive semi-definite ``A``; its pseudo-inverse ``A⁺`` when singular."""
    try:
        return np.linalg.inv(A)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(A, hermitian=True)
