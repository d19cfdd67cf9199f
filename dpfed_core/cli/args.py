"""Argument parsing shared by every sub-command (data source, model, lists of numbers).

Neutral ground: the commands import these helpers; nothing in the engine imports the CLI.
"""
from __future__ import annotations

import argparse
import math
import os
import re

from collections.abc import Iterable
from pathlib import Path

from dpfed_core.config import MAX_K, MAX_LAM, MAX_RANK, MAX_SEED, RunConfig, check_epsilon
from dpfed_core.data.inputs import check_output_not_input, check_regular_file, strict_float, strict_int
from dpfed_core.errors import DpfedError

#: Seconds between two progress lines when stderr is not a terminal (a log, CI, a pipe: no bar can
#: be drawn there), so a long run, sweep or audit is never silent.
PLAIN_PROGRESS_SECONDS = 5.0


class PlainProgress:
    """Progress as plain lines on stderr, at most one every :data:`PLAIN_PROGRESS_SECONDS`: what a
    command shows where its bar cannot be drawn."""

    def __init__(self, desc: str) -> None:
        import time

        self.desc, self._clock = desc, time.perf_counter
        self._said = self._clock()

    def say(self, text: str) -> None:
        """Print ``desc: text`` when the last line is old enough; else nothing."""
        import sys

        now = self._clock()
        if now - self._said >= PLAIN_PROGRESS_SECONDS:
            self._said = now
            print(f"{self.desc}: {text}", file=sys.stderr, flush=True)


#: Python parameter names → the CLI flags that set them: errors raised anywhere in the engine name
#: their parameter by its Python name; the CLI renders them with these (``DpfedError.render``).
CLI_NAMES = {
    "user_col": "--user-col", "item_col": "--item-col", "value_col": "--value-col", "entity_col": "--entity-col",
    "entity_from": "--entity-from", "entity_transform": "--entity-transform", "item_name_col": "--item-name-col",
    "value_kind": "--value-kind", "value_max": "--value-max", "federation": "--federation", "entity": "--federation",
    "events": "--events", "event_table": "--events", "exclude_entities": "--exclude-entities", "items": "--items",
    "drop_missing": "--drop-missing", "duplicates": "--duplicates", "top_n": "--top-n",
    "server_weighting": "--server-weighting", "prototype_params": "--param", "n_jobs": "--param n_jobs",
    "split": "--param split",
    "min_entity_users": "--min-entity-users", "small_entities": "--small-entities",
    "min_item_users": "--min-item-users", "epsilon": "--epsilon", "delta": "--delta", "rank": "--rank",
    "seed": "--seed", "metric": "--metric", "resume": "--resume", "out": "--out", "data": "--data",
    "k": "--k", "lam": "--lam", "mode": "--mode", "method": "--method", "epsilons": "--epsilons",
    "seeds": "--seeds", "references": "--references", "compare": "--compare", "methods": "--methods",
    "entities": "--entities", "entities_from_data": "--entities-from-data", "item_features": "--item-features",
    "encoding": "--encoding", "no_header": "--no-header", "store": "--store", "max_dropouts": "--max-dropouts", "aggregation": "--aggregation",
    "max_iter": "--max-iter", "test_fraction": "--test-fraction", "n_hidden": "--n-hidden",
    "runs": "--runs", "targets": "--targets", "attacks": "--attacks", "confidence": "--confidence",
    "round_timeout": "--round-timeout", "power_factor": "--power-check",
    "others": "--others", "sweep": "--sweep", "audit": "--audit",
}


#: One-line help of every sub-command: the command list shows it without importing the command's
#: module (start-up: ``methods`` must not pay for ``audit``'s or ``budget``'s imports).
COMMAND_HELP = {
    "audit": "membership-inference audit of one entity's round-1 release",
    "report": "self-contained HTML compliance report from result documents",
    "deploy-local": "run the protocol as a real local Flower deployment",
    "write-shards": "write one shard file per entity (a node's only data)",
    "budget": "privacy budget odometer: show / set-cap / releases / list",
    "site": "a deployment site's own release log and remaining budget (from its store)",
}

def parse_float(text: str) -> float:
    """A number written in ASCII decimal (``1``, ``0.5``, ``1e-6``) or ``inf``; ``1_0``, ``nan``,
    full-width digits and values that overflow to infinity (``1e400``) are refused."""
    try:
        v = strict_float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number such as 0.5 or 1e-6, or 'inf', got {text!r}") from None
    if math.isinf(v) and strict_float_is_overflow(text):
        # '1e400' overflows to inf: refuse it rather than silently run a non-private point
        raise argparse.ArgumentTypeError(f"expected a finite number or the word 'inf', got {text!r}")
    return v


def strict_float_is_overflow(text: str) -> bool:
    """True when ``text`` is a numeral (not the word inf) whose value overflows to infinity."""
    return text.strip().lower() not in ("inf", "+inf", "infinity", "+infinity", "∞")


def finite_float(text: str) -> float:
    """A finite number (``--delta``, ``--lam``, …)."""
    v = parse_float(text)
    if math.isinf(v):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return v


def positive_seconds(text: str) -> float:
    """A wait in seconds (``--round-timeout``): a finite number > 0. A server that waited ``nan`` or ``-5``
    seconds for a reply would never time out or would give up before any node answered."""
    try:
        v = parse_float(text)
    except argparse.ArgumentTypeError:
        v = math.nan
    if not (math.isfinite(v) and v > 0):
        raise argparse.ArgumentTypeError(f"expected a number of seconds > 0 such as 600, got {text!r}")
    return v


def whole_number(text: str) -> int:
    """A whole number in ASCII digits (``1_0``, ``2.0`` and full-width digits refused)."""
    try:
        return strict_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number such as 10, got {text!r}") from None


def float_list(text: str) -> list[float]:
    parts = text.split(",")
    if any(not t.strip() for t in parts) and text.strip():
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r} (an empty entry between "
                                         "commas: write e.g. 1,2)")
    vals = [parse_float(t) for t in parts if t.strip()]
    if not vals:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}")
    return vals


def positive_whole_number(text: str) -> int:
    """A whole number ≥ 1 (``--rank`` of the audit's V attack, …)."""
    v = whole_number(text)
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 1, got {text!r}")
    return v


def shrink_factor(text: str) -> float:
    """``--power-check``: the factor the noise is shrunk by, a finite number > 1."""
    v = parse_float(text)
    if not (math.isfinite(v) and v > 1):
        raise argparse.ArgumentTypeError(f"expected the factor the noise is shrunk by, a number > 1 such as 50, "
                                         f"got {text!r}")
    return v


def int_list(text: str) -> list[int]:
    try:
        vals = [strict_int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None
    if not vals:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}")
    return vals


def seed_list(text: str) -> list[int]:
    """Comma-separated seeds, each from 0 to 2^63 − 1."""
    vals = int_list(text)
    bad = [v for v in vals if not 0 <= v <= MAX_SEED]
    if bad:
        raise argparse.ArgumentTypeError(f"a seed must be a whole number from 0 to 2^63 − 1, got {bad[0]}")
    return vals


def name_list(text: str) -> list[str]:
    """Comma-separated names, a name holding a comma in double quotes (:func:`split_names`)."""
    from dpfed_core.data.inputs import split_names

    try:
        return split_names(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_data_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("data")
    g.add_argument("--data", required=True, help="sample:synthetic | sample:clinic | MovieLens dir | eICU dir | CSV/Parquet file")
    g.add_argument("--user-col", help="long table: user id column")
    g.add_argument("--item-col", help="long table: item column")
    g.add_argument("--value-col", help="long table: value column (omit for implicit 1s)")
    g.add_argument("--entity-col", help="long table: column holding the entity (federation key)")
    g.add_argument("--entity-from", help="long table: derive the entity from this column …")
    g.add_argument("--entity-transform",
                   help="… with this transform: first_digit (a ZIP code's first digit; values not starting with a "
                        "digit are one entity 'other') | first_char (the first character, whatever it is) | prefix:N")
    g.add_argument("--item-name-col", help="long table: readable item names")
    g.add_argument("--value-kind", choices=["ratings", "counts", "implicit"],
                   help="what values mean; without it: from the value column's name (rating/stars/score → ratings, "
                        "count/n/events/… → counts; no --value-col → counts), said in the output")
    g.add_argument("--value-max", type=parse_float,
                   help="declared public upper bound of one value (e.g. 5 for ratings, ≤ 1e9); above it ratings "
                        "are an error and counts are kept with a note (DP mechanisms clip them)")
    g.add_argument("--federation",
                   help="the entity key — MovieLens: zip (default, first digit of the ZIP code), occupation, "
                        "gender or age | eICU: hospitalid (default) or region | sample:clinic: hospital or region")
    g.add_argument("--events",
                   help="eICU: event table(s), comma-separated: medication (default), lab, treatment, diagnosis, "
                        "infusionDrug or any table with patientunitstayid and a …name/…string column "
                        "(or TABLE:COLUMN)")
    g.add_argument("--items", metavar="FILE",
                   help="declared public item catalogue (formulary): one item per line, taken whole (commas, "
                        "'|' and spaces are part of the name; a line in double quotes is the field they hold; a "
                        "header line such as 'item' is recognised), or "
                        "CSV under a header 'id,name'. It decides what the federation shares; the data's items "
                        "outside it stay their entities' own (never shared, scored by each entity's own model). "
                        "Without it a DP run selects its catalogue by DP partition selection, charged to the ledger")
    g.add_argument("--exclude-entities", type=name_list, metavar="NAMES",
                   help="small or unwanted entities to leave out, by name (comma-separated; a name holding a "
                        "comma in double quotes: '\"A, ward\",B'): a public declaration — no entity is dropped for "
                        "its true size")
    g.add_argument("--entities", metavar="FILE",
                   help="the declared federation: one entity name per line (a header line is recognised), as "
                        "written in the entity column. Entities without users take part with an all-zero "
                        "contribution; rows of other entities are dropped with a note. Needed for a DP run on a "
                        "long table (MovieLens, eICU and the samples declare theirs from public metadata)")
    g.add_argument("--entities-from-data", action="store_true",
                   help="long table without --entities: accept that the entity list is read from the private "
                        "data; the privacy statement then says that membership of an entity is not protected")
    g.add_argument("--item-features", metavar="FILE",
                   help="public item features: CSV with a header, the item id then feature columns — numbers, "
                        "or categories such as a drug class or 'Comedy|Drama' (one 0/1 column per value two or "
                        "more items share); attached to the dataset as public input (no privacy cost)")
    g.add_argument("--encoding",
                   help="text encoding of the data and list files (e.g. utf-8, latin-1, cp1252); without it the "
                        "whole file is checked: UTF-8, or latin-1 when it has no UTF-8 character, else an error")
    g.add_argument("--no-header", action="store_true",
                   help="table file whose first line is data, not a header: its columns are named 'column 1' … "
                        "'column N' (a file of a known header-less format, such as MovieLens' u.data or u.user, "
                        "takes its documented names: 'user id', 'item id', 'rating' …), as the Data page names them")
    g.add_argument("--drop-missing", action="store_true",
                   help="long table: leave out rows with an empty user, item, value or entity, or a missing "
                        "number (NaN, NA, null) as the value (counted in a note), instead of stopping at the first")
    g.add_argument("--duplicates", choices=["last", "mean", "sum", "error"],
                   help="long table: repeated (user, item) rows of ratings keep the last (default) or their mean; "
                        "counts always add up (sum) and implicit data keep one, so another rule is refused for them; "
                        "error stops at a repeated row of any kind")
    g.add_argument("--min-entity-users", type=int, help=argparse.SUPPRESS)  # removed: named in the error


def add_model_args(p: argparse.ArgumentParser) -> None:
    """The run's settings. A flag left out takes the dashboard's default for the loaded data
    (:func:`dpfed_core.evaluation.defaults.default_config`), so both front ends start from one
    configuration; ``run_config`` fills them in once the data is loaded."""
    g = p.add_argument_group("model (a flag left out takes the dashboard's default for the data)")
    g.add_argument("--method", help="see `python -m dpfed_core methods` (default: the recommended DP method, "
                                    "dp-cooccurrence with secure aggregation, as on the dashboard)")
    g.add_argument("--epsilon", type=parse_float,
                   help="ε per entity for DP methods (default: the dashboard's, 3 as measured for dp-cooccurrence, "
                        "for every method; inf = non-private)")
    g.add_argument("--delta", type=finite_float, help="δ per entity for DP methods (default 1e-6)")
    g.add_argument("--k", type=whole_number,
                   help="prototypes per entity, prototype methods only (default 10, never read off the data; a DP "
                        "prototype method chooses its k per entity up to it from its released noisy size)")
    g.add_argument("--rank", type=whole_number, help="latent factors ℓ (default: 8 as measured for dp-cooccurrence, for "
                                                     "every method)")
    g.add_argument("--lam", type=finite_float, help="ridge penalty λ (default 0.1)")
    g.add_argument("--mode", choices=["zero", "observed"], help="observation mode: zero (absent = 0; default for counts/implicit, "
                        "and for a sweep's ranking crossings) or observed (only observed entries; default for ratings)")
    g.add_argument("--seed", type=seed_int, default=0,
                   help="seed of the split and of every non-private step (default 0); DP noise comes from "
                        "the operating system's entropy unless --simulation is given")
    g.add_argument("--simulation", action="store_true",
                   help="reproducible DP noise from --seed, for tests and benchmarks: the output is labelled "
                        "'simulation: noise reproducible, no privacy claim'")
    g.add_argument("--max-iter", type=whole_number,
                   help="server / matrix-factorisation iterations (default 100, as on the dashboard)")
    g.add_argument("--test-fraction", type=finite_float,
                   help="share of each entity's users held out for testing (default 0.2)")
    g.add_argument("--n-hidden", type=whole_number, help="hidden entries per test user (default 5)")
    g.add_argument("--top-n", type=whole_number, default=None, help="N of precision/recall/NDCG@N (default 10; at most the number of items)")
    g.add_argument("--server-weighting", choices=["none", "counts"],
                   help="prototype methods: weight prototypes by released cluster sizes at the server (default none)")
    g.add_argument("--aggregation", choices=["none", "secure"],
                   help="trust model of summable releases (dp-popularity, dp-cooccurrence, dp-als): secure = secure "
                        "aggregation, each entity adds a share of the noise and the server learns only the sum "
                        "(default for dp-cooccurrence, as measured); none = every entity adds the full noise and "
                        "the server sees each release")
    g.add_argument("--max-dropouts", type=whole_number,
                   help="with --aggregation secure: entities that may drop out of the secure sum; the noise "
                        "shares are sized for it (default 0)")
    g.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                   help="a method parameter, repeatable (e.g. --param support=20, --param "
                        "split=catalogue:0.2,popularity:0.4,co-occurrence:0.4); `methods --params` lists them. "
                        "They are --method's: methods of --compare and references run with their own defaults")


def seed_int(text: str) -> int:
    try:
        v = strict_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number ≥ 0, got {text!r}") from None
    if not 0 <= v <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"a seed must be a whole number from 0 to 2^63 − 1, got {text}")
    return v


def list_params(methods: Iterable[str]) -> set[str]:
    """The list parameters (kind ``floats``) the named methods declare, for :func:`parse_params` (a name
    that is no method declares none: its refusal is given where the method is looked up)."""
    from dpfed_core.methods import available_methods, get_method

    return {p.name for m in dict.fromkeys(methods) if m in available_methods()
            for p in get_method(m).parameters if p.kind == "floats"}


def parse_params(items: list[str], lists: frozenset[str] | set[str] = frozenset()) -> dict:
    """``--param KEY=VALUE`` items as a dict of Python values. ``lists``: the method's list parameters
    (kind ``floats``), whose comma-separated value is kept as written for the parameter to read as its
    numbers (``--param values=1,2,3``) rather than refused as one malformed number."""
    out = {}
    for it in items:
        if "=" not in it or not it.split("=", 1)[0].strip():
            raise DpfedError(f"--param expects KEY=VALUE, got {it!r}", param="prototype_params")
        k, v = it.split("=", 1)
        if k.strip().replace("-", "_") in out:  # the later would win without a word
            raise DpfedError(f"--param {k.strip()} is given more than once; give each parameter once",
                             param="prototype_params")
        if v.strip().lower() == "none":
            out[k.strip().replace("-", "_")] = None
            continue
        vl = v.strip()
        val: object
        if vl.lower() in ("true", "false"):
            val = vl.lower() == "true"
        else:
            try:
                val = strict_int(vl)
            except ValueError:
                try:
                    val = parse_float(vl)
                except argparse.ArgumentTypeError:
                    if k.strip().replace("-", "_") in lists and "," in vl:
                        out[k.strip().replace("-", "_")] = vl
                        continue
                    if re.fullmatch(r"[\d_.,eE+-]+", vl) and re.search(r"\d", vl) or \
                            any(ch.isdigit() and not ch.isascii() for ch in vl) or vl.lower() == "nan":
                        # looks like a number but is not one as written (1_0, 1,5, 1e400, nan, full-width)
                        raise DpfedError(f"--param {k.strip()}={vl}: not a number as written; use ASCII digits "
                                         "such as 10, 0.5 or 1e-3", param="prototype_params") from None
                    val = vl
        out[k.strip().replace("-", "_")] = val
    return out


def _check_encoding_name(encoding: str) -> None:
    import codecs

    try:
        codecs.lookup(encoding)
    except LookupError:
        raise DpfedError(f"--encoding {encoding!r} is not a known text encoding; e.g. utf-8, latin-1, cp1252",
                         param="encoding") from None


def input_paths(args) -> list[tuple[str, object]]:
    """(flag, path) of every file the command reads — the data, lists, a resumed document and the budget
    store — so that no output can name one of them."""
    out = []
    for attr, flag in (("data", "--data"), ("items", "--items"), ("entities", "--entities"),
                       ("item_features", "--item-features"), ("resume", "--resume"), ("run", "--run"),
                       ("sweep", "--sweep"), ("audit", "--audit")):
        v = getattr(args, attr, None)
        if isinstance(v, str) and v:
            out.append((flag, v))
    from dpfed_core.privacy.store import resolve_store_path

    store = resolve_store_path(getattr(args, "store", None))
    out.append(("--store" if getattr(args, "store", None) else "budget store", str(store)))
    for suffix in ("-wal", "-shm", "-journal"):  # SQLite's companion files are the store too
        out.append(("budget store", str(store) + suffix))
    return out


def check_outputs(args, *outs: tuple[str, object], rewritable: tuple[str, ...] = ()) -> None:
    """Fail before any work when an output (flag, path) is an input of the command: the same path, a
    symbolic link or a hard link (then writing it would destroy the data, a list or the budget store).
    ``rewritable``: input flags whose file the command is meant to rewrite (``sweep --resume``)."""
    ins = [(f, p) for f, p in input_paths(args) if f not in rewritable]
    for flag, path in outs:
        if path:
            check_output_not_input(path, ins, flag=flag)


def load_dataset(args, entities: list[str] | None = None, undeclared_entities: str = "drop"):
    """The data the flags name; ``entities``: a declared entity list given otherwise than by --entities
    (write-shards' --declared-entities), read as the declared federation; ``undeclared_entities``: what
    rows of other entities get ("drop" with a note, or "error")."""
    from dpfed_core.data.loaders import load_data

    opts = {
        "user_col": args.user_col, "item_col": args.item_col, "value_col": args.value_col,
        "entity_col": args.entity_col, "entity_from": args.entity_from,
        "entity_transform": args.entity_transform, "item_name_col": args.item_name_col,
        "value_kind": args.value_kind, "value_max": args.value_max, "federation": args.federation,
        "events": args.events, "min_entity_users": args.min_entity_users, "items": args.items,
        "exclude_entities": args.exclude_entities, "entities": args.entities,
        "entities_from_data": args.entities_from_data or None, "item_features": args.item_features,
        "encoding": args.encoding, "drop_missing": args.drop_missing or None, "duplicates": args.duplicates,
        "no_header": args.no_header or None,
        "undeclared_entities": None if undeclared_entities == "drop" else undeclared_entities,
    }
    # every file argument: a regular file (a FIFO or a device would block or never end), before reading
    for key, flag, what in (("items", "--items", "item list"), ("entities", "--entities", "entity list"),
                            ("item_features", "--item-features", "item features file")):
        if opts.get(key) is not None:
            check_regular_file(opts[key], what=f"{flag}", param=key)
    if entities is not None and opts.get("entities") is None:
        opts["entities"] = list(entities)
    opts = {k: v for k, v in opts.items() if v is not None}
    if "encoding" in opts:
        _check_encoding_name(opts["encoding"])
    spec = str(args.data)
    if not spec.startswith(("sample:", "synthetic", "movielens:")) and Path(spec).is_file():
        opts["progress"] = _read_progress(Path(spec))
    try:
        return load_data(args.data, **opts)
    finally:
        bar = opts.get("progress")
        if bar is not None:
            bar.close()


class _read_progress:
    """Rows read so far, on stderr (only for files big enough to take a while)."""

    def __init__(self, path: Path) -> None:
        self.bar = None
        self.big = path.stat().st_size > 20e6

    def __call__(self, rows: int) -> None:
        if not self.big:
            return
        if self.bar is None:
            import sys

            from tqdm import tqdm

            self.bar = tqdm(desc="reading", unit=" rows", file=sys.stderr, leave=False, disable=None)
        self.bar.update(rows - self.bar.n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def default_mode(dataset) -> str:
    """SPEC §1: ``zero`` for counts and implicit data, ``observed`` for explicit ratings."""
    from dpfed_core.evaluation.defaults import default_mode as shared

    return shared(dataset)


def unused_flags(args, method: str) -> list[tuple[str, str]]:
    """(flag, why) for each flag given on the command line that ``method`` does not use."""
    from dpfed_core.federation.protocol import PROTOTYPE_METHODS, is_summable
    from dpfed_core.methods import METHODS, available_methods

    available_methods()
    spec = METHODS.get(method)
    if spec is None:
        return []
    out = []
    if not spec.uses_epsilon:
        why = f"{method} is not a DP method ({spec.privacy_model.label}): it spends no ε and adds no noise"
        out += [(f, why) for f, v in (("--epsilon", args.epsilon), ("--delta", args.delta)) if v is not None]
        out += [("--epsilons", why)] if getattr(args, "epsilons_given", False) else []
    if args.k is not None and not spec.uses_k:
        out.append(("--k", f"{method} sends no prototypes, so it has no k"))
    if not is_summable(method):
        from dpfed_core.federation.summable import SUMMABLE_METHODS

        why = (f"{method} is not a summable method (only {', '.join(sorted(SUMMABLE_METHODS))} use secure "
               "aggregation)")
        # (--max-dropouts on such a method is refused by the run service's own check)
        out += [("--aggregation", why)] if args.aggregation is not None else []
    if args.server_weighting is not None and method not in PROTOTYPE_METHODS:
        out.append(("--server-weighting", f"{method} sends no prototypes to weight"))
    return out


def check_unused_flags(args, method: str) -> None:
    """Refuse a flag the chosen method would ignore, naming it: a privacy flag ignored in silence
    (``--epsilon 1`` on a non-private method) would let a non-private release pass for a private one."""
    bad = unused_flags(args, method)
    if bad:
        flag, why = bad[0]
        others = [f for f, _ in bad[1:]]
        more = f" (also {', '.join(others)})" if others else ""
        raise DpfedError(f"{flag} is not used by --method {method}: {why}; drop {flag}{more} or choose a "
                         "method that uses it (`python -m dpfed_core methods`)", param="method")


def run_config(args, dataset) -> RunConfig:
    """The run's configuration from the flags, validated against the data's public shape before any
    computation (nothing is computed before every flag is known to be usable). A flag left
    out takes the shared default (:func:`dpfed_core.evaluation.defaults.default_config`)."""
    from dpfed_core.evaluation.defaults import default_config, default_method

    if args.method is None:
        args.method = default_method()
    from dpfed_core.methods import available_methods

    base = default_config(dataset, args.method if args.method in available_methods() else None)

    def given(name, fallback):
        v = getattr(args, name, None)
        return fallback if v is None else v

    params = parse_params(args.param, list_params([args.method]))
    n_jobs = params.pop("n_jobs", 1)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    if isinstance(n_jobs, int) and not isinstance(n_jobs, bool) and n_jobs > cores:
        # n_jobs=100000 started 220+ worker processes; more workers than cores only thrash
        raise DpfedError(f"{n_jobs} worker processes (n_jobs) are more than the {cores} cores of this machine; "
                         f"use 1 to {cores}, or -1 for all of them", param="n_jobs")
    for eps in getattr(args, "epsilons", None) or []:
        check_epsilon(eps, "epsilons")
    if args.epsilon is not None:
        check_epsilon(args.epsilon, "epsilon")
    for key, flag in (("k", "--k"), ("value_max", "--value-max"), ("epsilon", "--epsilon"), ("delta", "--delta"),
                      ("max_iter", "--max-iter"), ("rank", "--rank"), ("lam", "--lam")):
        if key in params:
            # the key written with a hyphen: a Python name here would be rendered as its flag
            raise DpfedError(f"--param {key.replace('_', '-')}=… is a main setting, not a method parameter: use "
                             f"{flag} instead", param="prototype_params")
    for name, flag in (("delta", "--delta"), ("lam", "--lam")):
        v = getattr(args, name)
        if v is not None and not math.isfinite(v):
            raise DpfedError(f"{flag} must be a finite number, got {v}", param=name)
    if args.lam is not None and args.lam > MAX_LAM:
        raise DpfedError(f"--lam {args.lam:g} is above {MAX_LAM:g}; the ridge penalty would swamp every fit", param="lam")
    tf = getattr(args, "test_fraction", None)
    if tf is not None and not 0.0 < tf < 1.0:
        raise DpfedError(f"--test-fraction {tf:g} must be strictly between 0 and 1 (e.g. 0.2): some users train "
                         "and some are tested", param="test_fraction")
    max_rank = min(MAX_RANK, dataset.n_items)
    # the default rank is checked too: the dashboard refuses it on data with fewer items, and a run
    # that went ahead fitted more factors than items and printed nan metrics
    rank = given("rank", base.rank)
    if isinstance(rank, int) and rank > max_rank:
        which = f"--rank {rank}" if args.rank is not None else f"the default rank {rank} (--rank)"
        raise DpfedError(f"{which} is more than the data allows: at most {max_rank} (the smaller of "
                         f"{MAX_RANK} and the {dataset.n_items} items); pass --rank {max_rank} or less",
                         param="rank")
    if isinstance(args.k, int) and args.k > MAX_K:
        raise DpfedError(f"--k {args.k} is above {MAX_K} prototypes per entity; lower it", param="k")
    if isinstance(args.top_n, int) and args.top_n > dataset.n_items:
        # the metrics would score a list longer than the catalogue: precision@N could never reach 1
        raise DpfedError(f"--top-n {args.top_n} is more than the {dataset.n_items} items of these data: a top-N "
                         f"list holds at most {dataset.n_items}; pass --top-n {dataset.n_items} or less",
                         param="top_n")
    config = RunConfig(
        method=args.method, epsilon=given("epsilon", base.epsilon), delta=given("delta", base.delta),
        k=given("k", base.k), rank=given("rank", base.rank), lam=given("lam", base.lam),
        mode=args.mode or base.mode, seed=args.seed, simulation=args.simulation, top_n=given("top_n", base.top_n),
        max_iter=given("max_iter", base.max_iter), test_fraction=given("test_fraction", base.test_fraction),
        n_hidden=given("n_hidden", base.n_hidden), server_weighting=given("server_weighting", base.server_weighting),
        prototype_params=params, n_jobs=n_jobs,
        aggregation=given("aggregation", base.aggregation), max_dropouts=given("max_dropouts", base.max_dropouts),
    )
    if args.method not in available_methods():
        # the registry's own message, tagged with the flag that chose the method, as --compare's is
        from dpfed_core.methods import get_method

        try:
            get_method(args.method)
        except DpfedError as exc:
            raise DpfedError(str(exc), param="method") from None
    check_unused_flags(args, args.method)
    return config


def add_store_args(p: argparse.ArgumentParser, charging: bool = True) -> None:
    """``--store`` (the odometer + history file) and, for commands that release, ``--allow-non-private``."""
    g = p.add_argument_group("privacy budget store")
    g.add_argument("--store", metavar="FILE",
                   help="SQLite store of the privacy budget odometer and run history (default: $DPFED_STORE, "
                        "else $XDG_DATA_HOME/dpfed/dpfed.sqlite3, i.e. ~/.local/share/dpfed/dpfed.sqlite3)")
    if charging:
        g.add_argument("--allow-non-private", action="store_true",
                       help="on a dataset with a budget cap, allow releases without a DP guarantee (ε = inf, "
                            "central/kmeans/popularity references, audits); they are recorded as non-private")


def preflight(dataset, config: RunConfig, extra_methods=(), extra_param: str = "compare") -> None:
    """Every check of the run service (:func:`~dpfed_core.evaluation.service.check_run`: the
    configuration, every method and its ``--param`` against the data's public shape, a declared
    federation for DP runs) before the first computation, not after a whole sweep."""
    from dpfed_core.evaluation.service import check_run

    check_run(dataset, config, extra_methods, extra_param)
