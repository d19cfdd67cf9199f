"""The systems of the other seed papers, as comparison methods (SPEC §6).

Their names, labels, privacy models and declared parameters are data in :mod:`.specs`, which registers
them with :func:`dpfed_core.methods.registry.register_method`; each system's module is imported only
when one of its methods is fitted (start-up stays light).

* :mod:`.friedman` — Friedman, Berkovsky & Kaafar 2016: centralised, rating-level DP MF
  (``friedman-ge``, ``friedman-isgd``, ``friedman-psgd``, ``friedman-pals``) and the non-private
  baselines of their Table 3 (``global-average``, ``item-average``, ``global-effects``, ``ge-mf``).
* :mod:`.fcf` — Ammad-ud-din et al. 2019: ``fcf`` (federated implicit ALS/Adam, no formal privacy)
  and the centralised ``implicit-als`` of Hu et al. 2008.
* :mod:`.xin` — Xin & Jaakkola 2014: ``xin-public`` (public users only), ``xin-pmc``, ``xin-pmd``
  (their second-order mechanisms — not DP) and ``xin-full`` (full EM, non-private).
"""
from . import specs

specs.register()
