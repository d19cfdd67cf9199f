"""Federation: what each entity releases (prototypes), the messages, and the two-round protocol.

Importing the package registers every prototype method (``kmeans``, ``krandom``, ``dp-prototypes``,
``dp-gaussian``).
"""
from dpfed_core.federation import dp_prototypes, prototypes, summable  # noqa: F401  (registration)
