"""The settings of a run that differ from the paper it implements (Ribero, Henderson, Williamson &
Vikalo 2020, *Federating Recommendations Using Differentially Private Prototypes*), in words: every
page, command and report that states a run's results states these beside them.

The paper's protocol: each entity sends k DP prototypes of its rows (private partition candidates,
private local search, the Gumbel top-s support and Laplace sums of each cluster); the server, which sees
every entity's prototypes, factorises them; each entity fits its own user factors on the broadcast V
alone. The objective is the squared loss with the paper's 1/N factor on it.
"""
from __future__ import annotations

from typing import Mapping

PAPER = "Ribero et al. 2020"


def _param(config: Mapping, name: str, default: object) -> object:
    """The value the run's method used for ``name``: given in the configuration, else its default."""
    from dpfed_core.methods import get_method

    given = {**(config.get("prototype_params") or {}), **(config.get("method_params") or {})}
    if name in given:
        return given[name]
    try:
        spec = get_method(str(config.get("method")))
    except Exception:  # a document of a method not registered here: its declared default is unknown
        return default
    return next((p.default for p in spec.parameters if p.name == name), default)


def _clustered(run: Mapping | None, config: Mapping) -> bool:
    """Did the prototype method cluster (k > 1 at some entity)? From the run's ledger when there is one
    (a "candidates" stage), else from k: with one prototype an entity recovers its whole sum, with no
    projection, candidates or search."""
    if run is not None and (run.get("privacy") or {}).get("ledger") is not None:
        return any(r.get("stage") == "candidates" for r in run["privacy"]["ledger"])
    return int(config.get("k") or 1) > 1


def paper_differences(config: Mapping, run: Mapping | None = None) -> list[str]:
    """What the run of ``config`` (a :class:`~dpfed_core.config.RunConfig` as a dict) does otherwise than
    the paper, one phrase each; the objective's normalisation always. ``run``: its result document, when
    there is one (what the run actually did: whether it clustered, the k each entity used)."""
    from dpfed_core.federation.protocol import PROTOTYPE_METHODS, is_summable
    from dpfed_core.methods import METHODS, available_methods

    available_methods()
    method = str(config.get("method"))
    out = []
    if is_summable(method):
        out.append(f"method {method} sends summable DP statistics (the paper's entities send DP prototypes: "
                   "dp-prototypes)")
        if config.get("aggregation") == "secure":
            out.append("secure aggregation: the server sees only the sum over entities (the paper's server sees "
                       "each entity's release)")
        if _param(config, "local_blend", False):
            out.append("round 2 blends the broadcast V with the entity's own model and popularity (the paper fits "
                       "the entity's factors on V alone)")
    elif method in PROTOTYPE_METHODS:
        if _param(config, "variant", "paper") == "gaussian":
            out.append("prototypes recovered by ℓ2-clipped Gaussian sums (the paper: Gumbel top-s support and "
                       "Laplace sums)")
        dp = method in ("dp-prototypes", "dp-gaussian")
        auto_k = (dp and _param(config, "cluster_size", None) is not None and int(config.get("k") or 1) > 1
                  and config.get("epsilon") not in (None, "inf") and float(config.get("epsilon")) != float("inf"))
        if auto_k:
            out.append(f"k = {config.get('k')} is a maximum: each entity uses about one prototype per "
                       f"{_param(config, 'cluster_size', 1000):g} of its users (the paper: k exactly)")
        if dp and not _clustered(run, config):
            if int(config.get("k") or 1) > 1:  # k = 1 asked: one prototype, the whole sum, as the paper's
                out.append("one prototype per entity: its DP sum, with no clustering (the paper clusters into k)")
        elif dp and _param(config, "candidates", "partition") == "lsh":
            out.append("clustering candidates from a private LSH coreset (the paper: private partition and local "
                       "search)")
        elif dp and _param(config, "projection_dim", None) is None:
            out.append("projection dimension clip(round(0.5·ln n̂), 3, 10), the authors' code (the paper's text: "
                       "8 log n)")
    elif method in METHODS and not METHODS[method].federated:
        out.append(f"{method} is a reference, not the paper's protocol")
    out.append("objective: the summed squared loss (the paper's 1/N factor would make λ dominate)")
    return out


def paper_differences_text(config: Mapping, run: Mapping | None = None) -> str:
    """One sentence: "Differs from the paper (Ribero et al. 2020): a; b; c."."""
    return f"Differs from the paper ({PAPER}): " + "; ".join(paper_differences(config, run)) + "."
