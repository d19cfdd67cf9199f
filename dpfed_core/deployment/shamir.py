"""SecAgg+'s Shamir reconstruction with each set of Lagrange coefficients computed once.

In the unmask stage the ServerApp rebuilds, for every live node, the seed of its self-mask from the
key shares the other nodes return: flwr 1.42 calls pycryptodome's ``Shamir.combine`` once per
16-byte chunk per node. That function recomputes the Lagrange basis at 0 for every call — k² field
multiplications and k inversions in GF(2^128), in pure Python (≈ 0.2 ms a multiplication) — although
the basis depends only on the share *indices*, which are the same for every node of a round. On the
30-hospital clinic sample that was ≈ 5 CPU-s of the ServerApp's serial unmask step per secure sum.

:func:`combine_chunk` is the same interpolation with the basis cached by index tuple:

    secret = Σ_j y_j · c_j,  c_j = Π_{m≠j} x_m / (x_j + x_m)   (GF(2^128): subtraction is addition)

computed with pycryptodome's own field element (``_Element``: the same multiplication and inverse),
so the result is bit-identical to ``Shamir.combine(shares, ssss=False)`` (tested). :func:`install`
puts it in place of ``flwr.common.secure_aggregation.crypto.shamir._shamir_combine``, the one
function flwr's ``combine_shares`` maps over chunks. Splitting (the nodes' side) is unchanged.

:func:`install_simulation_arithmetic` is for one operator's runs on one machine only — the
Simulation Engine and ``deploy-local``'s warm processes (:mod:`.node_runtime`): pycryptodome's
GF(2^128) multiplication avoids data-dependent branches (two string round-trips per bit) to resist
timing attacks on a real node; with no other party on the machine there is nothing to time, and the
same shift-and-add algorithm with plain branches computes the same products (tested bit for bit),
splitting a node's key ≈ 3× faster. A real site runs the stock ``flower-supernode`` and keeps
pycryptodome's own code.
"""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=64)
def _basis_at_zero(indices: tuple[int, ...]) -> tuple:
    """The Lagrange coefficients c_j of the shares' indices (GF(2^128) elements), in order."""
    from Crypto.Protocol.SecretSharing import _Element

    xs = [_Element(i) for i in indices]
    out = []
    for j, x_j in enumerate(xs):
        numerator = _Element(1)
        denominator = _Element(1)
        for m, x_m in enumerate(xs):
            if m != j:
                numerator *= x_m
                denominator *= x_j + x_m
        out.append(numerator * denominator.inverse())
    return tuple(out)


def combine_chunk(shares: list[tuple[int, bytes]]) -> bytes:
    """One 16-byte chunk of a secret from its shares ``[(index, 16-byte share), …]`` — what
    ``Shamir.combine(shares, ssss=False)`` returns, with the basis cached per index tuple."""
    from Crypto.Protocol.SecretSharing import _Element

    indices = tuple(int(i) for i, _ in shares)
    if len(set(indices)) != len(indices):
        raise ValueError("Duplicate share")
    if 0 in indices:
        raise ValueError("a Shamir share index must be ≥ 1")
    result = _Element(0)
    for (_, y), c in zip(shares, _basis_at_zero(indices)):
        result += _Element(y) * c
    return result.encode()


def install() -> None:
    """Use :func:`combine_chunk` for flwr's SecAgg+ reconstruction in this process."""
    import flwr.common.secure_aggregation.crypto.shamir as flwr_shamir

    from dpfed_core.deployment import flower_internals as fi

    if fi.usable("shamir-combine"):  # else Flower's own reconstruction (the same result, slower)
        flwr_shamir._shamir_combine = combine_chunk
        fi.replaced("shamir-combine", combine_chunk)


def _gf128_mul(self, factor):
    """pycryptodome's ``_Element.__mul__`` (shift-and-add modulo 1 + x + x² + x⁷ + x¹²⁸, including
    its quirk of returning 0 when a factor equals the modulus) with branches instead of masks."""
    from Crypto.Protocol.SecretSharing import _Element

    f1, f2 = self._value, factor._value
    if f2 > f1:
        f1, f2 = f2, f1
    irr = _Element.irr_poly
    if f1 == irr or f2 == irr:
        return _Element(0)
    z = 0
    while f2:
        if f2 & 1:
            z ^= f1
        f1 <<= 1
        if f1 >> 128:
            f1 ^= irr
        f2 >>= 1
    return _Element(z)


def install_simulation_arithmetic() -> None:
    """In one operator's local processes only (module doc): the faster, bit-identical multiplication."""
    from Crypto.Protocol.SecretSharing import _Element

    from dpfed_core.deployment import flower_internals as fi

    if fi.usable("gf128-mul"):  # else pycryptodome's own (the same products, slower)
        _Element.__mul__ = _gf128_mul
        fi.replaced("gf128-mul", _gf128_mul)
