"""Errors a user can act on.

Every error raised at the boundary of the engine (loaders, configuration, CLI) is a subclass of
:class:`DpfedError`. Its message names what is wrong (file, column, row, parameter) and how to fix
it, so the CLI and the dashboard can show it verbatim instead of a traceback.
"""
from __future__ import annotations


class DpfedError(Exception):
    """Base class of every error meant to be shown to a user as one friendly message."""


class DataError(DpfedError, ValueError):
    """The input data is malformed: a missing file or column, text where numbers belong, …"""


class ConfigError(DpfedError, ValueError):
    """A parameter is out of range or inconsistent with the data (ε ≤ 0, k larger than an entity, …)."""


class BudgetExceededError(DpfedError, RuntimeError):
    """A mechanism tried to spend more privacy budget than the run was given.

    Raised by the ledger; it always signals a bug in a mechanism's budget split, never bad input.
    """
