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
number of relevant documents of the query. ``trec_eval10`` is ``trec_eval`` with scores compared
as doubles (trec_eval 10) instead of C floats (trec_eval 9, pytrec_eval). ``sklearn`` and
``lightgbm`` refuse negative labels (``negative=error``); the others give them gain 0 and never
count them relevant (``negative=zero``, trec_eval's rule). See ``docs/measures.md`` for the
sources of each rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .._spec import format_number, parse_spec
from ..errors import ConventionError, SpecError

__all__ = [
    "PRESETS",
    "PRESET_OPTIONS",
    "Preset",
    "available_presets",
    "canonical_precision",
    "get_preset",
]


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
    negative: str = "zero"
    judged_only: bool = False
    depth: int | None = None

    def default(self, measure: str, key: str) -> str:
        """The value this preset gives option ``key`` of measure ``measure`` (canonical name)."""
        if key == "short":
            return self.short_p if measure in ("p", "judged") else self.short_gain
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
            "negative": self.negative,
            "judged_only": self.judged_only,
            "depth": self.depth,
        }


_BASE = {
    "gain": "exp2",
    "discount": "log",
    "ties": "input",
    "empty": "zero",
    "rel": "1",
    "rounding": "ceil",
    "denom": "all",
    "p": "0.8",
    "max_grade": "4",
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
            {**_BASE, "gain": "letor", "discount": "letor", "rel": "letor", "max_grade": "2"},
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
            {**_BASE, "gain": "letor", "discount": "letor", "rel": "letor", "max_grade": "2"},
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
                "scores are compared in single precision (trec_eval 9 and pytrec_eval keep them "
                "as C float; the trec_eval10 preset compares doubles)",
                "a negative qrels relevance: gain 0, never relevant, left out of the ideal "
                "ranking; 'in the pool but unjudged' for judged_only, bpref and infAP",
            ),
            score_precision="float32",
        ),
        Preset(
            "trec_eval10",
            "trec_eval 10 (as trec_eval, but run scores compared as C double)",
            {**_BASE, "gain": "linear", "ties": "docid"},
            short_gain="clip",
            short_p="pad",
            measures=("map", "p@5", "p@10", "ndcg", "ndcg@10"),
            notes=(
                "every rule of the trec_eval preset, except that scores keep double precision "
                "(trec_eval 10 reads them as double: 1 and 1 + 1e-9 do not tie)",
            ),
            score_precision="float64",
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
                "negative labels are an error, as in scikit-learn",
            ),
            negative="error",
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
                "negative labels are an error, as in LightGBM",
            ),
            negative="error",
        ),
    )
}


def available_presets() -> list[str]:
    """Names of every preset."""
    return list(PRESETS)


#: options a preset takes in the grammar ``name(key=value,...)``: key -> (values, meaning)
PRESET_OPTIONS: dict[str, tuple[str, str]] = {
    "scores": (
        "float32 (= trec_eval9, pytrec_eval), float64 (= trec_eval10)",
        "precision at which run scores are compared (ties)",
    ),
    "judged_only": ("yes, no", "rank only judged documents (trec_eval -J; TREC runs)"),
    "depth": ("<N>", "keep the first N documents of each ranking (trec_eval -M N; TREC runs)"),
    "rel": ("<threshold>, letor", "relevance threshold of every measure (trec_eval -l N)"),
    "negative": ("zero, error", "what a label below 0 means (gain 0 and not relevant, or refused)"),
}

_PRECISIONS = {
    "float32": "float32",
    "single": "float32",
    "trec_eval9": "float32",
    "pytrec_eval": "float32",
    "float64": "float64",
    "double": "float64",
    "trec_eval10": "float64",
}


def canonical_precision(value: str) -> str:
    """``float32`` or ``float64`` from a score precision or the tool it reproduces:
    ``trec_eval9``/``pytrec_eval`` (C float) and ``trec_eval10`` (C double)."""
    key = str(value).strip().lower().replace("-", "_").replace(".", "")
    if key not in _PRECISIONS:
        raise ConventionError(
            f"unknown score precision {value!r}; known: float32 (= trec_eval9, pytrec_eval), "
            "float64 (= trec_eval10)"
        )
    return _PRECISIONS[key]


def _with_options(base: Preset, params: tuple[tuple[str, str], ...], text: str) -> Preset:
    """``base`` with the options of ``text`` (see :data:`PRESET_OPTIONS`) applied."""
    changes: dict[str, Any] = {}
    defaults = dict(base.defaults)
    printed: list[str] = []
    for key, value in params:
        v = value.strip().lower()
        if key == "scores":
            changes["score_precision"] = canonical_precision(v)
            printed.append(f"scores={changes['score_precision']}")
        elif key == "judged_only":
            if v not in ("yes", "no", "true", "false", "1", "0"):
                raise ConventionError(f"judged_only={value!r} in {text!r}; known: yes, no")
            changes["judged_only"] = v in ("yes", "true", "1")
            printed.append(f"judged_only={'yes' if changes['judged_only'] else 'no'}")
        elif key == "depth":
            try:
                depth = int(v)
            except ValueError:
                depth = 0
            if depth < 1:
                raise ConventionError(
                    f"depth={value!r} in {text!r} must be a positive integer (trec_eval -M N)"
                )
            changes["depth"] = depth
            printed.append(f"depth={depth}")
        elif key == "rel":
            if v != "letor":
                try:
                    v = format_number(float(v))
                except ValueError:
                    raise ConventionError(
                        f"rel={value!r} in {text!r}: a number (label >= it is relevant) or letor"
                    ) from None
            defaults["rel"] = v
            printed.append(f"rel={v}")
        elif key == "negative":
            if v not in ("zero", "error"):
                raise ConventionError(f"negative={value!r} in {text!r}; known: zero, error")
            changes["negative"] = v
            printed.append(f"negative={v}")
        else:
            raise SpecError(
                f"unknown preset option {key!r} in {text!r}; allowed: {', '.join(PRESET_OPTIONS)}"
            )
    if not printed:
        return base
    name = f"{base.name}({','.join(sorted(printed))})"
    return replace(base, name=name, defaults=defaults, **changes)


def get_preset(preset: str | Preset | None = None) -> Preset:
    """A preset by name (``None`` = ``standard``); unknown names list the known ones.

    A preset takes options in the measure grammar, e.g. ``trec_eval(judged_only=yes,depth=100)``
    or ``trec_eval(scores=trec_eval10)`` (:data:`PRESET_OPTIONS`); the returned preset prints
    its options in its name and parses back to an equal preset."""
    if preset is None:
        return PRESETS["standard"]
    if isinstance(preset, Preset):
        return preset
    text = str(preset)
    parsed = parse_spec(text.strip().lower().replace("-", "_"), what="preset")
    if parsed.cutoff is not None:
        raise SpecError(f"a preset takes no cut-off: {text!r}")
    key = parsed.name
    aliases = {
        "letor": "letor4",
        "trec": "trec_eval",
        "pytrec_eval": "trec_eval",
        "trec_eval9": "trec_eval",
        "lgb": "lightgbm",
    }
    key = aliases.get(key, key)
    if key not in PRESETS:
        raise SpecError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    return _with_options(PRESETS[key], parsed.params, text)
