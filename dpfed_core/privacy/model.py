"""The privacy model of a method, as a type: what a method's numbers are protected by.

Every registered method declares one :class:`PrivacyModel`. The budget odometer, the experiments,
the catalogue logic and every label branch on this enum — never on a method's wording — so
rewording a label cannot change what a release is charged.

========================  ==========================================================================
model                     meaning (charge of one release at (ε, δ) per entity)
========================  ==========================================================================
``FEDERATED_USER_DP``     user-level DP, each entity releases only DP statistics of its own users
                          (this product's guarantee, proven by the ledger): (ε, δ); ∞ at ε = inf
``CENTRAL_RATING_DP``     rating-level DP at a trusted curator that holds the pooled raw data
                          (Friedman et al. 2016): raw data leaves the entities, so ∞ per entity
``NON_PRIVATE``           raw data or exact statistics leave the entities (references): ∞
``NO_RELEASE``            nothing derived from private data leaves an entity (``individual``,
                          ``random-v``): 0
``NO_FORMAL_CLAIM``       data-dependent values leave without a formal DP guarantee (FCF's gradients,
                          Xin & Jaakkola's deniability): ∞
========================  ==========================================================================
"""
from __future__ import annotations

import enum


class PrivacyModel(str, enum.Enum):
    """A method's privacy model (its value is the short label shown next to its numbers)."""

    FEDERATED_USER_DP = "user-level DP (federated)"
    CENTRAL_RATING_DP = "rating-level DP, trusted central curator"
    NON_PRIVATE = "non-private"
    NO_RELEASE = "no release"
    NO_FORMAL_CLAIM = "no formal privacy claim"

    @property
    def label(self) -> str:
        return self.value

    @property
    def uses_budget(self) -> bool:
        """The method takes an (ε, δ) and calibrates noise to it."""
        return self in (PrivacyModel.FEDERATED_USER_DP, PrivacyModel.CENTRAL_RATING_DP)

    @property
    def user_level(self) -> bool:
        """Its ε is this product's guarantee: per user of each entity, federated (the odometer
        charges it as such; a rating-level ε gives a user with many ratings no bound)."""
        return self is PrivacyModel.FEDERATED_USER_DP

    @property
    def releases(self) -> bool:
        """Something derived from the private data leaves an entity."""
        return self is not PrivacyModel.NO_RELEASE
