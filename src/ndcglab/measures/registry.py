"""Measures as values, and the one registry of measures.

A :class:`Measure` is an immutable, hashable value: a registered name, the options the user set
explicitly, and an optional cut-off. ``str(m)`` prints the canonical spec, which
:func:`parse_measure` reads back to an equal value::

    >>> m = parse_measure("NDCG( gain=linear , discount=power:0.5 )@0.2n")
    >>> str(m)
    'ndcg(discount=power:0.5,gain=linear)@0.2n'
    >>> parse_measure(str(m)) == m
    True

Options left unset are filled by a preset (:meth:`Measure.resolve`); the resolved measure states
every option, which is what :attr:`EvaluationResult.convention` reports.

Every measure, its aliases, its options and their meanings live in :data:`REGISTRY`; the CLI,
presets, reports and ``docs/measures.md`` all go through it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .._compat import FrozenFields
from .._spec import Cutoff, ParsedSpec, format_number, parse_int, parse_real, parse_spec
from ..errors import ConventionError, SpecError
from .discounts import Discount, get_discount
from .gains import Gain, get_gain
from .presets import get_preset

__all__ = [
    "OPTIONS",
    "REGISTRY",
    "Measure",
    "MeasureInfo",
    "OptionInfo",
    "available_measures",
    "canonical_ties",
    "get_measure_info",
    "measure_aliases",
    "parse_measure",
    "parse_measures",
    "resolve_discount",
    "resolve_gain",
    "tool_name",
]


# ---------------------------------------------------------------------------------- options
@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class OptionInfo(FrozenFields):
    """One option a measure may take: its key, the accepted values (for errors) and a doc line."""

    key: str
    values: str
    doc: str

    def __init__(self, key: str, values: str, doc: str) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "doc", doc)


OPTIONS: dict[str, OptionInfo] = {
    o.key: o
    for o in (
        OptionInfo(
            "gain",
            "exp2, linear, letor, table:<label>=<gain>;...",
            "gain G(y) of a label (custom callables via Measure.with_options)",
        ),
        OptionInfo(
            "discount",
            "log, log:<base>, power:<beta>, zipf, exp:<a>, linear, letor",
            "discount D(r) of a 1-based position r",
        ),
        OptionInfo(
            "ties",
            "input, docid, average, pessimistic, optimistic, label_asc, label_desc, random:<seed>",
            "order of documents with equal scores",
        ),
        OptionInfo(
            "empty",
            "zero, one, skip, error",
            "value of a query with no relevant document (IDCG = 0 / no relevant doc)",
        ),
        OptionInfo(
            "short",
            "clip, zero (ndcg family); pad, clip, zero (p)",
            "meaning of a fixed cut-off k larger than the list's length n",
        ),
        OptionInfo(
            "rounding",
            "ceil, floor, round",
            "how a fractional cut-off c*n is rounded to whole positions",
        ),
        OptionInfo(
            "rel",
            "<threshold> (label >= threshold) or letor (labels 1 and 2 only)",
            "which labels count as relevant",
        ),
        OptionInfo(
            "denom",
            "all, cut",
            "AP denominator: all relevant docs of the query, or min(R, k) (LightGBM)",
        ),
        OptionInfo(
            "p",
            "a number in (0, 1)",
            "persistence of rank-biased precision (Moffat & Zobel): the user goes on with "
            "probability p",
        ),
        OptionInfo(
            "max_grade",
            "a number > 0",
            "ERR's largest grade g_max: a document of grade g stops the user with probability "
            "(2^g - 1) / 2^g_max",
        ),
        OptionInfo(
            "level",
            "a number in [0, 1]",
            "recall level of interpolated precision (iprec(level=0.1) = trec_eval's "
            "iprec_at_recall_0.10)",
        ),
        OptionInfo(
            "recall_cut",
            "trunc, round",
            "how interpolated precision turns a recall level x into a number c of relevant "
            "documents: trunc, c = floor(x R + 0.9) (trec_eval 9, pytrec_eval, ir_measures); "
            "round, c = x R rounded to the nearest integer, halves up (trec_eval 10's lround)",
        ),
    )
}

TIE_RULES = (
    "input",
    "docid",
    "average",
    "pessimistic",
    "optimistic",
    "label_asc",
    "label_desc",
    "random:<seed>",
)
EMPTY_RULES = ("zero", "one", "skip", "error")
ROUNDINGS = ("ceil", "floor", "round")
#: the ``recall_cut`` rules of interpolated precision; a rule's index is ``iprec_kernel``'s flag
RECALL_CUTS = ("trunc", "round")


def canonical_ties(v: str) -> str:
    """The canonical text of a tie rule (``random:07`` -> ``random:7``); unknown rules raise
    :class:`ConventionError`."""
    s = v.strip().lower()
    if s in ("input", "docid", "average", "pessimistic", "optimistic", "label_asc", "label_desc"):
        return s
    if s.startswith("random"):
        _, colon, seed = s.partition(":")
        if not colon:
            raise ConventionError(
                f"cannot read tie rule {v!r}. Fix: give an integer seed, e.g. ties=random:0"
            )
        n = parse_int(
            seed, what="tie seed", lo=0, hi=2**63 - 1, error=ConventionError,
            fix="give an integer seed of 0 or more, e.g. ties=random:0",
        )  # fmt: skip
        return f"random:{n}"
    raise ConventionError(f"unknown tie rule {v!r}; known: {', '.join(TIE_RULES)}")


def _canon_choice(key: str, v: str, allowed: tuple[str, ...]) -> str:
    s = v.strip().lower()
    if s not in allowed:
        raise ConventionError(f"unknown {key} rule {v!r}; known: {', '.join(allowed)}")
    return s


def _canon_rel(v: str) -> str:
    s = v.strip().lower()
    if s == "letor":
        return s
    try:
        return format_number(parse_real(s, what="rel"))
    except ValueError:
        raise ConventionError(
            f"cannot read relevance rule rel={v!r}. Fix: a number (label >= it is relevant, e.g. "
            "rel=1) or rel=letor (labels 1 and 2 only)"
        ) from None


_RANGES = {
    "p": (0.0, 1.0, False, "a number strictly between 0 and 1, e.g. rbp(p=0.8)"),
    "max_grade": (0.0, float("inf"), False, "a positive number, e.g. err(max_grade=4)"),
    "level": (0.0, 1.0, True, "a recall level in [0, 1], e.g. iprec(level=0.1)"),
}


def _canon_number(key: str, v: str) -> str:
    lo, hi, closed, fix = _RANGES[key]
    try:
        x = parse_real(v, what=key)  # ASCII, finite: as the file readers read numbers
    except ValueError:
        x = float("nan")
    ok = (lo <= x <= hi) if closed else (lo < x < hi)
    if not ok:
        raise ConventionError(f"cannot use {key}={v!r}. Fix: {fix}")
    return format_number(x)


# ---------------------------------------------------------------------------------- registry
@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class MeasureInfo(FrozenFields):
    """A registered measure: canonical ``name``, ``aliases``, the ``params`` it accepts, options
    that are ``fixed`` by definition, the allowed ``short`` rules, whether it takes a ``cutoff``
    (``"optional"``, ``"never"``), its ``family`` (``"gain"``: computed from gains and discounts;
    ``"rel"``: from a binary relevance rule) and a ``doc`` line."""

    name: str
    family: str
    params: tuple[str, ...]
    doc: str
    formula: str
    aliases: tuple[str, ...] = ()
    fixed: Mapping[str, str] = field(default_factory=dict)
    shorts: tuple[str, ...] = ("clip", "zero")
    cutoff: str = "optional"
    required: tuple[str, ...] = ()

    def __init__(
        self,
        name: str,
        family: str,
        params: tuple[str, ...],
        doc: str,
        formula: str,
        aliases: tuple[str, ...] = (),
        fixed: Mapping[str, str] | None = None,
        shorts: tuple[str, ...] = ("clip", "zero"),
        cutoff: str = "optional",
        required: tuple[str, ...] = (),
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "doc", doc)
        object.__setattr__(self, "formula", formula)
        object.__setattr__(self, "aliases", aliases)
        object.__setattr__(self, "fixed", {} if fixed is None else fixed)
        object.__setattr__(self, "shorts", shorts)
        object.__setattr__(self, "cutoff", cutoff)
        object.__setattr__(self, "required", required)


_GAIN_PARAMS = ("gain", "discount", "ties", "empty", "short", "rounding")

#: Every measure ndcglab computes, by canonical name, with its options and their defaults.
REGISTRY: dict[str, MeasureInfo] = {
    m.name: m
    for m in (
        MeasureInfo(
            "ndcg",
            "gain",
            _GAIN_PARAMS,
            "normalised discounted cumulative gain",
            "DCG@k / IDCG@k, DCG@k = sum_{r<=k} G(y_(r)) D(r), IDCG@k = DCG@k of the ideal order",
        ),
        MeasureInfo(
            "dcg",
            "gain",
            ("gain", "discount", "ties", "short", "rounding"),
            "discounted cumulative gain (not normalised; the log base matters)",
            "sum_{r<=k} G(y_(r)) D(r)",
        ),
        MeasureInfo(
            "idcg",
            "gain",
            ("gain", "discount", "rounding"),
            "ideal DCG = the DCG norm ||G(y)||_D; idcg@k is Z_k (Ravikumar et al., AISTATS 2011)",
            "DCG@k of the labels sorted by gain, descending (independent of the scores)",
            aliases=("z",),
        ),
        MeasureInfo(
            "ndcg_beta",
            "gain",
            ("ties", "empty", "short", "rounding"),
            "linear NDCG^beta of the ECML/PKDD 2010 challenge (Jin & Geng): ndcg with linear gain "
            "and discount n - r",
            "sum_r y_(r) (n - r) / ideal",
            fixed={"gain": "linear", "discount": "linear"},
        ),
        MeasureInfo(
            "meanndcg",
            "gain",
            ("gain", "discount", "ties", "empty"),
            "LETOR 4.0's MeanNDCG: the mean of NDCG@1..NDCG@n over the n positions of the list",
            "(1/n) sum_{k=1..n} NDCG@k",
            cutoff="never",
        ),
        MeasureInfo(
            "map",
            "rel",
            ("ties", "empty", "rel", "denom", "rounding"),
            "average precision (mean over queries = MAP); map@k sums precision at relevant "
            "positions <= k",
            "(1/R) sum_{relevant r<=k} P@r, R = relevant docs of the query (denom=all) or "
            "min(R, k) (denom=cut)",
            aliases=("ap",),
        ),
        MeasureInfo(
            "p",
            "rel",
            ("ties", "rel", "short", "rounding"),
            "precision at k (p without cut-off: precision of the whole list)",
            "(relevant docs in the top k) / k",
            aliases=("precision",),
            shorts=("pad", "clip", "zero"),
        ),
        MeasureInfo(
            "mrr",
            "rel",
            ("ties", "empty", "rel", "rounding"),
            "reciprocal rank of the first relevant document (mean over queries = MRR); 0 when it "
            "lies beyond k",
            "1 / (position of the first relevant document)",
            aliases=("rr", "recip_rank"),
        ),
        # ---- the rank family: computed from one ranking per (rel, ties) by measures/_rank.py
        MeasureInfo(
            "recall",
            "rank",
            ("ties", "empty", "rel", "rounding"),
            "recall at k: the share of the query's relevant documents found in the top k",
            "(relevant docs in the top k) / R, R = relevant docs of the query (retrieved or not)",
            aliases=("r",),
        ),
        MeasureInfo(
            "rprec",
            "rank",
            ("ties", "empty", "rel"),
            "R-precision: precision at R, the number of relevant documents of the query",
            "(relevant docs in the top R) / R",
            aliases=("r_prec", "r-prec", "r-precision", "r_precision"),
            cutoff="never",
        ),
        MeasureInfo(
            "success",
            "rank",
            ("ties", "empty", "rel", "rounding"),
            "success at k: 1 when a relevant document lies in the top k, else 0",
            "I[relevant docs in the top k > 0]",
            aliases=("hit_rate",),
        ),
        MeasureInfo(
            "bpref",
            "rank",
            ("ties", "empty", "rel"),
            "binary preference (Buckley & Voorhees, SIGIR 2004), trec_eval's form; unjudged "
            "documents are skipped",
            "(1/R) sum_{relevant retrieved r} (1 - min(n_r, R) / min(N, R)) (1 when n_r = 0), "
            "n_r = judged non-relevant docs above r, N = judged non-relevant docs of the query",
            cutoff="never",
        ),
        MeasureInfo(
            "infap",
            "rank",
            ("ties", "empty", "rel"),
            "inferred AP (Yilmaz & Aslam, CIKM 2006) by trec_eval's formula",
            "(1/R) sum_{relevant retrieved at 0-based j} (1 if j = 0 else 1/(j+1) + j/(j+1) * "
            "(r-1+n+u)/j * (r-1+eps)/(r-1+n+2 eps)), r/n/u = relevant/judged non-relevant/"
            "pool-unjudged docs at or above j, eps = 1e-5",
            aliases=("inf_ap",),
            cutoff="never",
        ),
        MeasureInfo(
            "gm_map",
            "rank",
            ("ties", "empty", "rel"),
            "geometric mean AP: per query log(max(AP, 1e-5)), averaged as exp(mean) (trec_eval)",
            "per query log(max(AP, 1e-5)); the mean over queries is exp(mean of the logs)",
            aliases=("gmap", "gm_ap"),
            cutoff="never",
        ),
        MeasureInfo(
            "iprec",
            "rank",
            ("ties", "empty", "rel", "level", "recall_cut"),
            "interpolated precision at a recall level (trec_eval's iprec_at_recall)",
            "max precision at ranks at or below the c-th relevant document (the first when "
            "c = 0), c = floor(level R + 0.9) (recall_cut=trunc, trec_eval 9) or lround(level R) "
            "(recall_cut=round, trec_eval 10); 0 if fewer than c relevant were retrieved",
            aliases=("iprec_at_recall",),
            cutoff="never",
            required=("level",),
        ),
        MeasureInfo(
            "iprec_11pt",
            "rank",
            ("ties", "empty", "rel", "recall_cut"),
            "11-point interpolated average precision (trec_eval's 11pt_avg)",
            "mean of iprec at recall levels 0.0, 0.1, ..., 1.0 (with the same recall_cut)",
            aliases=("ipr11", "11pt_avg", "11pt"),
            cutoff="never",
        ),
        MeasureInfo(
            "err",
            "rank",
            ("ties", "empty", "max_grade", "rounding"),
            "expected reciprocal rank (Chapelle, Metzler, Zhang, Grinspan, CIKM 2009)",
            "sum_{r<=k} (1/r) R_r prod_{i<r} (1 - R_i), R = (2^g - 1) / 2^g_max, g = the label "
            "(a negative label counts as 0)",
        ),
        MeasureInfo(
            "rbp",
            "rank",
            ("ties", "rel", "p", "rounding"),
            "rank-biased precision (Moffat & Zobel, ACM TOIS 27(1), 2008); unjudged documents "
            "count as not relevant",
            "(1 - p) sum_{r<=k} p^(r-1) rel_r",
        ),
        MeasureInfo(
            "rbp_residual",
            "rank",
            ("ties", "p", "rounding"),
            "RBP's residual: the weight of the unjudged retrieved documents and of everything "
            "below the list (or below k)",
            "(1 - p) sum_{unjudged r<=k} p^(r-1) + p^min(n, k)",
            aliases=("rbp_resid",),
        ),
        MeasureInfo(
            "judged",
            "rank",
            ("ties", "short", "rounding"),
            "judged at k: the share of the top k that has a judgement (a qrels line with a "
            "relevance >= 0)",
            "(judged docs in the top k) / k (short=pad) or / min(k, n) (short=clip)",
            shorts=("pad", "clip", "zero"),
        ),
        MeasureInfo(
            "num_rel",
            "rank",
            ("rel",),
            "number of relevant documents of the query (retrieved or not; trec_eval's num_rel)",
            "R",
            aliases=("numrel",),
            cutoff="never",
        ),
        MeasureInfo(
            "num_ret",
            "rank",
            (),
            "number of documents ranked for the query (trec_eval's num_ret)",
            "n",
            aliases=("numret",),
            cutoff="never",
        ),
        MeasureInfo(
            "num_rel_ret",
            "rank",
            ("rel",),
            "number of relevant documents ranked (trec_eval's num_rel_ret)",
            "relevant docs in the list",
            aliases=("numrelret",),
            cutoff="never",
        ),
    )
}

_ALIASES: dict[str, str] = {}
for _info in REGISTRY.values():
    _ALIASES[_info.name] = _info.name
    for _a in _info.aliases:
        _ALIASES[_a] = _info.name


def available_measures() -> list[str]:
    """Canonical names of every registered measure."""
    return list(REGISTRY)


def get_measure_info(name: str) -> MeasureInfo:
    """The :class:`MeasureInfo` of a name or alias; unknown names raise :class:`SpecError`."""
    key = name.strip().lower()
    if key not in _ALIASES:
        known = ", ".join(
            n + (f" ({'/'.join(i.aliases)})" if i.aliases else "") for n, i in REGISTRY.items()
        )
        raise SpecError(
            f"unknown measure {name!r}; known: {known}. Fix: {closest_measures_fix(key)}"
        )
    return REGISTRY[_ALIASES[key]]


def closest_measures(text: str, n: int = 3) -> list[str]:
    """The registered measure names and aliases closest to ``text`` (its leading name: the part
    before ``(``, ``@``, ``.`` or ``_`` digits), by :func:`difflib.get_close_matches`; the
    canonical name first where an alias matched."""
    import difflib
    import re

    head = re.split(r"[(@]", text.strip().lower(), maxsplit=1)[0]
    out: list[str] = []
    for cand in (head, head.rstrip("0123456789._")):
        for hit in difflib.get_close_matches(cand, list(_ALIASES), n=n, cutoff=0.6):
            name = _ALIASES[hit]
            for shown in (name, hit):
                if shown not in out:
                    out.append(shown)
    return out[:n]


def closest_measures_fix(text: str) -> str:
    """The fix of a measure that cannot be read: the closest measures' names, else the list."""
    near = closest_measures(text)
    if near:
        which = "measures are" if len(near) > 1 else "measure is"
        return f"the closest {which} {', '.join(near)} (e.g. {near[0]}@10)"
    return "give a measure of 'ndcglab list measures', e.g. ndcg@10"


# ---------------------------------------------------------------------------------- values
def _canon_value(info: MeasureInfo, key: str, value: Any) -> Any:
    """Canonical form of one option value: text for anything nameable, else the object."""
    if key == "gain":
        g = get_gain(value)
        try:
            if isinstance(value, Gain | str) and get_gain(str(g)) == g:
                return str(g)
        except ConventionError:
            pass
        return g
    if key == "discount":
        d = get_discount(value)
        try:
            if isinstance(value, Discount | str) and get_discount(str(d)) == d:
                return str(d)
        except ConventionError:
            pass
        return d
    if not isinstance(value, str | int | float):
        raise ConventionError(f"option {key}= of {info.name} must be text, got {value!r}")
    text = value if isinstance(value, str) else format_number(value)
    if key == "ties":
        return canonical_ties(text)
    if key == "empty":
        return _canon_choice("empty", text, EMPTY_RULES)
    if key == "rounding":
        return _canon_choice("rounding", text, ROUNDINGS)
    if key == "short":
        s = text.strip().lower()
        if s not in info.shorts:
            raise ConventionError(
                f"unknown short rule {text!r} for {info.name}; known: {', '.join(info.shorts)} "
                "(see docs/measures.md: what a cut-off beyond the list's length means)"
            )
        return s
    if key == "rel":
        return _canon_rel(text)
    if key == "denom":
        return _canon_choice("denom", text, ("all", "cut"))
    if key == "recall_cut":
        if text.strip().lower() not in RECALL_CUTS:
            level = "level=0.1," if "level" in info.required else ""
            raise ConventionError(
                f"unknown recall_cut rule {text!r} of {info.name}; known: trunc, round "
                "(trunc: c = floor(x R + 0.9), trec_eval 9; round: c = lround(x R), trec_eval "
                f"10). Fix: e.g. {info.name}({level}recall_cut=round)"
            )
        return text.strip().lower()
    if key in ("p", "max_grade", "level"):
        return _canon_number(key, text)
    raise ConventionError(f"unknown option {key!r}")  # pragma: no cover - guarded by callers


@dataclass(init=False, repr=False, eq=False)  # the frozen methods: FrozenFields
class Measure(FrozenFields):
    """A measure as a value: ``name`` (canonical), explicitly set ``params`` (sorted ``(key,
    value)`` pairs, values canonical text or a custom gain/discount object) and ``cutoff``.

    Build one with :func:`parse_measure` (``"ndcg(ties=average)@5"``) or
    :meth:`Measure.create`. Two measures are equal when they print the same and hold the same
    custom objects. Unset options are filled by :meth:`resolve`.
    """

    name: str
    params: tuple[tuple[str, Any], ...] = ()
    cutoff: Cutoff | None = None

    def __init__(
        self, name: str, params: tuple[tuple[str, Any], ...] = (), cutoff: Cutoff | None = None
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "cutoff", cutoff)

    # ------------------------------------------------------------------ construction
    @classmethod
    def create(
        cls, name: str, cutoff: int | float | str | Cutoff | None = None, **options: Any
    ) -> Measure:
        """Build a measure from a name, a cut-off (``10``, ``"0.2n"``, a :class:`Cutoff`) and
        options; gains and discounts may be objects or callables (they then print by name and
        cannot be parsed back)."""
        info = get_measure_info(name)
        cut: Cutoff | None
        if cutoff is None or isinstance(cutoff, Cutoff):
            cut = cutoff
        elif isinstance(cutoff, str):
            cut = parse_spec(f"x@{cutoff}", what="cut-off").cutoff
        elif isinstance(cutoff, int):
            cut = Cutoff(k=cutoff)
        else:
            raise SpecError(
                f"cannot read cut-off {cutoff!r}. Fix: an integer k or text like '0.2n'"
            )
        return _build(info, dict(options), cut, spec_text=None)

    def with_options(self, **options: Any) -> Measure:
        """A copy with more options set (or replaced)."""
        merged = dict(self.params)
        merged.update(options)
        return _build(self.info, merged, self.cutoff, spec_text=None)

    # ------------------------------------------------------------------ reading
    @property
    def info(self) -> MeasureInfo:
        """The registry entry of this measure."""
        return REGISTRY[self.name]

    @property
    def options(self) -> dict[str, Any]:
        """The explicitly set options (plus the ones the measure fixes by definition)."""
        out = dict(self.info.fixed)
        out.update(self.params)
        return out

    def get(self, key: str, default: Any = None) -> Any:
        """One option's value (explicit or fixed), or ``default``."""
        return self.options.get(key, default)

    @property
    def is_resolved(self) -> bool:
        """True when every applicable option is set."""
        return all(k in self.options for k in _applicable(self.info, self.cutoff))

    def resolve(self, preset: Any = None) -> Measure:
        """Fill every unset option from ``preset`` (a name, a :class:`~ndcglab.measures.Preset`, or
        ``None`` for ``standard``). Options that do not apply are left out: ``short`` needs a fixed
        cut-off, ``rounding`` a fractional one, ``denom`` a cut-off."""
        p = get_preset(preset)
        opts = dict(self.params)
        for key in _applicable(self.info, self.cutoff):
            if key not in opts and key not in self.info.fixed:
                opts[key] = p.default(self.name, key)
        return _build(self.info, opts, self.cutoff, spec_text=None)

    def convention(self, preset: Any = None) -> dict[str, Any]:
        """Every option of the resolved measure as printable text, plus the cut-off."""
        r = self.resolve(preset)
        out: dict[str, Any] = {k: str(v) for k, v in sorted(r.options.items())}
        out["cutoff"] = None if self.cutoff is None else str(self.cutoff)
        return out

    def __str__(self) -> str:
        return str(ParsedSpec(self.name, tuple((k, str(v)) for k, v in self.params), self.cutoff))

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"


def _applicable(info: MeasureInfo, cutoff: Cutoff | None) -> list[str]:
    keys = []
    for k in info.params:
        if k == "short" and (cutoff is None or cutoff.k is None):
            continue
        if k == "rounding" and (cutoff is None or cutoff.fraction is None):
            continue
        if k == "denom" and cutoff is None:
            continue
        keys.append(k)
    return keys


def _build(
    info: MeasureInfo, options: dict[str, Any], cutoff: Cutoff | None, spec_text: str | None
) -> Measure:
    where = f" in {spec_text!r}" if spec_text else ""
    if cutoff is not None and info.cutoff == "never":
        raise SpecError(
            f"measure {info.name} takes no cut-off{where}: it averages over every position. "
            f"Fix: write {info.name} without @k"
        )
    params: dict[str, Any] = {}
    for key, value in options.items():
        key = key.strip().lower()
        if key in info.fixed:
            if str(_canon_value(info, key, value)) != info.fixed[key]:
                raise SpecError(
                    f"{info.name} fixes {key}={info.fixed[key]} by definition{where}; "
                    f"use ndcg({key}=...) for another {key}"
                )
            continue
        if key not in info.params:
            raise SpecError(
                f"unknown parameter {key!r} for measure {info.name}{where}; allowed: "
                + ", ".join(info.params)
            )
        params[key] = _canon_value(info, key, value)
    for key in info.required:
        if key not in params:
            raise SpecError(
                f"measure {info.name} needs {key}={where}: "
                f"{OPTIONS[key].doc}. Fix: e.g. {info.name}({key}=0.1)"
            )
    if "short" in params and (cutoff is None or cutoff.k is None):
        raise SpecError(
            f"short= applies to a fixed cut-off k (ndcg@10){where}; it has no meaning here. "
            "Fix: drop short= or give @k"
        )
    if "rounding" in params and (cutoff is None or cutoff.fraction is None):
        raise SpecError(
            f"rounding= applies to a fractional cut-off (@0.2n){where}. Fix: drop rounding= or "
            "give @<c>n"
        )
    return Measure(info.name, tuple(sorted(params.items())), cutoff)


#: names other tools print, read as ndcglab specs: trec_eval's ``name_k`` forms (``ndcg_cut_10``,
#: ``P_10``, ``recall_100``, ``success_1``, ``map_cut_10``, ``iprec_at_recall_0.10``,
#: ``11pt_avg``) and ir_measures' ``IPrec@0.1``. Plain names (``recip_rank``, ``Rprec``,
#: ``infAP``, ``nDCG@10``, ``AP``, ``RR@10``, ``R@100``, ``Judged@10``, ``ERR@20``,
#: ``RBP(p=0.8)``) are registry aliases read by the grammar itself. XGBoost's ``ndcg@10-`` and
#: ``map@10-`` (a query without a relevant document scores 0) are ``ndcg(empty=zero)@10`` and
#: ``map(empty=zero)@10``.
_TOOL_NAMES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ndcg_cut[._](\d+)"), "ndcg@{0}"),
    (re.compile(r"p[._](\d+)"), "p@{0}"),
    (re.compile(r"recall[._](\d+)"), "recall@{0}"),
    (re.compile(r"success[._](\d+)"), "success@{0}"),
    (re.compile(r"map_cut[._](\d+)"), "map@{0}"),
    (re.compile(r"iprec_at_recall[._]([0-9.]+)"), "iprec(level={0})"),
    (re.compile(r"iprec@([0-9.]+)"), "iprec(level={0})"),
    (re.compile(r"11[_-]?pt(?:_avg)?"), "iprec_11pt"),
    (re.compile(r"ndcg_burges(@\d+|)"), "ndcg(gain=exp2){0}"),
    (re.compile(r"(ndcg|map)(@\d+|)-"), "{0}(empty=zero){1}"),
)


def tool_name(spec: str) -> str:
    """The ndcglab spec of a measure name written the way trec_eval or ir_measures print it
    (``ndcg_cut_10`` -> ``ndcg@10``, ``iprec_at_recall_0.10`` -> ``iprec(level=0.10)``); any
    other text is returned unchanged."""
    t = spec.strip().lower()
    for pattern, form in _TOOL_NAMES:
        m = pattern.fullmatch(t)
        if m:
            return form.format(*m.groups())
    return spec


def measure_aliases(specs: Any) -> dict[str, str]:
    """Text as typed -> canonical printed measure, for every spec string whose text differs from
    its canonical form (``{"ndcg_cut_10": "ndcg@10", "AP": "map"}``): results print both, so
    nobody has to guess which measure an alias means."""
    if specs is None or isinstance(specs, Measure):
        return {}
    from .ir_names import expand_measure_specs

    specs = expand_measure_specs(specs)
    if isinstance(specs, str):
        specs = [specs]
    out: dict[str, str] = {}
    for s in specs:
        if isinstance(s, str):
            canon = str(parse_measure(s))
            if s.strip() != canon:
                out[s.strip()] = canon
    return out


def parse_measure(spec: str | Measure) -> Measure:
    """Parse a measure string (the grammar of :mod:`ndcglab._spec`) into a :class:`Measure`.

    Names as trec_eval and ir_measures print them are read too (:func:`tool_name`, and the
    registry's aliases), always into the canonical measure: ``ndcg_cut_10`` is ``ndcg@10``.
    Raises :class:`SpecError` for unknown names ("unknown measure X; known: ...") and unknown
    parameters (listing the allowed ones), :class:`ConventionError` for bad option values.
    """
    if isinstance(spec, Measure):
        return spec
    if isinstance(spec, str):
        from .ir_names import translate_ir_measures

        spec = tool_name(translate_ir_measures(spec))
    try:
        parsed = parse_spec(spec, what="measure")
    except SpecError as exc:
        if "Fix:" in str(exc):
            raise
        raise SpecError(
            f"{exc}. Fix: write NAME(key=value,...)@K; {closest_measures_fix(spec)}"
        ) from None
    info = get_measure_info(parsed.name)
    return _build(info, dict(parsed.params), parsed.cutoff, spec_text=spec)


def parse_measures(specs: Any) -> tuple[Measure, ...]:
    """One spec or a sequence of specs (strings or :class:`Measure`) as a tuple of measures,
    duplicates (same printed form) dropped, order kept."""
    if specs is None:
        return ()
    from .ir_names import expand_measure_specs

    specs = expand_measure_specs(specs)
    if isinstance(specs, str | Measure):
        specs = [specs]
    out: dict[str, Measure] = {}
    for s in specs:
        m = parse_measure(s)
        out.setdefault(str(m), m)
    return tuple(out.values())


def resolve_gain(m: Measure) -> Gain:
    """The :class:`Gain` object of a measure (its own, else the ``standard`` preset's)."""
    return get_gain(m.get("gain", get_preset().default(m.name, "gain")))


def resolve_discount(m: Measure) -> Discount:
    """The :class:`Discount` object of a measure (its own, else the ``standard`` preset's)."""
    return get_discount(m.get("discount", get_preset().default(m.name, "discount")))
