"""What goes on the wire of a deployment, and how its size is measured.

``message_bytes`` is the size of a Flower message as Flower serialises it for transport: Flower 1.42
splits a message into content-addressed objects (the message, its record dict, each record, each
array chunk) and pushes each object's ``deflate()`` bytes over HTTP. The sum over the message's
distinct objects is what crossed the wire, without HTTP/TLS framing (a few hundred bytes per request).
"""
from __future__ import annotations

import dataclasses
import json
import math

#: Run-config keys the launcher sets (see ``app/pyproject.toml``).
RUN_CONFIG_KEYS = ("config", "n-entities", "out", "progress", "round-timeout", "connect-timeout", "dump-dir")


def message_bytes(msg) -> int:
    """Bytes of ``msg`` (a ``flwr.app.Message``) as serialised for transport."""
    from flwr.supercore.inflatable.inflatable_object import get_all_nested_objects

    return int(sum(len(obj.deflate()) for obj in get_all_nested_objects(msg).values()))


def dumps(obj) -> str:
    """JSON for metadata that crosses the wire (∞ as the string "inf", NaN as null)."""
    def fix(v):
        if isinstance(v, float):
            if math.isnan(v):
                return None
            if math.isinf(v):
                return "inf" if v > 0 else "-inf"
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [fix(x) for x in v]
        return v
    return json.dumps(fix(obj))


def loads(text: str):
    def fix(v):
        if v == "inf":
            return math.inf
        if v == "-inf":
            return -math.inf
        if isinstance(v, dict):
            return {k: fix(x) for k, x in v.items()}
        if isinstance(v, list):
            return [fix(x) for x in v]
        return v
    return fix(json.loads(text))


def ledger_rows_to_json(rows) -> str:
    return dumps([dataclasses.asdict(r) for r in rows])


#: Field of the run's public JSON naming how the item catalogue is fixed: ``"declared"`` (a public
#: list; the shard's columns) or ``"secure"`` (no declared list: a federation-wide DP selection by one
#: secure sum before the method, :mod:`dpfed_core.privacy.catalogue`). A public fact of the run.
CATALOGUE_FIELD = "item_catalogue"
CATALOGUES = ("declared", "secure")


#: Field of the run's public JSON with the declared catalogue's size (the length of every shard's
#: item axis; public: the declared list is, and every message of the method has that shape). Lets
#: the server fuse stages whose inputs it fixes (``federation.summable.fused_stages``).
CATALOGUE_SIZE_FIELD = "catalogue_size"


def run_json(config, item_catalogue: str = "declared", catalogue_size: int | None = None) -> str:
    """The run's public JSON as the launcher submits it and every message repeats it: the
    :class:`~dpfed_core.config.RunConfig`, how the item catalogue is fixed and, for a declared
    catalogue, its size."""
    if item_catalogue not in CATALOGUES:
        raise ValueError(f"item catalogue {item_catalogue!r}: expected one of {CATALOGUES}")
    extra = {CATALOGUE_SIZE_FIELD: int(catalogue_size)} if catalogue_size is not None and item_catalogue == "declared" else {}
    return dumps({**config.to_dict(), CATALOGUE_FIELD: item_catalogue, **extra})


def catalogue_from_json(text: str) -> str:
    """How the run's item catalogue is fixed (``"declared"`` when the JSON does not say)."""
    return str(loads(text).get(CATALOGUE_FIELD, "declared"))


def catalogue_size_from_json(text: str) -> int | None:
    """The declared catalogue's size, when the run's JSON states it (None otherwise)."""
    size = loads(text).get(CATALOGUE_SIZE_FIELD)
    return None if size is None else int(size)


def config_from_json(text: str):
    """A :class:`~dpfed_core.config.RunConfig` from the run's JSON (as sent in round 1)."""
    from dpfed_core.config import RunConfig
    from dpfed_core.errors import ConfigError

    d = loads(text)
    if not isinstance(d, dict):
        raise ConfigError("the run JSON is not an object of named fields")
    d.pop(CATALOGUE_FIELD, None)
    d.pop(CATALOGUE_SIZE_FIELD, None)
    unknown = sorted(set(d) - {f.name for f in dataclasses.fields(RunConfig)})
    if unknown:  # named, not a Python argument error: a coordinator of another dpfed version sends such fields
        raise ConfigError(f"the run JSON has field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                          "this node does not know (a coordinator of another dpfed version?)")
    for key in ("epsilon", "delta"):
        if d.get(key) is None:
            d[key] = math.nan
    return RunConfig(**d)


#: Joins the names of the stages one secure sum carries, in the share instructions' ``stage`` field
#: and in the message log (e.g. ``popularity+co-occurrence``; ``federation.summable.fused_stages``).
SUM_OF_STAGES = "+"


#: Fields of a secure sum's share instructions (FitIns config) that carry the previous stage's public
#: result (server_app.broadcast_public): the stage it follows, and its arrays (``pack_arrays``).
PUBLIC_AFTER_FIELD = "public-after"
PUBLIC_FIELD = "public"


def pack_arrays(arrays: dict) -> bytes:
    """Named NumPy arrays as one ``.npz`` byte string (no pickles), for a config record."""
    import io

    import numpy as np

    buf = io.BytesIO()
    np.savez(buf, **{k: np.ascontiguousarray(v) for k, v in arrays.items()})
    return buf.getvalue()


def unpack_arrays(data: bytes) -> dict:
    """The arrays of :func:`pack_arrays` (object arrays refused: nothing executable travels)."""
    import io

    import numpy as np

    with np.load(io.BytesIO(bytes(data)), allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def secagg_shares(n_nodes: int, max_dropouts: int) -> int:
    """SecAgg+'s key shares per node (the node's neighbourhood, itself included) for a secure sum of
    ``n_nodes`` tolerating ``max_dropouts`` — a public rule every site can recompute:
    k = ⌈3·log₂ n⌉ + 2d, made odd, at least 2d + 3, at most n (every node; SecAgg's full graph).

    Why: with every node sharing with every other, key shares grow as n² (30 sites: 870 encrypted
    shares a round); SecAgg+ (Bell et al. 2020) needs neighbourhoods of O(log n) for its guarantee.
    The threshold is k − d (:func:`secagg_threshold`): d lost neighbours still leave enough shares to
    rebuild a live node's mask seed, and fewer than k − d colluding neighbours learn nothing of it.
    3 sites: 3 (all); 30: 15; 100: 21; 1000: 31 (d = 0)."""
    n, d = int(n_nodes), int(max_dropouts)
    k = max(math.ceil(3 * math.log2(max(n, 2))) + 2 * d, 2 * d + 3)
    k += 1 - k % 2
    return min(k, n)


def secagg_threshold(n_nodes: int, max_dropouts: int, n_entities: int) -> int:
    """SecAgg+'s reconstruction threshold: k − d on a neighbourhood graph, H − d on the full graph
    (the run's declared H, also after a dropout: the noise was sized for H − d survivors)."""
    k = secagg_shares(n_nodes, max_dropouts)
    return (k if k < int(n_nodes) else int(n_entities)) - int(max_dropouts)
