"""SecAgg+'s reconstruction with a cached Lagrange basis equals pycryptodome's and flwr's."""
import os
import random

import pytest

pytest.importorskip("flwr")
from Crypto.Protocol.SecretSharing import Shamir  # noqa: E402

from dpfed_core.deployment import shamir  # noqa: E402


def test_combine_chunk_equals_pycryptodome_for_every_subset_shape():
    rnd = random.Random(7)
    for k, n in [(1, 1), (2, 3), (3, 5), (7, 7), (12, 30)]:
        secret = os.urandom(16)
        shares = Shamir.split(k, n, secret, ssss=False)
        for _ in range(4):
            chosen = rnd.sample(shares, k)
            assert shamir.combine_chunk(chosen) == Shamir.combine(chosen, ssss=False) == secret


def test_cache_is_keyed_by_indices_not_by_secret():
    # two secrets shared at the same indices: the second combine reuses the basis and is still right
    a, b = os.urandom(16), os.urandom(16)
    sa, sb = Shamir.split(5, 9, a), Shamir.split(5, 9, b)
    assert shamir.combine_chunk(sa[2:7]) == a
    assert shamir.combine_chunk(sb[2:7]) == b
    # a different index set with too few shares gives a different (wrong) value, as the original does
    assert shamir.combine_chunk(sa[:4]) == Shamir.combine(sa[:4])
    assert shamir.combine_chunk(sa[:4]) != a


def test_duplicate_or_zero_index_is_refused():
    s = Shamir.split(2, 3, os.urandom(16))
    with pytest.raises(ValueError, match="Duplicate"):
        shamir.combine_chunk([s[0], s[0]])
    with pytest.raises(ValueError, match="≥ 1"):
        shamir.combine_chunk([(0, s[0][1]), s[1]])


def test_installed_in_flwr_combine_shares():
    import flwr.common.secure_aggregation.crypto.shamir as flwr_shamir

    original = flwr_shamir._shamir_combine
    try:
        shamir.install()
        secret = os.urandom(45)  # three chunks after padding
        shares = flwr_shamir.create_shares(secret, 6, 10)
        assert flwr_shamir._shamir_combine is shamir.combine_chunk
        assert flwr_shamir.combine_shares(shares[3:9]) == secret
    finally:
        flwr_shamir._shamir_combine = original


def test_simulation_arithmetic_is_bit_identical_to_pycryptodome():
    from Crypto.Protocol.SecretSharing import _Element

    rnd = random.Random(11)
    values = [0, 1, 2, 3, 30, (1 << 127), (1 << 128) - 1, _Element.irr_poly]
    values += [rnd.getrandbits(128) for _ in range(300)] + [rnd.getrandbits(5) for _ in range(50)]
    for _ in range(1500):
        a, b = _Element(rnd.choice(values)), _Element(rnd.choice(values))
        assert shamir._gf128_mul(a, b)._value == (a * b)._value


def test_shares_made_with_simulation_arithmetic_combine_with_pycryptodome():
    from Crypto.Protocol.SecretSharing import _Element

    original = _Element.__mul__
    try:
        shamir.install_simulation_arithmetic()
        assert _Element.__mul__ is shamir._gf128_mul  # the local runs' faster arithmetic is in place
        secret = os.urandom(16)
        shares = Shamir.split(5, 8, secret)
    finally:
        _Element.__mul__ = original
    assert Shamir.combine(shares[1:6]) == secret


def test_a_changed_pycryptodome_keeps_its_own_hardened_multiplication(monkeypatch, capsys):
    """The faster multiplication was written against one pycryptodome: under another version the
    stock (timing-hardened) one stays in place and one line says so."""
    from Crypto.Protocol.SecretSharing import _Element

    from dpfed_core.deployment import flower_internals as fi

    original = _Element.__mul__
    monkeypatch.setattr(fi, "_WARNED", set())
    monkeypatch.setitem(fi.PINNED, "pycryptodome", "0.0.1")
    try:
        shamir.install_simulation_arithmetic()
        assert _Element.__mul__ is original
    finally:
        _Element.__mul__ = original
    err = capsys.readouterr().err
    assert "'gf128-mul'" in err and "stock code path" in err
