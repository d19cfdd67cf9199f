"""The systems of the other seed papers, as comparison methods (SPEC §6).

Each module registers its methods with :func:`dpfed_core.methods.registry.register_method` when imported;
this package imports them all so ``dpfed_core.methods.METHODS`` lists them.

* :mod:`.friedman` — Friedman, Berkovsky & Kaafar 2016: centralised, rating-level DP MF
  (``friedman-ge``, ``friedman-isgd``, ``friedman-psgd``, ``friedman-pals``) and the non-private
  baselines of their Table 3 (``global-average``, ``item-average``, ``global-effects``, ``ge-mf``).
* :mod:`.fcf` — Ammad-ud-din et al. 2019: ``fcf`` (federated implicit ALS/Adam, no formal privacy)
  and the centralised ``implicit-als`` of Hu et al. 2008.
* :mod:`.xin` — Xin & Jaakkola 2014: ``xin-public`` (public users only), ``xin-pmc``, ``xin-pmd``
  (their second-order mechanisms — not DP) and ``xin-full`` (full EM, non-private).
"""
from . import fcf, friedman, xin

friedman.register()
fcf.register()
xin.register()
