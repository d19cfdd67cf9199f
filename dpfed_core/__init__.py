"""dpfed_core — federated recommendation with differentially private prototypes.

Ribero, Henderson, Williamson & Vikalo (2020): each entity sends the server k differentially private
prototypes of its users; the server learns a shared item matrix V by non-negative matrix
factorisation and broadcasts it; each entity fits its own user factors locally. Two messages, one
privacy cost.
"""
from __future__ import annotations

__version__ = "0.1.0"

from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import BudgetExceededError, ConfigError, DataError, DpfedError
from dpfed_core.privacy.ledger import PrivacyLedger

__all__ = [
    "FederatedDataset",
    "PrivacyLedger",
    "DpfedError",
    "DataError",
    "ConfigError",
    "BudgetExceededError",
    "__version__",
]
