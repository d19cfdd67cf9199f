"""Comparison methods: the registry, the built-in references and the other papers' systems.

Importing this package registers every method: the built-ins (:mod:`.builtin`), the prototype
and summable methods of :mod:`dpfed_core.federation` (through :mod:`.registry`) and the comparison systems
(:mod:`.comparison`).
"""
from . import builtin, comparison  # noqa: F401  (registration side effects)
from .registry import (METHODS, MethodResult, MethodSpec, available_methods, check_methods, get_method,
                       register_method)

__all__ = ["METHODS", "MethodResult", "MethodSpec", "available_methods", "check_methods", "get_method",
           "register_method"]
