"""Privacy: noise sources, mechanisms with their privacy maps, and the ledger that accounts for them."""
from dpfed_core.privacy.ledger import PrivacyLedger  # noqa: F401
