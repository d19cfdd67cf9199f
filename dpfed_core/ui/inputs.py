"""Typed inputs of the dashboard: ε, δ, grids and seeds parsed and checked, engine errors rendered
in the page's words (the control that fixes them), user data escaped for Markdown."""
from __future__ import annotations

import math
from pathlib import Path

from dpfed_core.config import MAX_EPSILON as MAX_FINITE_EPSILON  # RunConfig's own limit
from dpfed_core.config import DEFAULT_SWEEP_EPSILONS, check_epsilon
from dpfed_core.config import MAX_K, MAX_RANK  # noqa: F401  (the CLI's limits too)
from dpfed_core.data.dataset import FederatedDataset
from dpfed_core.errors import ConfigError, DataError
from dpfed_core.evaluation.verdicts import format_epsilon  # noqa: F401  (the pages' ε format: 3 significant digits)

#: Default ε grid of the trade-off sweep: the CLI's ``sweep`` default, so both spend and show the same.
DEFAULT_EPS_GRID = DEFAULT_SWEEP_EPSILONS


DEFAULT_SWEEP_SEEDS = (0, 1, 2)


def parse_epsilon(text: str | float) -> float:
    """A typed ε: a positive number, or ``inf`` / ``∞`` / ``none`` for a non-private run."""
    if isinstance(text, (int, float)):
        value = float(text)
    else:
        from dpfed_core.data.inputs import strict_float

        t = str(text).strip().lower().replace(" ", "")
        if t in ("inf", "∞", "infinity", "+inf", "none", "non-private"):
            return math.inf
        try:
            value = strict_float(t)
        except ValueError:
            raise ConfigError(f"ε must be a positive number or ∞ (type 'inf'), got {text!r}", param="epsilon") from None
    if math.isnan(value) or value <= 0:
        raise ConfigError(
            f"ε must be a positive number (or ∞ for a non-private run), got {text}; typical private "
            "values are 0.1 to 10", param="epsilon"
        )
    return value


def parse_grid(text: str) -> list[float]:
    """A comma-separated ε grid such as ``0.1, 1, 10, inf``; a repeated value is refused, as on the
    command line (:func:`~dpfed_core.evaluation.experiments.check_grid`: one policy)."""
    from dpfed_core.evaluation.experiments import check_grid

    parts = [p for p in str(text).replace(";", ",").split(",") if p.strip()]
    if not parts:
        raise ConfigError("the ε grid is empty; give e.g. 0.1, 1, 10, inf", param="epsilons")
    values = []
    for p in parts:
        try:
            values.append(check_epsilon(parse_epsilon(p), param="epsilons"))  # a run's range, as the CLI's
        except ConfigError as exc:
            exc.param = "epsilons"  # the grid's box, not the Federate page's one ε
            raise
    return sorted(check_grid(values, "epsilons"))


def parse_seeds(text: str) -> list[int]:
    """Comma-separated whole seeds; a repeated seed is refused, as on the command line."""
    from dpfed_core.data.inputs import strict_int
    from dpfed_core.evaluation.experiments import check_grid

    try:
        seeds = [strict_int(p) for p in str(text).replace(";", ",").split(",") if p.strip()]
    except ValueError:
        raise ConfigError(f"seeds must be whole numbers separated by commas, got {text!r}", param="seeds") from None
    if not seeds:
        raise ConfigError("give at least one seed, e.g. 0, 1, 2", param="seeds")
    from dpfed_core.config import MAX_SEED

    bad = [x for x in seeds if not 0 <= x <= MAX_SEED]
    if bad:  # the run's own rule, said here instead of by a run built from it
        raise ConfigError(f"seeds must be whole numbers from 0 to 2^63 − 1, got {bad[0]}", param="seeds")
    return check_grid(seeds, "seeds")


#: δ at or above this is refused (a 1 % chance of failure is no guarantee).
MAX_DELTA = 1e-2


def check_budget(epsilon_text: str | float, delta_text: str | float, *, eps_control: str = "ε",
                 delta_control: str = "δ", method: str | None = None) -> tuple[float, float, list[str]]:
    """Validate a typed (ε, δ) before a run: returns (ε, δ, warnings) or raises ConfigError whose
    message names the page control that fixes it. ``method``: the run's, whose Gaussian stages need δ > 0
    (the rule the run's own check applies, :func:`~dpfed_core.evaluation.budget.gaussian_method`)."""
    try:
        eps = parse_epsilon(epsilon_text)
    except ConfigError as exc:  # the box that was typed in, named once
        raise ConfigError(f"{eps_control}: {exc}") from None
    if math.isfinite(eps) and eps > MAX_FINITE_EPSILON:
        raise ConfigError(f"{eps_control}: ε = {eps:g} is above {MAX_FINITE_EPSILON:g}, where a DP guarantee "
                          f"no longer means anything; type inf for the non-private limit or a value up to "
                          f"{MAX_FINITE_EPSILON:g} (usual private values are 0.1 to 10; above 100 the page "
                          "warns that the guarantee is weak).")
    try:  # the run's own range (the floor too), so that a value the box accepts makes a run
        check_epsilon(eps)
    except ConfigError as exc:
        raise ConfigError(f"{eps_control}: {exc}") from None
    try:
        delta = float(str(delta_text).strip())
    except ValueError:
        raise ConfigError(f"{delta_control}: δ must be a number such as 1e-6, got {str(delta_text)!r}") from None
    if math.isnan(delta) or delta < 0:
        raise ConfigError(f"{delta_control}: δ must be ≥ 0, got {delta_text}; a usual choice is 1e-6.")
    if delta >= 1:  # a run refuses it even when ε = ∞ makes δ irrelevant
        raise ConfigError(f"{delta_control}: δ must be below 1, got {delta_text}; a usual choice is 1e-6.")
    if method is not None:
        from dpfed_core.evaluation.budget import check_gaussian_delta

        try:
            check_gaussian_delta([method], eps, delta)
        except ConfigError as exc:
            raise ConfigError(f"{delta_control}: {exc}.") from None
    if delta >= MAX_DELTA and math.isfinite(eps):
        raise ConfigError(f"{delta_control}: δ = {delta:g} is refused: a chance of {delta:.0%} that the "
                          "guarantee fails is no guarantee. Use δ well below 1/(number of users of an "
                          "entity), e.g. 1e-6.")
    warnings = []
    if math.isfinite(eps) and delta > 1e-4:
        warnings.append(f"δ = {delta:g} is large: it should be well below 1/(number of users of the "
                        "largest entity); 1e-6 is usual.")
    if math.isfinite(eps) and eps > 100:
        warnings.append(f"ε = {eps:g} is far above the usual private range (0.1–10): the guarantee is "
                        "formally true but weak.")
    return eps, delta, warnings


#: Engine parameter names → the dashboard control that sets them (Data / Federate pages). Errors from
#: the engine name code parameters; the pages show them in their own words.
CONTROL_NAMES = {
    "drop_missing": "“Rows with a missing value” on the Data page",
    "exclude_entities": "“Leave out entities” on the Data page",
    "items": "the “Item catalogue” / “Formulary” upload on the Data page",
    "entities": "“Declared entity list” on the Data page",
    "entities_from_data": "“Read the entity list from the data” on the Data page",
    "item_features": "“Item features” on the Data page",
    "encoding": "“Text encoding” on the Data page",
    "events": "“Event tables (items)” on the Data page",
    "top_n": "“Top-N” on the Recommend page",
    "round_timeout": "“Round timeout (s)” on the Federate page",
    "prototype_params": "the method's parameters (Advanced) on the Federate page",
    "entity_transform": "“Derived as” (federation key) on the Data page",
    "entity_from": "“Entity from column” on the Data page",
    "entity_col": "“Entity from column” on the Data page",
    "small_entities": "“Entities below the minimum” on the Data page",
    "min_entity_users": "“Minimum users per entity” on the Data page",
    "value_max": "“Declared maximum of one value (public bound)” on the Data page",
    "over_max": "“Declared maximum of one value (public bound)” on the Data page",
    "value_kind": "“Values are” on the Data page",
    "value_col": "“Value” on the Data page",
    "user_col": "“User” on the Data page",
    "attr_user_col": "“User id in the attribute table” on the Data page",
    "item_col": "“Item” on the Data page",
    "item_name_col": "“Item name” on the Data page",
    "duplicates": "“Repeated (user, item) rows” on the Data page",
    "sep": "the file's separator (re-save it as comma- or tab-separated)",
    "event_table": "“Event tables (items)” on the Data page",
    "federation": "“Federation key” on the Data page",
    "epsilon": "“ε per entity” on the Federate page",
    "aggregation": "“Secure aggregation” on the Federate page",
    "mode": "“Observation mode” on the Federate page",
    "metric": "“Headline metric” on the Trade-off page",
    "epsilons": "“ε grid” on the Trade-off page",
    "seeds": "“Seeds” on the Trade-off page",
    "references": "“Reference lines” on the Trade-off page",
    "delta": "“δ” on the Federate page",
    "k": "“k (prototypes per entity)” on the Federate page",
    "rank": "“rank ℓ” on the Federate page",
    "lam": "“λ (ridge)” on the Federate page",
    "split": "“Budget split” (Advanced) on the Federate page",
    "test_fraction": "“Test users per entity” (Advanced) on the Federate page",
    "n_hidden": "“Hidden entries per test user” (Advanced) on the Federate page",
    "max_iter": "“Server / MF iterations” (Advanced) on the Federate page",
    "simulation": "the “Simulation” toggle on the Federate page",
    "site_policy": "“Site policy” (Execution: separate processes) on the Federate page",
    "targets": "“Target users” on the Privacy audit page",
}


#: ``name=value`` (or ``--name value``) of a setting whose control is a switch, in the page's words: a
#: switch is turned on or off, never "set to secure".
SWITCHED = {("aggregation", "secure"): "{control} switched on", ("aggregation", "none"): "{control} switched off"}
#: Values the engine writes after a flag (``--mode zero``): the control set to them. Other words after a
#: flag are the sentence's own ("--k is not used"), never read as its value.
FLAG_VALUES = {("mode", "zero"), ("mode", "observed"), *SWITCHED}


def _control_set_to(control: str, value: str, name: str | None = None) -> str:
    """``name=value`` in the page's words: the control set to the value, a switch turned on or off
    (:data:`SWITCHED`), or the control alone when the value is a placeholder the engine writes for the
    CLI (``items=FILE``, ``epsilon=EPSILON``, ``events=<table>``)."""
    import re

    if (name, value) in SWITCHED:
        return SWITCHED[(name, value)].format(control=control)
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", value):
        return control
    # ``<table>`` ends the sentence in the engine's text: the bare value the regex took keeps its full stop
    bracketed = re.fullmatch(r"<[\w -]+>([.]?)", value)
    return control + bracketed.group(1) if bracketed else f"{control} set to {value}"


def friendly_text(text: str) -> str:
    """A note or forecast of the engine in the page's words (:func:`friendly_message` of the text)."""
    from dpfed_core.errors import DpfedError

    return friendly_message(DpfedError(text))


def friendly_message(exc: BaseException) -> str:
    """An engine error in the page's words: code parameter names (``drop_missing=True``,
    ``entity_transform='prefix:1'``, ``--small-entities``) replaced by the control that sets them.

    Uses the error's ``param`` attribute when the engine sets one (errors carry the
    parameter key), and rewrites ``name=value`` / ``name`` mentions in the text otherwise.
    """
    import re

    from dpfed_core.errors import cut_long_values

    text = cut_long_values(" ".join(str(exc).split()))
    param = getattr(exc, "param", None) or getattr(exc, "parameter", None)
    for name, control in CONTROL_NAMES.items():
        # name=value (value quoted or bare) → the control; a bare code name in backticks or quotes too
        text = re.sub(rf"`?(?<![\w-]){re.escape(name)}\s*=\s*('[^']*'|\"[^\"]*\"|[^\s,;)]+)`?",
                      lambda m, c=control, n=name: _control_set_to(c, m.group(1).strip(chr(39) + chr(34)), n), text)
        for flag_name, value in FLAG_VALUES:  # ``--mode zero``: the control set to that value
            if flag_name == name:
                text = re.sub(rf"--{re.escape(name)}\s+{re.escape(value)}\b",
                              lambda m, c=control, n=name, v=value: _control_set_to(c, v, n), text)
        # a flag with the CLI's placeholder for its value (``--site-policy FILE``) → the control alone
        text = re.sub(rf"--{re.escape(name.replace('_', '-'))}\b(?:\s+[A-Z][A-Z0-9_]*\b(?!\s*=))?", control, text)
        text = re.sub(rf"`{re.escape(name)}`", control, text)
        if "_" in name:  # a bare code name (whole word only; ordinary words are never rewritten)
            text = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", control, text)
    try:  # the engine's own renderer (whole-word parameter names), when it has one
        from dpfed_core.errors import render_message

        text = render_message(text, {k: v for k, v in CONTROL_NAMES.items() if "_" in k})
    except ImportError:
        pass
    if param and param in CONTROL_NAMES and CONTROL_NAMES[param] not in text:
        text += f" (set it with {CONTROL_NAMES[param]})"
    # the message may quote user data (entity, item, file names): shown as inert text
    return escape_md(_place_once(text))


def _place_once(text: str) -> str:
    """Each page named once: a control after the first on the same page keeps only "(Advanced)" where it
    is in that panel, so a sentence naming three controls does not repeat "on the Federate page" three
    times."""
    import re

    said: set[str] = set()

    def once(m: "re.Match[str]") -> str:
        page = m.group(2)
        if page not in said:
            said.add(page)
            return m.group(0)
        return " (Advanced)" if m.group(1) else ""

    return re.sub(r"( \(Advanced\))? on the ([A-Z][\w-]*(?: [a-z][\w-]*)?) page", once, text)


def escape_md(text: object) -> str:
    """User data (entity, item, user names) as inert text inside Markdown: every Markdown and HTML
    metacharacter is backslash-escaped, so ``![x](http://…)`` or ``<img>`` in a name is shown, never
    rendered or fetched."""
    import re

    s = str(text).replace("\r", " ").replace("\n", " ")
    # Markdown/HTML metacharacters, Streamlit's ":shortcode:" / ":color[...]" directives and URL
    # autolinks (":"); quotes, dots and inner hyphens are harmless on one line and stay readable
    s = re.sub(r"([\\`*_{}\[\]()#|<>!~$&:])", r"\\\1", s)
    # Streamlit's Markdown turns URL-looking text into links even when escaped: an invisible word
    # joiner inside "://" and "www." keeps the text as it reads but never makes it a link
    s = s.replace("\\://", "\\:\u2060//").replace("www.", "www\u2060.").replace("WWW.", "WWW\u2060.")
    # a leading number's "." or ")" is escaped, not its first digit: a backslash before a digit is no
    # escape in Markdown and would be shown
    s = re.sub(r"^(\d+)([.)])", r"\1\\\2", s)
    return re.sub(r"^([-+=>])", r"\\\1", s)


AUDIT_USER_CONTROL = "“Specific user id” (Advanced)"


def audit_user_problem(dataset: FederatedDataset, entity: str, user_text: str) -> str | None:
    """Why the Privacy audit page's specific user id is not one of the audited entity's users, in the
    page's words (Markdown), or None. Checked before the Run button, as the command line checks its
    targets before charging: an audit refused only once it ran leaves releases in the entity's budget."""
    from dpfed_core.audit.targets import check_target_users

    uid = str(user_text).strip()
    if not uid:
        return None
    try:
        check_target_users(dataset, entity, [f"user:{uid}"])
    except ConfigError as exc:
        text = " ".join(str(exc).split()).replace("(--entity)", "(“Entity” above)")
        return escape_md(f"{AUDIT_USER_CONTROL}: {text}")
    return None


def check_data_dir(path_text: str, kind: str) -> Path:
    """Resolve a MovieLens / eICU directory typed in the Data page, or raise a DataError that never
    lists a directory (a typed home directory must not reveal what is in it)."""
    need = {"movielens": ("u.data", "ratings.dat", "ratings.csv"),
            "eicu": ("patient.csv", "patient.csv.gz")}[kind]
    box = {"movielens": "MovieLens directory", "eicu": "eICU directory"}[kind]
    text = str(path_text).strip()
    if not text:
        raise DataError(f"Type a path in “{box}”.")
    p = Path(text).expanduser()
    shown = p.name or text
    try:
        ok_dir = p.is_dir()
    except OSError:
        ok_dir = False
    if not ok_dir:
        raise DataError(f"“{box}”: {shown!r} is not a directory this server can read. Check the path.")
    try:
        has = any((p / f).is_file() for f in need)
    except OSError:
        has = False
    if not has:
        raise DataError(f"“{box}”: {shown!r} does not contain {' or '.join(need)}. Point it at the "
                        f"unpacked {'MovieLens 100K / 1M' if kind == 'movielens' else 'eICU'} directory.")
    return p


def load_error_text(exc: BaseException) -> str:
    """A loader error in the Data page's words. Values above the declared maximum are said without any
    of them (advice about a public bound never echoes the private data); an unusable bound itself (0,
    negative, not a number) is the engine's own message, naming the control."""
    if isinstance(exc, DataError) and (getattr(exc, "param", None) == "value_max" or "value_max" in str(exc)):
        return ("Some values are above the declared maximum. Set “Declared maximum of one value (public bound)” "
                "from the scale's public definition (e.g. 5 for 1–5 stars, a protocol's maximum count), never "
                "from the data.")
    return friendly_message(exc)


def safe_loader_message(exc: BaseException) -> str:
    """A loader error for a path box without any directory listing ("found: a, b, c …"): the parts the
    loader marked as listings (:attr:`~dpfed_core.errors.DpfedError.listing`) are cut exactly; any other
    "found: …" runs to the end of its sentence (a file name's own dots do not end it)."""
    import re

    text = str(exc)
    for part in getattr(exc, "listing", ()) or ():
        if part:
            text = text.replace(part, "")
    text = re.sub(r"\(?(found|contains|it has|files?)\s*:\s*.*?(?:\.(?=\s|$)|[;)]|$)", "", text, flags=re.I | re.S)
    text = re.sub(r"Did you mean:[^?]*\?", "", text)
    text = re.sub(r"\s{2,}", " ", text).strip()
    return friendly_message(type(exc)(text) if isinstance(exc, DataError) else DataError(text))


def default_data_path(kind: str) -> str:
    """Default text of the path box for a real loader: ``../shared/data/…`` if it exists."""
    rel = {"movielens": "../shared/data/ml-100k", "eicu": "../shared/data/eicu-demo"}[kind]
    p = Path(rel)
    return rel if p.exists() else ""


#: The limits of k and rank are the engine's, as the CLI's: checked in place so that an out-of-range
#: value disables Run with a message instead of being clamped silently.


def check_k_rank(k: int | None, rank: int, ds: "FederatedDataset | None" = None) -> list[str]:
    """Problems with k (None: the method does not use it) and the rank, in the Federate page's words;
    an empty list when both are usable. The rank is also bounded by the number of items."""
    out = []
    if k is not None and not 1 <= k <= MAX_K:
        out.append(f"“k (prototypes per entity)” must be a whole number from 1 to {MAX_K:,}; it is {k}.")
    top = MAX_RANK if ds is None else max(1, min(MAX_RANK, int(ds.n_items)))
    if not 1 <= rank <= top:
        why = f" (the smaller of {MAX_RANK:,} and the data's {ds.n_items:,} items)" if ds is not None else ""
        out.append(f"“rank ℓ (latent factors)” must be a whole number from 1 to {top}{why}; it is {rank}.")
    return out
