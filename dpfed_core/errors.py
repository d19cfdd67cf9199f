"""Errors a user can act on.

Every error raised at the boundary of the engine (loaders, configuration, CLI) is a subclass of
:class:`DpfedError`. Its message names what is wrong (file, column, row, parameter) and how to fix
it, so the CLI and the dashboard can show it verbatim instead of a traceback.

Naming the control that fixes it. The engine knows its parameters by their Python names
(``value_max``, ``entity_col``); a user knows them as a CLI flag (``--value-max``) or a dashboard
control ("Declared maximum of one value"). An error therefore carries ``param`` (the Python name of
the parameter at fault, if one is) and its message spells parameter names as Python names; each
front end renders the message with :meth:`DpfedError.render` and its own table of names
(:data:`dpfed_core.cli.args.CLI_NAMES`, the Data page's control labels). Parameter names are
replaced as whole words only where they contain an underscore or are listed, so ordinary words are
never rewritten.
"""
from __future__ import annotations

import re
from typing import Mapping


class DpfedError(Exception):
    """Base class of every error meant to be shown to a user as one friendly message.

    param : Python name of the parameter that fixes the error (``None`` when none does); a front end
        maps it to its flag or control, e.g. to highlight the control.
    listing : the parts of the message that list a directory's contents (file or table names). The
        command line shows them to the person who typed the path; a page whose path box may be
        reached by others shows the message without them.
    """

    def __init__(self, message: str = "", *, param: str | None = None, listing: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.param = param
        self.listing = tuple(listing)

    def render(self, names: Mapping[str, str] | None = None) -> str:
        """The message with every Python parameter name in ``names`` replaced by its front-end name
        (a CLI flag, a dashboard control label). One line: newlines become spaces."""
        return render_message(str(self), names)


def render_message(message: str, names: Mapping[str, str] | None = None) -> str:
    """Replace parameter names in ``message`` by their front-end names ``names[name]``.

    A name containing an underscore (``value_max``) is replaced wherever it stands as a whole word;
    a plain-word name (``events``, ``items``) only where written ``name=`` (``events=lab`` →
    ``--events lab``), so ordinary words are never rewritten. ``name=`` becomes ``flag `` when the
    front-end name is a flag (starts with ``--``) and ``label: `` otherwise."""
    text = cut_long_values(" ".join(str(message).split()))
    if not names:
        return text
    keys = sorted(names, key=len, reverse=True)
    alt = "|".join(re.escape(k) for k in keys)
    pattern = re.compile(r"(?<![\w-])(" + alt + r")(?:(=)|(?![\w-]))")

    def sub(m: re.Match) -> str:
        key, eq = m.group(1), m.group(2)
        if not eq and "_" not in key:
            return m.group(0)
        new = names[key]
        if eq:
            return new + (" " if new.startswith("-") else ": ")
        return new

    return pattern.sub(sub, text)


#: The longest quoted value or unbroken word an error repeats whole; a longer one (a cell of a million
#: characters) is cut to its first :data:`SHOWN_CHARS` with its length: one readable line, and a
#: message that does not carry a whole private cell.
LONG_VALUE_CHARS = 200
SHOWN_CHARS = 60
# a quoted value opens after no letter and closes before none: the apostrophes of prose ("the nodes'
# reports", "the protocol's") are no quotes
_LONG = re.compile(r"(?<!\w)'[^']{%d,}'(?!\w)|(?<!\w)\"[^\"]{%d,}\"(?!\w)|[^\s'\"]{%d,}"
                   % ((LONG_VALUE_CHARS,) * 3))


def cut_long_values(text: str) -> str:
    """``text`` with every quoted value or unbroken word longer than :data:`LONG_VALUE_CHARS` cut:
    ``'SSSS…' (3,000,000 characters)``."""
    def cut(m: re.Match) -> str:
        v = m.group(0)
        q = v[0] if v[0] in "'\"" else ""
        inner = v[1:-1] if q else v
        return f"{q}{inner[:SHOWN_CHARS]}…{q} ({len(inner):,} characters)"

    return _LONG.sub(cut, text)


class DataError(DpfedError, ValueError):
    """The input data is malformed: a missing file or column, text where numbers belong, …"""


class ConfigError(DpfedError, ValueError):
    """A parameter is out of range or inconsistent with the data (ε ≤ 0, k larger than an entity, …)."""


class OptionError(ConfigError):
    """Options given to a source they do not apply to, with the options that do.

    Rendered for a front end, both lists use its names, and an accepted option it has no name for
    (a Python-only parameter such as ``sample_dir``) is left out of what it is told."""

    def __init__(self, bad: list[str], accepted: list[str], what: str) -> None:
        self.bad, self.accepted, self.what = list(bad), list(accepted), what
        super().__init__(self._text(self.bad, self.accepted), param=self.bad[0])

    def __reduce__(self):  # pickled (a worker's error) by what it was made of, not by its message
        return type(self), (self.bad, self.accepted, self.what)

    def _text(self, bad: list[str], accepted: list[str]) -> str:
        many = len(bad) > 1
        takes = "accepted: " + ", ".join(accepted) if accepted else "it takes none"
        return (f"option{'s' if many else ''} {', '.join(bad)} do{'' if many else 'es'} not apply to {self.what}: "
                f"leave {'them' if many else 'it'} out; {takes}")

    def render(self, names: Mapping[str, str] | None = None) -> str:
        if not names:
            return super().render(names)
        bad = [names.get(b, b) for b in self.bad]
        accepted = sorted({names[a] for a in self.accepted if a in names})
        return render_message(self._text(bad, accepted))


class DeploymentError(DpfedError):
    """A deployment could not start or did not finish; the message says what and where.
    ``ledger_rows = 0`` when the run stopped before any site drew noise (the budget odometer then gives
    its reservation back); None when that is not known."""

    def __init__(self, *args, ledger_rows: int | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.ledger_rows = ledger_rows


class BudgetExceededError(DpfedError, RuntimeError):
    """A mechanism tried to spend more privacy budget than the run was given.

    Raised by the ledger; it always signals a bug in a mechanism's budget split, never bad input.
    """
