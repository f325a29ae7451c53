"""Presets: whole conventions of other tools, reproduced exactly.

A preset fills every option a measure leaves unset (:meth:`Measure.resolve`) and names the set of
measures the tool usually reports. ``standard`` is the default.

=============  ======  ======  ===========  ======  ==========  ===========  ==========  ==========
preset         gain    disc.   ties         empty   ndcg k > n  P@k, k > n   relevant    dup. docid
=============  ======  ======  ===========  ======  ==========  ===========  ==========  ==========
``standard``   exp2    log     input        zero    clip        pad (÷ k)    label >= 1  keep
``letor4``     letor   letor   input        zero    zero        pad (÷ k)    1 or 2      last
``letor3``     letor   letor   input        zero    zero        zero         1 or 2      last
``trec_eval``  linear  log     docid        zero    clip        pad (÷ k)    label >= 1  keep
``sklearn``    linear  log     average      zero    clip        pad (÷ k)    label >= 1  keep
``lightgbm``   exp2    log     input        one     clip        pad (÷ k)    label >= 1  keep
=============  ======  ======  ===========  ======  ==========  ===========  ==========  ==========

``lightgbm`` also divides AP@k by min(R, k) (``denom=cut``); every other preset divides by R, the
number of relevant documents of the query. See ``docs/measures.md`` for the sources of each rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import SpecError

__all__ = ["PRESETS", "Preset", "available_presets", "get_preset"]


@dataclass(frozen=True)
class Preset:
    """A named convention: option defaults, the usual measure set, and evaluation-level rules.

    ``defaults`` maps option -> value for every measure; ``short_gain`` / ``short_p`` are the
    ``short`` rules of the ndcg family and of P@k; ``duplicates`` is what happens to documents of
    one query sharing a doc id (``keep`` all, or keep only the ``last`` line, as the LETOR scripts'
    hash keyed by docid does).
    """

    name: str
    title: str
    defaults: Mapping[str, str]
    short_gain: str
    short_p: str
    measures: tuple[str, ...]
    duplicates: str = "keep"
    notes: tuple[str, ...] = field(default_factory=tuple)
    score_precision: str = "float64"

    def default(self, measure: str, key: str) -> str:
        """The value this preset gives option ``key`` of measure ``measure`` (canonical name)."""
        if key == "short":
            return self.short_p if measure == "p" else self.short_gain
        try:
            return self.defaults[key]
        except KeyError:  # pragma: no cover - every preset defines every option
            raise SpecError(f"preset {self.name} has no default for {key!r}") from None

    def as_dict(self) -> dict[str, Any]:
        """Printable description (used in results' ``convention``)."""
        return {
            "preset": self.name,
            **dict(self.defaults),
            "short": self.short_gain,
            "short_p": self.short_p,
            "duplicates": self.duplicates,
            "score_precision": self.score_precision,
        }


_BASE = {
    "gain": "exp2",
    "discount": "log",
    "ties": "input",
    "empty": "zero",
    "rel": "1",
    "rounding": "ceil",
    "denom": "all",
}

_LETOR_SET = (
    *tuple(f"p@{k}" for k in range(1, 11)),
    "map",
    *tuple(f"ndcg@{k}" for k in range(1, 11)),
)

#: Every named preset by name: the whole convention of one tool (see docs/measures.md).
PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "standard",
            "ndcglab's default: Burges' exp2 gain, 1/log2(1+r), ties in input order",
            dict(_BASE),
            short_gain="clip",
            short_p="pad",
            measures=("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ndcg", "map"),
            notes=(
                "a query with no relevant document scores 0 (empty=zero) and is counted",
                "NDCG@k for k > n equals NDCG@n (short=clip); P@k divides by k (short=pad)",
            ),
        ),
        Preset(
            "letor4",
            "official LETOR 4.0 script Eval-Score-4.0.pl",
            {**_BASE, "gain": "letor", "discount": "letor", "rel": "letor"},
            short_gain="zero",
            short_p="pad",
            measures=(*_LETOR_SET, "meanndcg"),
            duplicates="last",
            notes=(
                "gain table {0:0, 1:1, 2:3}; other labels gain 0 and are not relevant",
                "discount 1/max(1, log2 r); ties keep file order (stable sort)",
                "NDCG@k for k > n is missing and counts as 0; P@k beyond the list divides by k",
                "AP divides by the relevant docs in the list, 0 if none; means over all queries",
                "docs keyed by docid within a query: a duplicated docid keeps only the later line",
            ),
        ),
        Preset(
            "letor3",
            "official LETOR 3.0 script Eval-Score-3.0.pl",
            {**_BASE, "gain": "letor", "discount": "letor", "rel": "letor"},
            short_gain="zero",
            short_p="zero",
            measures=_LETOR_SET,
            duplicates="last",
            notes=(
                "as letor4, except P@k for k > n is missing and counts as 0",
                "the 3.0 script itself rejects labels outside 0..2; here they gain 0, not relevant",
            ),
        ),
        Preset(
            "trec_eval",
            "trec_eval 9 / pytrec_eval (ndcg, ndcg_cut, map, P, recip_rank)",
            {**_BASE, "gain": "linear", "ties": "docid"},
            short_gain="clip",
            short_p="pad",
            measures=("map", "p@5", "p@10", "ndcg", "ndcg@10"),
            notes=(
                "gain = the qrels relevance value; ties: score descending, then docno descending",
                "ideal DCG and AP's denominator over all judged docs (evaluate_trec)",
                "queries evaluated: those in both the run and the qrels (trec_eval without -c)",
                "scores are compared in single precision (trec_eval keeps them as C float)",
            ),
            score_precision="float32",
        ),
        Preset(
            "sklearn",
            "scikit-learn ndcg_score / dcg_score (ignore_ties=False)",
            {**_BASE, "gain": "linear", "ties": "average"},
            short_gain="clip",
            short_p="pad",
            measures=("ndcg", "ndcg@5", "ndcg@10"),
            notes=(
                "tied scores: each tied group gets its mean gain times the sum of its discounts",
                "sklearn refuses 1-document lists; ndcglab evaluates them",
            ),
        ),
        Preset(
            "lightgbm",
            "LightGBM's ndcg@k and map@k metrics (default label_gain 2^i - 1)",
            {**_BASE, "empty": "one", "denom": "cut"},
            short_gain="clip",
            short_p="pad",
            measures=("ndcg@1", "ndcg@2", "ndcg@3", "ndcg@4", "ndcg@5"),
            notes=(
                "a query with no relevant document scores 1 (empty=one)",
                "ties: stable sort by score, i.e. input order; k > n is clipped to n",
                "map@k divides by min(R, k) (denom=cut)",
            ),
        ),
    )
}


def available_presets() -> list[str]:
    """Names of every preset."""
    return list(PRESETS)


def get_preset(preset: str | Preset | None = None) -> Preset:
    """A preset by name (``None`` = ``standard``); unknown names list the known ones."""
    if preset is None:
        return PRESETS["standard"]
    if isinstance(preset, Preset):
        return preset
    key = str(preset).strip().lower().replace("-", "_")
    aliases = {
        "letor": "letor4",
        "trec": "trec_eval",
        "pytrec_eval": "trec_eval",
        "lgb": "lightgbm",
    }
    key = aliases.get(key, key)
    if key not in PRESETS:
        raise SpecError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    return PRESETS[key]
