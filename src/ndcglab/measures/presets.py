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
number of relevant documents of the query. ``trec_eval10`` is ``trec_eval`` with trec_eval 10's
three changes: scores compared as doubles instead of C floats (``score_precision``), recall
levels of interpolated precision rounded (``recall_cut=round``: c = lround(x R) instead of
floor(x R + 0.9)), and with ``-c`` a query missing from the run evaluated against one unjudged
document and printed (``missing=unjudged``) instead of scoring 0 unprinted. ``sklearn`` and
``lightgbm`` refuse negative labels (``negative=error``); the others give them gain 0 and never
count them relevant (``negative=zero``, trec_eval's rule). See ``docs/measures.md`` for the
sources of each rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .._compat import FrozenFields
from .._spec import format_number, parse_spec
from ..errors import ConventionError, SpecError

__all__ = [
    "PRESETS",
    "PRESET_OPTIONS",
    "TOOL_OPTIONS",
    "Preset",
    "available_presets",
    "canonical_precision",
    "get_preset",
]


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class Preset(FrozenFields):
    """A named convention: option defaults, the usual measure set, and evaluation-level rules.

    ``defaults`` maps option -> value for every measure; ``short_gain`` / ``short_p`` are the
    ``short`` rules of the ndcg family and of P@k; ``duplicates`` is what happens to documents of
    one query sharing a doc id (``keep`` all, or keep only the ``last`` line, as the LETOR scripts'
    hash keyed by docid does).

    ``labels`` is how the tool reads a label (:func:`~ndcglab.measures.conventions.read_labels`):
    ``float64`` as written, ``float32`` rounded to single precision, ``xgboost`` (single
    precision; NDCG with the exponential gain takes only whole labels 0..31 and MAP only 0/1),
    ``gdeval`` (whole labels up to 4 only), ``lightgbm`` (single precision; NDCG takes whole
    labels 0..30, its default ``label_gain`` table); ``ignore_label`` drops the documents with
    that label before anything else (TorchMetrics' ``ignore_index``, allRank's padding label -1).
    ``negative``: ``zero`` (gain 0, never relevant), ``error`` (refused) or ``gain`` (the gain
    formula's own value, negative: ``signed:`` gains). ``missing`` is what trec_eval's ``-c``
    does with a query of the qrels that the run misses: ``zero`` (trec_eval 9: it scores 0 in
    every measure and ``-q`` prints no line for it) or ``unjudged`` (trec_eval 10: it is
    evaluated against a ranking of one unjudged document, ``ceci_nest_pas_un_docno``, then its
    num_ret and RBP residual are set to 0; ``-q`` prints it). ``verified`` names the library
    version the preset was checked against by the conformance suite
    (``tests/measures/conformance``).
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
    labels: str = "float64"
    ignore_label: float | None = None
    empty_when: str = "idcg=0"
    missing: str = "zero"
    verified: str = ""
    gain_precision: str = "float64"

    def __init__(
        self,
        name: str,
        title: str,
        defaults: Mapping[str, str],
        short_gain: str,
        short_p: str,
        measures: tuple[str, ...],
        duplicates: str = "keep",
        notes: tuple[str, ...] | None = None,
        score_precision: str = "float64",
        negative: str = "zero",
        judged_only: bool = False,
        depth: int | None = None,
        labels: str = "float64",
        ignore_label: float | None = None,
        empty_when: str = "idcg=0",
        missing: str = "zero",
        verified: str = "",
        gain_precision: str = "float64",
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "title", title)
        object.__setattr__(self, "defaults", defaults)
        object.__setattr__(self, "short_gain", short_gain)
        object.__setattr__(self, "short_p", short_p)
        object.__setattr__(self, "measures", measures)
        object.__setattr__(self, "duplicates", duplicates)
        object.__setattr__(self, "notes", () if notes is None else notes)
        object.__setattr__(self, "score_precision", score_precision)
        object.__setattr__(self, "negative", negative)
        object.__setattr__(self, "judged_only", judged_only)
        object.__setattr__(self, "depth", depth)
        object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "ignore_label", ignore_label)
        object.__setattr__(self, "empty_when", empty_when)
        object.__setattr__(self, "missing", missing)
        object.__setattr__(self, "verified", verified)
        object.__setattr__(self, "gain_precision", gain_precision)

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
            "labels": self.labels,
            "ignore_label": self.ignore_label,
            "empty_when": self.empty_when,
            "missing": self.missing,
            "verified": self.verified,
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
    "recall_cut": "trunc",
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
            verified="Eval-Score-4.0.pl (transcribed)",
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
            verified="Eval-Score-3.0.pl (transcribed)",
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
                "queries evaluated: those in both the run and the qrels (trec_eval without -c); "
                "with -c a query missing from the run scores 0 and -q prints no line for it "
                "(missing=zero)",
                "iprec_at_recall and 11pt_avg: recall level x is c = floor(x R + 0.9) relevant "
                "documents (recall_cut=trunc)",
                "scores are compared in single precision (trec_eval 9 and pytrec_eval keep them "
                "as C float; the trec_eval10 preset compares doubles)",
                "a negative qrels relevance: gain 0, never relevant, left out of the ideal "
                "ranking; 'in the pool but unjudged' for judged_only, bpref and infAP",
                "labels read as trec_eval reads them (atol): the whole part, 1.5 -> 1, 0.5 -> 0, "
                "with a warning when that changes a label (labels=int)",
            ),
            score_precision="float32",
            labels="int",
            verified="pytrec_eval-terrier 0.5.11 (trec_eval 9)",
        ),
        Preset(
            "trec_eval10",
            "trec_eval 10 (as trec_eval, but run scores compared as C double, recall-level "
            "cut-offs rounded, -c prints and evaluates missing queries)",
            {**_BASE, "gain": "linear", "ties": "docid", "recall_cut": "round", "p": "0.9"},
            short_gain="clip",
            short_p="pad",
            measures=("map", "p@5", "p@10", "ndcg", "ndcg@10"),
            notes=(
                "every rule of the trec_eval preset, except four of trec_eval 10.0:",
                "scores keep double precision (trec_eval 10 reads them as double: 1 and "
                "1 + 1e-9 do not tie)",
                "iprec_at_recall and 11pt_avg turn recall level x into c = lround(x R) relevant "
                "documents (trec_eval 9: floor(x R + 0.9)) (recall_cut=round)",
                "with -c a query missing from the run is evaluated against one unjudged "
                "document (num_rel, idcg keep their values; num_ret and rbp_residual 0) and "
                "-q prints it (missing=unjudged)",
                "rbp and rbp_residual take trec_eval 10's p = 0.9; labels are read as trec_eval "
                "reads them (labels=int: 1.5 -> 1)",
            ),
            score_precision="float64",
            labels="int",
            missing="unjudged",
            verified="trec_eval 10.0 source (m_iprec_at_recall.c, m_11pt_avg.c, trec_eval.c), "
            "transcribed; not run (no trec_eval 10 build on PyPI)",
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
            verified="scikit-learn 1.9.1",
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
                "negative labels are an error, as in LightGBM; labels read as float32, and "
                "ndcg takes whole labels 0..30 only (its default label_gain table)",
            ),
            negative="error",
            labels="lightgbm",
            verified="lightgbm 4.7.0",
        ),
        Preset(
            "xgboost",
            "XGBoost's ndcg@k, ndcg@k- and map@k metrics (ndcg_exp_gain=true)",
            {**_BASE, "empty": "one", "denom": "cut"},
            short_gain="clip",
            short_p="pad",
            measures=("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ndcg", "map"),
            notes=(
                "gain 2^y - 1 (ndcg_exp_gain=true; xgboost(exp_gain=false): y itself)",
                "labels and scores read as float32; ties keep input order (stable sort)",
                "a query with no relevant document scores 1; ndcg@k- and map@k- score it 0",
                "exp_gain=true takes whole labels 0..31 only, map only labels 0 and 1",
            ),
            score_precision="float32",
            negative="gain",
            labels="xgboost",
            empty_when="idcg<=0",
            verified="xgboost 3.2.0",
        ),
        Preset(
            "catboost",
            "CatBoost's NDCG metric (type=Base, denominator=LogPosition)",
            {**_BASE, "gain": "linear", "ties": "pessimistic", "empty": "one"},
            short_gain="clip",
            short_p="pad",
            measures=("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ndcg"),
            notes=(
                "type=Base: gain y; type=Exp: 2^y - 1; denominator=LogPosition: "
                "1/log2(1 + r), Position: 1/r",
                "tied scores: the worst order (lower labels first)",
                "a query with no relevant document scores 1; negative labels keep their gain",
            ),
            negative="gain",
            empty_when="idcg<=0",
            verified="catboost 1.2.10",
        ),
        Preset(
            "torchmetrics",
            "TorchMetrics' RetrievalNormalizedDCG (empty_target_action=neg)",
            {**_BASE, "gain": "linear", "ties": "average", "empty": "zero"},
            short_gain="clip",
            short_p="pad",
            measures=("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ndcg"),
            notes=(
                "gain = the label (negative labels too); tied scores share their mean gain "
                "(scikit-learn's rule), scores compared as float32",
                "empty_target_action: neg = 0, pos = 1, skip, error "
                "(torchmetrics(empty=skip)); ignore_index drops documents with that label",
            ),
            score_precision="float32",
            negative="gain",
            labels="float32",
            empty_when="label_sum=0",
            verified="torchmetrics 1.9.0",
        ),
        Preset(
            "allrank",
            "allRank's ndcg metric (gain 2^y - 1, filler_value=1.0)",
            {**_BASE, "empty": "one"},
            short_gain="clip",
            short_p="pad",
            measures=("ndcg@1", "ndcg@5", "ndcg@10", "ndcg@30", "ndcg@60"),
            notes=(
                "labels and scores as float32 tensors; a label -1 is padding (dropped)",
                "a query with no relevant document scores filler_value (1.0; allrank(filler=0))",
                "ties: torch.sort's order, input order on these lists",
            ),
            score_precision="float32",
            negative="gain",
            labels="float32",
            ignore_label=-1.0,
            verified="allRank 1.4.3",
        ),
        Preset(
            "rax",
            "rax.ndcg_metric (default gain 2^y - 1 and discount 1/log2(1 + r))",
            {**_BASE},
            short_gain="clip",
            short_p="pad",
            measures=("ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ndcg"),
            notes=(
                "float32 (JAX's default); ties keep input order (stable sort, no key)",
                "a query with no relevant document scores 0; documents outside where= are "
                "left out (evaluate without them)",
            ),
            score_precision="float32",
            negative="gain",
            labels="float32",
            empty_when="idcg=0:dcg",
            verified="rax 0.4.0",
            gain_precision="float32",
        ),
        Preset(
            "ranx",
            "ranx's ndcg (Jarvelin and Kekalainen's linear gain) and ndcg_burges (2^y - 1)",
            {**_BASE, "gain": "linear", "ties": "input"},
            short_gain="clip",
            short_p="pad",
            measures=("ndcg@5", "ndcg@10", "ndcg", "ndcg_burges@10", "map"),
            notes=(
                "ndcg_burges@k is ndcg(gain=exp2)@k",
                "ties keep the run's order; labels read as integers (1.5 -> 1)",
            ),
            labels="int",
            verified="ranx 0.3.21",
        ),
        Preset(
            "gdeval",
            "the TREC Web track's gdeval.pl (1.2a) as ir_measures runs it",
            {**_BASE, "ties": "docid", "max_grade": "4"},
            short_gain="clip",
            short_p="pad",
            measures=("ndcg@5", "ndcg@10", "ndcg@20", "err@5", "err@10", "err@20"),
            notes=(
                "gain 2^y - 1, ties: score descending then docno descending",
                "whole labels up to 4 only (gdeval.pl stops otherwise); values printed to 5 "
                "decimals",
                "a query with no relevant document: 0 (ir_measures fills the query gdeval.pl "
                "leaves out)",
            ),
            labels="gdeval",
            verified="ir_measures 0.4.3, gdeval.pl 1.2a",
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
        "precision at which run scores are compared (ties) and nothing else: the preset "
        "trec_eval10 has every rule of trec_eval 10",
    ),
    "judged_only": ("yes, no", "rank only judged documents (trec_eval -J; TREC runs)"),
    "depth": ("<N>", "keep the first N documents of each ranking (trec_eval -M N; TREC runs)"),
    "rel": ("<threshold>, letor", "relevance threshold of every measure (trec_eval -l N)"),
    "negative": (
        "zero, error, gain",
        "what a label below 0 means (gain 0 and not relevant, refused, or the gain formula's "
        "value)",
    ),
    "labels": (
        "int, float64",
        "how labels are read: their whole part, as trec_eval's atol and ranx's integer qrels "
        "(int: 1.5 -> 1), or as written (float64: graded and LLM-judged labels keep their value)",
    ),
}

#: options of one tool's preset, in the tool's own words: preset -> key -> (values, meaning)
TOOL_OPTIONS: dict[str, dict[str, tuple[str, str]]] = {
    "xgboost": {"exp_gain": ("true, false", "ndcg_exp_gain: gain 2^y - 1 (true) or y (false)")},
    "catboost": {
        "type": ("base, exp", "NDCG type: gain y (Base) or 2^y - 1 (Exp)"),
        "denominator": (
            "logposition, position",
            "NDCG denominator: log2(1 + r) (LogPosition) or r (Position)",
        ),
    },
    "torchmetrics": {
        "empty": ("neg, pos, skip, error", "empty_target_action: 0, 1, left out, or refused"),
        "ignore_index": ("<label>", "documents with this label are dropped"),
    },
    "allrank": {"filler": ("1, 0", "filler_value: the NDCG of a query whose ideal DCG is 0")},
}

_TOOL_VALUES: dict[tuple[str, str], dict[str, dict[str, str]]] = {
    ("xgboost", "exp_gain"): {
        "true": {"gain": "exp2"},
        "false": {"gain": "linear"},
    },
    ("catboost", "type"): {"base": {"gain": "linear"}, "exp": {"gain": "exp2"}},
    ("catboost", "denominator"): {
        "logposition": {"discount": "log"},
        "position": {"discount": "zipf"},
    },
    ("torchmetrics", "empty"): {
        "neg": {"empty": "zero"},
        "pos": {"empty": "one"},
        "skip": {"empty": "skip"},
        "error": {"empty": "error"},
    },
    ("allrank", "filler"): {"1": {"empty": "one"}, "0": {"empty": "zero"}},
}

_BOOL_TEXT = {
    "1": "true",
    "yes": "true",
    "true": "true",
    "0": "false",
    "no": "false",
    "false": "false",
}


def _tool_option(
    base: Preset, key: str, value: str, text: str, defaults: dict[str, str], changes: dict[str, Any]
) -> str:
    """Apply one option of :data:`TOOL_OPTIONS` to ``defaults``/``changes``; returns its printed
    form (``key=value``, the value in lower case)."""
    v = value.strip().lower()
    tool = base.name.split("(")[0]
    known = TOOL_OPTIONS[tool][key][0]
    if tool == "torchmetrics" and key == "ignore_index":
        try:
            label = float(v)
        except ValueError:
            raise ConventionError(
                f"ignore_index={value!r} in {text!r}: a label (documents with it are dropped)"
            ) from None
        changes["ignore_label"] = label
        return f"ignore_index={format_number(label)}"
    if (tool, key) == ("xgboost", "exp_gain"):
        v = _BOOL_TEXT.get(v, v)
    elif (tool, key) == ("allrank", "filler"):
        try:
            v = format_number(float(v))
        except ValueError:
            pass
    table = _TOOL_VALUES[(tool, key)]
    if v not in table:
        raise ConventionError(f"{key}={value!r} in {text!r}; known: {known}")
    defaults.update(table[v])
    return f"{key}={v}"


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
    ``trec_eval9``/``pytrec_eval`` (C float) and ``trec_eval10`` (C double). Only the score
    precision: trec_eval 10's other rules (``recall_cut``, ``missing``) come with the preset
    ``trec_eval10``."""
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
        elif key in TOOL_OPTIONS.get(base.name.split("(")[0], {}):
            printed.append(_tool_option(base, key, value, text, defaults, changes))
        elif key == "negative":
            if v not in ("zero", "error", "gain"):
                raise ConventionError(f"negative={value!r} in {text!r}; known: zero, error, gain")
            changes["negative"] = v
            printed.append(f"negative={v}")
        elif key == "labels":
            if v not in ("int", "float64"):
                raise ConventionError(f"labels={value!r} in {text!r}; known: int, float64")
            changes["labels"] = v
            printed.append(f"labels={v}")
        else:
            allowed = [*TOOL_OPTIONS.get(base.name.split("(")[0], {}), *PRESET_OPTIONS]
            raise SpecError(
                f"unknown preset option {key!r} in {text!r}; allowed: {', '.join(allowed)}"
            )
    if not printed:
        return base
    name = f"{base.name}({','.join(sorted(printed))})"
    return replace(base, name=name, defaults=defaults, **changes)


def get_preset(preset: str | Preset | None = None) -> Preset:
    """A preset by name (``None`` = ``standard``); unknown names list the known ones.

    A preset takes options in the measure grammar, e.g. ``trec_eval(judged_only=yes,depth=100)``
    or ``trec_eval(scores=trec_eval10)`` (:data:`PRESET_OPTIONS`; this sets the score precision
    only, the preset ``trec_eval10`` has all of trec_eval 10's rules); the returned preset prints
    its options in its name and parses back to an equal preset."""
    if preset is None:
        return PRESETS["standard"]
    if isinstance(preset, Preset):
        return preset
    text = str(preset)
    head, paren, rest = text.strip().lower().partition("(")
    parsed = parse_spec(head.replace("-", "_") + paren + rest, what="preset")
    if parsed.cutoff is not None:
        raise SpecError(f"a preset takes no cut-off: {text!r}")
    key = parsed.name
    aliases = {
        "letor": "letor4",
        "trec": "trec_eval",
        "pytrec_eval": "trec_eval",
        "trec_eval9": "trec_eval",
        "lgb": "lightgbm",
        "xgb": "xgboost",
        "ir_measures_gdeval": "gdeval",
    }
    key = aliases.get(key, key)
    if key not in PRESETS:
        raise SpecError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    return _with_options(PRESETS[key], parsed.params, text)
