"""Plug-in methods on every process of a deployment: ``--plugin MODULE`` / ``DPFED_PLUGINS``.

A plug-in is a Python module that registers a method when imported (``@register_summable_method``,
``@register_prototype_method``; docs/EXTENDING.md). The coordinator imports it to validate and plan
the run; every node must import it too, or it cannot build the method the run names. The list
travels the way a site's configuration does — the environment variable ``DPFED_PLUGINS``
(comma-separated module names), which ``deploy-local`` sets for the processes it starts and which a
real site's operator sets for its own ``flower-supernode`` — and never in a message: a node imports
only what its own operator listed, whatever the server sends (a message names a *method*, which the
node looks up in its own registry).
"""
from __future__ import annotations

import importlib
import os

from dpfed_core.errors import ConfigError

#: The environment variable that lists the plug-in modules of a process (comma-separated).
ENV = "DPFED_PLUGINS"


def listed(extra=()) -> list[str]:
    """The plug-in modules of ``DPFED_PLUGINS`` followed by ``extra``, each once, in order."""
    names = [n.strip() for n in os.environ.get(ENV, "").split(",") if n.strip()]
    return list(dict.fromkeys([*names, *(str(e).strip() for e in extra if str(e).strip())]))


def load_plugins(extra=()) -> list[str]:
    """Import every listed plug-in module (see :func:`listed`) and set ``DPFED_PLUGINS`` to the full
    list, so that the processes this one starts import the same. A module that cannot be imported is
    a :class:`ConfigError` naming it and ``--plugin`` / ``DPFED_PLUGINS``."""
    names = listed(extra)
    for name in names:
        try:
            importlib.import_module(name)
        except SystemExit as exc:  # a plug-in must not end the process that imports it
            raise ConfigError(f"plug-in module {name!r} called sys.exit({exc.code!r}) while being imported; a "
                              "plug-in only registers methods — remove the exit, or drop it from --plugin / "
                              f"{ENV}", param="plugins") from None
        except Exception as exc:  # noqa: BLE001 — any failure of a plug-in's import is the same user error
            raise ConfigError(f"plug-in module {name!r} cannot be imported ({type(exc).__name__}: {exc}); fix "
                              f"--plugin or {ENV}, and make the module importable on every node "
                              "(PYTHONPATH)", param="plugins") from None
    if names:
        os.environ[ENV] = ",".join(names)
    return names
