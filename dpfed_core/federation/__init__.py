"""Federation: what each entity releases (prototypes), the messages, and the two-round protocol.

Importing the package registers every prototype method (``kmeans``, ``krandom``, ``dp-prototypes``,
``dp-gaussian``) and every summable method (``dp-popularity``, ``dp-cooccurrence``, ``dp-als``).
"""
from dpfed_core.federation import dp_prototypes, prototypes, summable  # noqa: F401  (registration)
from dpfed_core.federation import dp_als  # noqa: F401,E402  (registration: a summable method of its own module)
