"""trec_eval's measures, one function per measure, each the rule of docs/trec_eval_cli.md
("Measures"), computed on one topic's :class:`~ndcglab.treceval._ranking.ResRels`.

A measure function returns the topic's values (one per cut-off or parameter slot); a value a
rule leaves unset is 0. ``rl`` is the ranked list of relevance values (-1: not in the pool,
-2: judged with a negative relevance), ``lvl`` the relevance level of ``-l``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cmp_to_key
from typing import Any

import numpy as np

from ._ranking import NONPOOL, UNJUDGED, ResRels

__all__ = ["MEASURES", "NICKNAMES", "MeasureDef", "Topic", "measure_sets", "measure_table"]

#: a floor for geometric means (trec_eval's ``MIN_GEO_MEAN``)
MIN_GEO_MEAN = 0.00001
#: what 0.0 / 0.0 gives in C on x86 (the default NaN, sign bit set: printed ``-nan``)
C_NAN = -math.nan
#: infAP's smoothing constant (trec_eval's ``INFAP_EPSILON``)
INFAP_EPSILON = 0.00001


def _cdiv(a: float, b: float) -> float:
    """``a / b`` as C divides doubles: by zero, +-inf (``a`` != 0) or NaN (``a`` == 0). Under
    ``-l`` 0 or less an unretrieved-but-counted document can make a topic's numerator positive
    while its ``num_rel`` is 0 (docs/trec_eval_cli.md, "Topics with only negative labels")."""
    if b:
        return a / b
    if a == 0 or math.isnan(a):
        return -math.nan  # x86's default NaN, printed -nan by glibc
    return math.copysign(math.inf, a)


def _clog(x: float) -> float:
    """C's ``log``: -inf at 0, NaN (printed -nan) below 0 or at NaN."""
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else -math.nan


class Topic:
    """What a measure reads for one topic: the joined ranking (formed on first use), judgment
    groups, preferences, and the options (``lvl``: ``-l``; ``n_coll``: ``-N``)."""

    def __init__(self, lvl: int, n_coll: int, version: int, getters: dict[str, Any]) -> None:
        self.lvl = lvl
        self.n_coll = n_coll
        self.version = version
        self._getters = getters
        self._cache: dict[str, Any] = {}

    def get(self, what: str) -> Any:
        if what not in self._cache:
            self._cache[what] = self._getters[what]()
        return self._cache[what]

    def counts(self, kind: str) -> list[Any]:
        """Prefix sums over the ranking (entry k: the first k documents), formed once per
        topic: ``rel`` relevant documents, ``unj`` unjudged or unpooled ones, ``ap`` map's
        precision sum (added rank by rank, as trec_eval adds it)."""
        key = "counts:" + kind
        if key not in self._cache:
            rl = self.rr.rl
            lvl = self.lvl
            if kind == "rel":
                flags = [1 if v >= lvl else 0 for v in rl]
                self._cache[key] = [0, *itertools.accumulate(flags)]
            elif kind == "unj":
                flags = [1 if v in (NONPOOL, UNJUDGED) else 0 for v in rl]
                self._cache[key] = [0, *itertools.accumulate(flags)]
            else:
                rel = self.counts("rel")
                terms = [rel[i + 1] / (i + 1) if v >= lvl else 0.0 for i, v in enumerate(rl)]
                self._cache[key] = [0.0, *itertools.accumulate(terms)]
        out: list[Any] = self._cache[key]
        return out

    @property
    def rr(self) -> ResRels:
        rr: ResRels = self.get("rr")
        return rr


Calc = Callable[[Topic, Any], list[float]]


@dataclass(frozen=True)
class MeasureDef:
    """One measure of trec_eval's table.

    ``kind``: ``long`` (a count, printed ``%ld``), ``double``, ``cut_long`` / ``cut_double``
    (one value per cut-off, named ``name_cut``), ``p_double`` / ``p_pair`` (one value, named
    ``name_params`` when parameters are given), ``relstring``, ``runid``. ``avg``: ``mean``,
    ``sum`` (counts), ``gm`` (geometric mean of the logs), ``num_q``, ``num_rel``.
    ``single``: whether ``-q`` prints per-topic lines."""

    name: str
    kind: str
    calc: Calc | None
    default: Any = None
    avg: str = "mean"
    single: bool = True
    versions: tuple[int, ...] = (9, 10)


# ------------------------------------------------------------------ counts and set measures


def _num_ret(t: Topic, _: Any) -> list[float]:
    return [float(t.rr.num_ret)]


def _num_rel(t: Topic, _: Any) -> list[float]:
    return [float(t.rr.num_rel)]


def _num_rel_ret(t: Topic, _: Any) -> list[float]:
    return [float(t.rr.num_rel_ret)]


def _num_q(t: Topic, _: Any) -> list[float]:
    return [1.0]


def _num_nonrel_judged_ret(t: Topic, _: Any) -> list[float]:
    r = t.rr
    return [float(r.num_ret - r.num_nonpool - r.num_unjudged_in_pool - r.num_rel_ret)]


def _set_p(t: Topic, _: Any) -> list[float]:
    r = t.rr
    return [r.num_rel_ret / r.num_ret if r.num_ret else 0.0]


def _set_recall(t: Topic, _: Any) -> list[float]:
    r = t.rr
    return [r.num_rel_ret / r.num_rel if r.num_rel else 0.0]


def _set_map(t: Topic, _: Any) -> list[float]:
    r = t.rr
    if r.num_ret and r.num_rel:
        return [(r.num_rel_ret * r.num_rel_ret) / (r.num_ret * r.num_rel)]
    return [0.0]


def _set_rel_p(t: Topic, _: Any) -> list[float]:
    r = t.rr
    if r.num_ret and r.num_rel:
        return [r.num_rel_ret / min(r.num_ret, r.num_rel)]
    return [0.0]


def _set_f(t: Topic, params: Sequence[float]) -> list[float]:
    r = t.rr
    if not r.num_rel_ret:
        return [0.0]
    p = r.num_rel_ret / r.num_ret
    rec = _cdiv(r.num_rel_ret, r.num_rel)
    x = params[0]
    return [(x + 1.0) * p * rec / (x * p + rec)]


def _utility(t: Topic, params: Sequence[float]) -> list[float]:
    if len(params) != 4:
        from ._readers import TrecEvalError

        raise TrecEvalError(
            f"utility takes 4 coefficients, got {len(params)} — -m utility.… Fix: give "
            "-m utility.A,B,C,D (gain per relevant retrieved, per nonrelevant retrieved, per "
            "relevant missed, per nonrelevant missed)",
            4,
        )
    r = t.rr
    return [
        params[0] * r.num_rel_ret
        + params[1] * (r.num_ret - r.num_rel_ret)
        + params[2] * (r.num_rel - r.num_rel_ret)
        + params[3] * (t.n_coll + r.num_rel_ret - r.num_ret - r.num_rel)
    ]


# ------------------------------------------------------------------ rank measures


def _ap_sum(rl: list[int], lvl: int) -> tuple[float, int]:
    s = 0.0
    k = 0
    for i, v in enumerate(rl):
        if v >= lvl:
            k += 1
            s += k / (i + 1)
    return s, k


def _map(t: Topic, _: Any) -> list[float]:
    r = t.rr
    s, k = t.counts("ap")[-1], t.counts("rel")[-1]
    return [_cdiv(s, r.num_rel) if k else 0.0]


def _gm_map(t: Topic, _: Any) -> list[float]:
    r = t.rr
    s, k = t.counts("ap")[-1], t.counts("rel")[-1]
    if k:
        s = _cdiv(s, r.num_rel)
    return [math.log(max(s, MIN_GEO_MEAN))]


def _yaap(t: Topic, _: Any) -> list[float]:
    r = t.rr
    s = t.counts("ap")[-1]
    return [_clog(_cdiv(1.0 + s, 1.0 + r.num_rel - s))]


def _rprec(t: Topic, _: Any) -> list[float]:
    r = t.rr
    n = min(r.num_ret, r.num_rel)
    if n == 0:
        return [0.0]
    return [t.counts("rel")[n] / r.num_rel]


def _recip_rank(t: Topic, _: Any) -> list[float]:
    for i, v in enumerate(t.rr.rl):
        if v >= t.lvl:
            return [1.0 / (i + 1)]
    return [0.0]


def _bpref_value(t: Topic) -> float:
    r = t.rr
    lvl = t.lvl
    num_nonrel = sum(r.rel_levels[j] for j in range(min(lvl, len(r.rel_levels))) if j >= 0)
    nonrel = 0
    b = 0.0
    for v in r.rl:
        if v == NONPOOL or v == UNJUDGED:
            continue
        if 0 <= v < lvl:
            nonrel += 1
        elif nonrel > 0:
            b += 1.0 - min(nonrel, r.num_rel) / min(num_nonrel, r.num_rel)
        else:
            b += 1.0
    if r.num_rel:
        b /= r.num_rel
    return b


def _bpref_once(t: Topic) -> float:
    """bpref, computed once per topic (bpref and gm_bpref both read it)."""
    if "bpref" not in t._cache:
        t._cache["bpref"] = _bpref_value(t)
    value: float = t._cache["bpref"]
    return value


def _bpref(t: Topic, _: Any) -> list[float]:
    return [_bpref_once(t)]


def _gm_bpref(t: Topic, _: Any) -> list[float]:
    return [math.log(max(_bpref_once(t), MIN_GEO_MEAN))]


def _infap(t: Topic, _: Any) -> list[float]:
    r = t.rr
    nonrel = rel = unj = 0
    s = 0.0
    for j, v in enumerate(r.rl):
        if v == NONPOOL:
            continue
        if v == UNJUDGED:
            unj += 1
            continue
        if 0 <= v < t.lvl:
            nonrel += 1
            continue
        rel += 1
        if j == 0:
            s += 1.0
        else:
            fj = float(j)
            s += 1.0 / (fj + 1.0) + (fj / (fj + 1.0)) * ((rel - 1 + nonrel + unj) / fj) * (
                (rel - 1 + INFAP_EPSILON) / (rel - 1 + nonrel + 2 * INFAP_EPSILON)
            )
    if r.num_rel:
        s /= r.num_rel
    return [s]


def _at_cutoffs(rl: list[int], cuts: Sequence[int], step: Callable[[int, int], None],
                value: Callable[[int], float]) -> list[float]:  # fmt: skip
    """trec_eval's walk down a ranking with sorted cut-offs: before rank ``i`` (0-based) is
    read, the slot of a cut-off equal to ``i`` takes ``value(i)``; cut-offs past the ranking
    take ``value(cut)`` at the end."""
    out = [0.0] * len(cuts)
    ci = 0
    for i, v in enumerate(rl):
        if i == cuts[ci]:
            out[ci] = value(i)
            ci += 1
            if ci == len(cuts):
                return out
        step(i, v)
    while ci < len(cuts):
        out[ci] = value(cuts[ci])
        ci += 1
    return out


class _Counter:
    def __init__(self) -> None:
        self.n = 0
        self.s = 0.0


def _p_of(rl: list[int], cuts: Sequence[int], lvl: int) -> list[float]:
    c = _Counter()

    def step(i: int, v: int) -> None:
        if v >= lvl:
            c.n += 1

    return _at_cutoffs(rl, cuts, step, lambda k: c.n / k)


# The cut-off measures below read prefix counts: trec_eval's walk gives a cut-off k the count
# over the first min(k, num_ret) documents (a ranking shorter than k is padded with nothing).


def _p(t: Topic, cuts: Sequence[int]) -> list[float]:
    rel, n = t.counts("rel"), t.rr.num_ret
    return [rel[min(k, n)] / k for k in cuts]


def _recall(t: Topic, cuts: Sequence[int]) -> list[float]:
    r = t.rr
    if r.num_rel == 0:
        return [0.0] * len(cuts)
    rel = t.counts("rel")
    return [rel[min(k, r.num_ret)] / r.num_rel for k in cuts]


def _rel_p(t: Topic, cuts: Sequence[int]) -> list[float]:
    r = t.rr
    if r.num_rel == 0:
        return [0.0] * len(cuts)
    rel = t.counts("rel")
    return [rel[min(k, r.num_ret)] / (r.num_rel if k > r.num_rel else k) for k in cuts]


def _success(t: Topic, cuts: Sequence[int]) -> list[float]:
    rel, n = t.counts("rel"), t.rr.num_ret
    return [1.0 if rel[min(k, n)] else 0.0 for k in cuts]


def _unj(t: Topic, cuts: Sequence[int]) -> list[float]:
    unj, n = t.counts("unj"), t.rr.num_ret
    return [unj[min(k, n)] / k for k in cuts]


def _map_cut(t: Topic, cuts: Sequence[int]) -> list[float]:
    r = t.rr
    if r.num_rel == 0:
        return [0.0] * len(cuts)
    ap = t.counts("ap")
    return [ap[min(k, r.num_ret)] / r.num_rel for k in cuts]


def _ndcg_cut(t: Topic, cuts: Sequence[int]) -> list[float]:
    r = t.rr
    # the walk of _at_cutoffs, inlined (the gain sum read at each cut-off before its rank)
    out = [0.0] * len(cuts)
    n_cuts = len(cuts)
    log2 = math.log2
    s = 0.0
    ci = 0
    for i, v in enumerate(r.rl):
        if i == cuts[ci]:
            out[ci] = s
            ci += 1
            if ci == n_cuts:
                break
        if v > 0:
            s += v / log2(i + 2)
    else:
        while ci < n_cuts:
            out[ci] = s
            ci += 1
    # the ideal ranking: the judged levels from the highest down, each as often as judged
    ci = 0
    lvl = r.num_rel_levels - 1
    count = 0
    ideal = 0.0
    i = 0
    while True:
        count += 1
        while lvl > 0 and count > r.rel_levels[lvl]:
            lvl -= 1
            count = 1
        if lvl <= 0:
            break
        if i == cuts[ci]:
            if ideal > 0.0:
                out[ci] /= ideal
            ci += 1
            if ci == len(cuts):
                break
        ideal += lvl / math.log2(i + 2)
        i += 1
    while ci < len(cuts):
        if ideal > 0.0:
            out[ci] /= ideal
        ci += 1
    return out


def _interpolated(t: Topic, fracs: Sequence[float], rounding: str) -> tuple[list[float], float]:
    """Interpolated precision at the recall fractions ``fracs`` (sorted), as
    ``iprec_at_recall`` and ``11pt_avg`` compute it; also the sum of the values (11pt_avg).
    Formed once per topic for given fractions (both measures read the same walk)."""
    key = f"interpolated:{rounding}:{list(fracs)!r}"
    if key not in t._cache:
        t._cache[key] = _interpolated_walk(t, fracs, rounding)
    out: tuple[list[float], float] = t._cache[key]
    return list(out[0]), out[1]


def _interpolated_walk(
    t: Topic, fracs: Sequence[float], rounding: str
) -> tuple[list[float], float]:
    r = t.rr
    if rounding == "lround":
        cuts = [_lround(f * r.num_rel) for f in fracs]
    else:
        cuts = [int(f * r.num_rel + 0.9) for f in fracs]
    vals = [0.0] * len(fracs)
    cur = len(fracs) - 1
    while cur >= 0 and cuts[cur] > r.num_rel_ret:
        cur -= 1
    precis = r.num_rel_ret / r.num_ret if r.num_ret else C_NAN
    int_precis = precis
    so_far = r.num_rel_ret
    i = r.num_ret
    total = 0.0
    while i > 0 and so_far > 0:
        precis = so_far / i
        if int_precis < precis:
            int_precis = precis
        if r.rl[i - 1] >= t.lvl:
            while cur >= 0 and so_far == cuts[cur]:
                vals[cur] = int_precis
                total += int_precis
                cur -= 1
            so_far -= 1
        i -= 1
    while cur >= 0:
        vals[cur] = int_precis
        total += int_precis
        cur -= 1
    return vals, total


def _lround(x: float) -> int:
    """C's ``lround``: halves away from zero."""
    return math.floor(x + 0.5) if x >= 0 else -math.floor(-x + 0.5)


def _iprec(t: Topic, fracs: Sequence[float]) -> list[float]:
    return _interpolated(t, fracs, "lround" if t.version >= 10 else "plus09")[0]


def _11pt(t: Topic, fracs: Sequence[float]) -> list[float]:
    if not fracs:
        from ._readers import TrecEvalError

        raise TrecEvalError("11pt_avg has no cut-off values. Fix: give -m 11pt_avg.0.2,0.5", 4)
    total = _interpolated(t, fracs, "lround" if t.version >= 10 else "plus09")[1]
    return [total / len(fracs)]


def _rprec_mult(t: Topic, fracs: Sequence[float]) -> list[float]:
    return _rprec_mult_one(t.rr, fracs, t.lvl)


def _rprec_mult_one(r: ResRels, fracs: Sequence[float], lvl: int) -> list[float]:
    cuts = [int(f * r.num_rel + 0.9) for f in fracs]
    vals = [0.0] * len(fracs)
    cur = len(fracs) - 1
    while cur >= 0 and cuts[cur] > r.num_ret:
        vals[cur] = r.num_rel_ret / cuts[cur]
        cur -= 1
    so_far = r.num_rel_ret
    i = r.num_ret
    while i > 0 and so_far > 0:
        precis = so_far / i
        while cur >= 0 and i == cuts[cur]:
            vals[cur] = precis
            cur -= 1
        if r.rl[i - 1] >= lvl:
            so_far -= 1
        i -= 1
    return vals


def _relstring(t: Topic, params: Sequence[float]) -> list[float]:
    return []  # printed from the ranking itself (see _run.relstring)


# ------------------------------------------------------------------ gain measures


@dataclass
class _Gain:
    level: int
    gain: float
    count: int


def _c_int(x: float) -> int:
    """C's conversion of a double to int (toward zero)."""
    return int(x) if math.isfinite(x) else 0


def _gains(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[_Gain]:
    """trec_eval's gain table: the levels named by ``level=gain`` parameters (trec_eval 10
    skips a name that is not an integer, such as rbp's ``p``), then every judged level not
    named (gain = the level), sorted by gain (compared as trec_eval compares them: the
    difference truncated to an integer). Formed once per topic and parameters; a copy."""
    key = "gains:" + repr(tuple(pairs))
    cached = t._cache.get(key)
    if cached is None:
        cached = t._cache[key] = _gain_table(t, pairs)
    return [_Gain(g.level, g.gain, g.count) for g in cached]


def _gain_table(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[_Gain]:
    r = t.rr
    out: list[_Gain] = []
    for name, value in pairs:
        if t.version >= 10 and not _valid_int(name):
            continue
        out.append(_Gain(_atol_str(name), float(value), 0))
    for i in range(r.num_rel_levels):
        for g in out:
            if g.level == i:
                g.count = r.rel_levels[i]
                break
        else:
            out.append(_Gain(i, float(i), r.rel_levels[i]))
    out.sort(key=cmp_to_key(lambda a, b: _c_int(a.gain - b.gain)))
    return out


def _gain_map(gains: list[_Gain]) -> dict[int, float]:
    """level -> gain, the first entry of the sorted table winning (as trec_eval's lookup)."""
    out: dict[int, float] = {}
    for g in gains:
        out.setdefault(g.level, g.gain)
    return out


_LOG2: list[float] = []


def _log2_table(n: int) -> list[float]:
    """log2(i + 2) for i = 0 .. n - 1 (at least), computed once."""
    while len(_LOG2) < n:
        _LOG2.append(math.log2(len(_LOG2) + 2))
    return _LOG2


def _valid_int(s: str) -> bool:
    body = s[1:] if s[:1] in "+-" else s
    return bool(body) and body.isascii() and body.isdigit()


def _atol_str(s: str) -> int:
    from ._readers import atol

    return atol(s.encode("latin-1"))


def _gain_of(level: int, gains: list[_Gain]) -> float:
    for g in gains:
        if g.level == level:
            return g.gain
    return 0.0


class _Ideal:
    """The ideal ranking's gains, highest first, walked one rank at a time: ``gain`` is the
    table's highest gain before the first step, then the gain of the k-th document of the ideal
    ranking after k steps (0 past its end)."""

    def __init__(self, gains: list[_Gain]) -> None:
        self.seq = [g.gain for g in reversed(gains) for _ in range(max(g.count, 0))]
        self.gain = gains[-1].gain if gains else 0.0
        self.count = 0

    def advance(self) -> None:
        k = self.count
        self.gain = self.seq[k] if k < len(self.seq) else 0.0
        self.count = k + 1


def _walk(
    t: Topic, pairs: Sequence[tuple[str, float]]
) -> tuple[dict[int, float], list[float], float]:
    """(level -> gain, the ideal ranking's gains highest first, the table's highest gain):
    trec_eval's walk down the ideal ranking, formed once per topic and parameters. Its k-th
    step (k = 1, 2, ...) gives the gain of the k-th ideal document (0 past the end); before
    the first step the walk holds the table's highest gain."""
    key = "walk:" + repr(tuple(pairs))
    walk = t._cache.get(key)
    if walk is None:
        gains = _gains(t, pairs)
        ideal = _Ideal(gains)
        walk = t._cache[key] = (_gain_map(gains), ideal.seq, ideal.gain)
    out: tuple[dict[int, float], list[float], float] = walk
    return out


def _rank_gains(
    t: Topic, pairs: Sequence[tuple[str, float]], gmap: dict[int, float]
) -> list[float]:
    """The gain of each ranked document (0 for a level the table leaves out), formed once per
    topic and parameters for the dcg-family measures."""
    key = "rank_gains:" + repr(tuple(pairs))
    gains = t._cache.get(key)
    if gains is None:
        get = gmap.get
        gains = t._cache[key] = [get(v, 0.0) for v in t.rr.rl]
    out: list[float] = gains
    return out


def _dcg_parts(t: Topic, pairs: Sequence[tuple[str, float]]) -> tuple[float, float]:
    r = t.rr
    gmap, seq, cur = _walk(t, pairs)
    gl = _rank_gains(t, pairs, gmap)
    n, nseq = r.num_ret, len(seq)
    log2 = _log2_table(n + nseq + 2)
    dcg = ideal_dcg = 0.0
    i = 0
    # the ranking and the ideal ranking side by side while the ideal gain is positive; here and
    # below the walk has taken i steps when rank i is read
    while i < n and cur > 0.0:
        g = gl[i]
        if g != 0:
            dcg += g / log2[i]
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            ideal_dcg += cur / log2[i]
        i += 1
    while i < n:
        g = gl[i]
        if g != 0:
            dcg += g / log2[i]
        i += 1
    while cur > 0.0:  # (only when the ranking ended first: i steps taken)
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            ideal_dcg += cur / log2[i]
        i += 1
    return dcg, ideal_dcg


def _ndcg(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[float]:
    dcg, ideal = _dcg_parts(t, pairs)
    return [dcg / ideal if ideal > 0.0 else 0.0]


def _dcg(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[float]:
    return [_dcg_parts(t, pairs)[0]]


def _ideal_dcg(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[float]:
    return [_dcg_parts(t, pairs)[1]]


def _ndcg_p(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[float]:
    r = t.rr
    gains = _gains(t, pairs)
    gmap = _gain_map(gains)
    s = 0.0
    for i, v in enumerate(r.rl):
        g = gmap.get(v, 0.0)
        if g != 0:
            s += g / math.log2(i + 1) if i > 0 else g
    total = sum(g.count for g in gains)
    lvl = len(gains) - 1
    count = 0
    ideal = 0.0
    for i in range(total):
        count += 1
        while count > gains[lvl].count:
            count = 1
            lvl -= 1
            if lvl < 0 or gains[lvl].gain <= 0.0:
                break
        if lvl < 0 or gains[lvl].gain <= 0.0:
            break
        g = gains[lvl].gain
        ideal += g if i == 0 else g / math.log2(i + 1)
    if r.num_rel_ret > 0:
        return [_c_div(s, ideal)]
    return [0.0]


def _ndcg_rel(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[float]:
    r = t.rr
    gmap, seq, cur = _walk(t, pairs)
    gl = _rank_gains(t, pairs, gmap)
    n, nseq = r.num_ret, len(seq)
    log2 = _log2_table(n + nseq + 2)
    dcg = ideal_dcg = s = 0.0
    n_rel_ret = n_rel = 0
    ratio = _c_div
    i = 0
    while i < n and cur > 0.0:
        g = gl[i]
        if g != 0:
            dcg += g / log2[i]
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            n_rel += 1
            ideal_dcg += cur / log2[i]
        if g > 0:
            s += ratio(dcg, ideal_dcg)
            n_rel_ret += 1
        i += 1
    while i < n:
        g = gl[i]
        if g != 0:
            dcg += g / log2[i]
        if g > 0:
            s += ratio(dcg, ideal_dcg)
            n_rel_ret += 1
        i += 1
    while cur > 0.0:
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            n_rel += 1
            ideal_dcg += cur / log2[i]
        i += 1
    s += (n_rel - n_rel_ret) * ratio(dcg, ideal_dcg)
    return [s / n_rel if s > 0.0 else 0.0]


def _rndcg(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[float]:
    r = t.rr
    gmap, seq, cur = _walk(t, pairs)
    gl = _rank_gains(t, pairs, gmap)
    if r.num_rel == 0:
        return [0.0]
    n, nseq = r.num_ret, len(seq)
    log2 = _log2_table(n + nseq + 2)
    dcg = ideal_dcg = s = 0.0
    old = cur
    changes = 0
    i = 0
    while i < n and cur > 0.0:
        g = gl[i]
        cur = seq[i] if i < nseq else 0.0
        if old != cur:
            if ideal_dcg > 0.0:
                s += dcg / ideal_dcg
                changes += 1
            old = cur
        if g != 0:
            dcg += g / log2[i]
        if cur > 0.0:
            ideal_dcg += cur / log2[i]
        i += 1
    if i < n:
        while i < n:
            g = gl[i]
            if g != 0:
                dcg += g / log2[i]
            i += 1
        if ideal_dcg > 0.0:
            s += dcg / ideal_dcg
            changes += 1
    while cur > 0.0:
        cur = seq[i] if i < nseq else 0.0
        if old != cur:
            if ideal_dcg > 0.0:
                s += dcg / ideal_dcg
                changes += 1
            old = cur
        if cur > 0.0:
            ideal_dcg += cur / log2[i]
        i += 1
    if changes == 0:
        return [_c_div(s, 0.0)]
    return [s / changes]


def _g(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[float]:
    r = t.rr
    gmap, seq, cur = _walk(t, pairs)
    gl = _rank_gains(t, pairs, gmap)
    n, nseq = r.num_ret, len(seq)
    res_g = sum_res = sum_ideal = sum_cost = 0.0
    min_cost = 1.0
    log2 = math.log2
    i = 0
    while i < n and cur > 0.0:
        g = gl[i]
        sum_res += g
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            sum_ideal += cur
        sum_cost += cur if cur >= min_cost else min_cost
        if g != 0:
            res_g += g / log2(2 + sum_cost - sum_res)
        i += 1
    while i < n:
        g = gl[i]
        sum_res += g
        sum_cost += min_cost
        if g != 0:
            res_g += g / log2(2 + sum_cost - sum_res)
        i += 1
    while cur > 0.0:
        cur = seq[i] if i < nseq else 0.0
        if cur > 0.0:
            sum_ideal += cur
        i += 1
    return [res_g / sum_ideal if sum_ideal > 0.0 else 0.0]


def _bin_g(t: Topic, _: Any) -> list[float]:
    r = t.rr
    k = 0
    s = 0.0
    for i, v in enumerate(r.rl):
        if v >= t.lvl:
            k += 1
            s += 1.0 / math.log2(3 + i - k)
    return [_cdiv(s, r.num_rel) if k else 0.0]


def _rbp_p(pairs: Sequence[tuple[str, float]]) -> float:
    p = 0.9
    for name, value in pairs:
        if name == "p":
            p = float(value)
    return p


def _rbp(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[float]:
    r = t.rr
    p = _rbp_p(pairs)
    gains = _gains(t, pairs)
    # trec_eval 10 starts its search for the smallest and largest gain from values it never
    # sets; with the compilers we know they start at 0: gains are rescaled to [0, 1] when one
    # is below 0 or above 1
    lo = min([0.0] + [g.gain for g in gains])
    hi = max([0.0] + [g.gain for g in gains])
    if lo < 0 or hi > 1:
        for level in gains:
            level.gain = (level.gain - lo) / (hi - lo)
    s = 0.0
    cur = 1.0
    for v in r.rl:
        g = _gain_of(v, gains)
        if g != 0:
            s += g * cur
        cur *= p
    return [(1.0 - p) * s]


def _rbp_resid(t: Topic, pairs: Sequence[tuple[str, float]]) -> list[float]:
    r = t.rr
    p = _rbp_p(pairs)
    unj = 0
    s = 0.0
    cur = 1.0
    for v in r.rl:
        if v < 0:
            unj += 1
            s += cur
        cur *= p
    return [cur + (1 - p) * s if unj else 0.0]


# ------------------------------------------------------------------ judgment groups


def _map_avgjg(t: Topic, _: Any) -> list[float]:
    groups: list[ResRels] = t.get("jg")
    total = 0.0
    for r in groups:
        s, k = _ap_sum(r.rl, t.lvl)
        if k:
            total += _cdiv(s, r.num_rel)
    return [total / len(groups) if len(groups) > 1 else total]


def _p_avgjg(t: Topic, cuts: Sequence[int]) -> list[float]:
    groups: list[ResRels] = t.get("jg")
    out = [0.0] * len(cuts)
    for r in groups:
        vals = _p_of(r.rl, cuts, t.lvl)
        out = [a + b for a, b in zip(out, vals, strict=True)]
    if len(groups) > 1:
        out = [v / len(groups) for v in out]
    return out


def _rprec_mult_avgjg(t: Topic, fracs: Sequence[float]) -> list[float]:
    groups: list[ResRels] = t.get("jg")
    out = [0.0] * len(fracs)
    for r in groups:
        vals = _rprec_mult_one(r, fracs, t.lvl)
        out = [a + b for a, b in zip(out, vals, strict=True)]
    if len(groups) > 1:
        out = [v / len(groups) for v in out]
    return out


# ------------------------------------------------------------------ preferences


def _prefs_simp(ret: bool, imp: bool) -> Calc:
    def calc(t: Topic, _: Any) -> list[float]:
        rp = t.get("prefs")
        ful = poss = 0
        for jg in rp.jgs:
            ful += jg.ful_ret
            poss += jg.poss_ret
            if not ret:
                ful += jg.ful_imp
                poss += jg.poss_imp
                if not imp:
                    poss += jg.poss_notoccur
        return [ful / poss if poss else 0.0]

    return calc


def _prefs_avgjg(ret: bool, imp: bool) -> Calc:
    def calc(t: Topic, _: Any) -> list[float]:
        rp = t.get("prefs")
        s = 0.0
        for jg in rp.jgs:
            ful = jg.ful_ret
            poss = jg.poss_ret
            if not ret:
                ful += jg.ful_imp
                poss += jg.poss_imp
                if not imp:
                    poss += jg.poss_notoccur
            if poss:
                s += ful / poss
        return [s / len(rp.jgs) if s > 0.0 else 0.0]

    return calc


def _seq_sum(start: float, values: Any) -> float:
    """``start + v0 + v1 + ...`` added one by one, left to right, as a C loop adds them."""
    if len(values) == 0:
        return start
    return float(np.cumsum(np.concatenate(([start], values)))[-1])


def _prefs_pair(region: str) -> Calc:
    def calc(t: Topic, _: Any) -> list[float]:
        rp = t.get("prefs")
        c = rp.counts
        njr, nj = rp.num_judged_ret, rp.num_judged
        s = 0.0
        pairs = 0

        def block(r0: int, r1: int, c0: int, c1: int, upper: bool, score: bool) -> None:
            # the pairs (i, j), i in [r0, r1), j in [c0, c1) (j > i when ``upper``) with a
            # preference either way; each adds the share of groups preferring i to j
            nonlocal s, pairs
            a = c[r0:r1, c0:c1]
            b = c.T[r0:r1, c0:c1]
            seen = (a + b) > 0
            if upper:
                seen &= np.triu(np.ones(seen.shape, dtype=bool), 1)
            pairs += int(np.count_nonzero(seen))
            if score:
                s = _seq_sum(s, a[seen] / (a[seen] + b[seen]))

        block(0, njr, 0, njr, True, True)
        if region in ("all", "imp"):
            block(0, njr, njr, nj, False, True)
        if region == "all":
            block(njr, nj, njr, nj, True, False)
        return [s / pairs if pairs else 0.0]

    return calc


def _prefs_num(which: str) -> Calc:
    def calc(t: Topic, _: Any) -> list[float]:
        rp = t.get("prefs")
        n = 0
        for jg in rp.jgs:
            if which == "poss":
                n += jg.poss_ret + jg.poss_imp + jg.poss_notoccur
            elif which == "ful":
                n += jg.ful_ret + jg.ful_imp
            else:
                n += jg.ful_ret
        return [float(n)]

    return calc


def _recalc_rnonrel(jg: Any, njr: int, only_ret: bool, pool: list[int]) -> tuple[int, int]:
    """prefs_avgjg_Rnonrel's count when a group has more nonrelevant than relevant documents:
    only the first R nonrelevant ones (by internal rank) count. R ranks are read from where
    the last class starts, on into the rank pool when that class is shorter (as trec_eval
    reads them; see :class:`~ndcglab.treceval._ranking.RankPool`)."""
    ful = poss = 0
    if jg.ecs:
        keep = jg.num_rel_ret if only_ret else jg.num_rel
        new_nonrel = pool[jg.last_ec_at : jg.last_ec_at + keep]
        new_nonrel += [0] * (keep - len(new_nonrel))

        def ranks(lst: list[int]) -> list[int]:
            if not only_ret:
                return lst
            out = []
            for x in lst:
                if x >= njr:
                    break
                out.append(x)
            return out

        n = len(jg.ecs)

        def tally(x: list[int], y: list[int]) -> None:
            nonlocal ful, poss
            a = np.asarray(ranks(x), dtype=np.int64)[:, None]
            b = np.asarray(ranks(y), dtype=np.int64)[None, :]
            hit = (a < b) if only_ret else ((a < b) & (a < njr))
            k = int(np.count_nonzero(hit))
            ful += k
            poss += a.shape[0] * b.shape[1] - k

        for e1 in range(n):
            for e2 in range(e1 + 1, n - 1):
                tally(jg.ecs[e1][1], jg.ecs[e2][1])
        for e1 in range(n):
            tally(jg.ecs[e1][1], new_nonrel)
        return ful, poss + ful
    a = jg.pa
    rel = jg.rel_array
    nj = len(rel)
    seen = 0
    limit = njr if only_ret else nj
    i = 0
    while i < limit:
        if rel[i] == 0.0:
            seen += 1
            if seen == jg.num_rel + 1:
                break
        i += 1
    first_dropped = i

    def dropped(k: int) -> bool:
        return k >= first_dropped and rel[k] == 0.0

    for i in range(njr):
        if dropped(i):
            continue
        for j in range(i):
            if not dropped(j) and a[i, j]:
                poss += 1
        for j in range(i + 1, njr):
            if not dropped(j) and a[i, j]:
                ful += 1
        if not only_ret:
            for j in range(njr, nj):
                if not dropped(j) and a[i, j]:
                    ful += 1
    if not only_ret:
        for i in range(njr, nj):
            if dropped(i):
                continue
            for j in range(nj):
                if not dropped(j) and a[i, j]:
                    poss += 1
    return ful, poss + ful


def _prefs_rnonrel(only_ret: bool) -> Calc:
    def calc(t: Topic, _: Any) -> list[float]:
        rp = t.get("prefs")
        s = 0.0
        for jg in rp.jgs:
            if only_ret:
                big_r, big_n = jg.num_rel_ret, jg.num_nonrel_ret
            else:
                big_r, big_n = jg.num_rel, jg.num_nonrel
            if big_r >= big_n:
                ful = jg.ful_ret
                poss = jg.poss_ret
                if not only_ret:
                    ful += jg.ful_imp
                    poss += jg.poss_imp + jg.poss_notoccur
                ful += jg.num_rel_ret * (big_r - big_n)
                poss += jg.num_rel * (big_r - big_n)
            else:
                ful, poss = _recalc_rnonrel(jg, rp.num_judged_ret, only_ret, rp.pool)
            s += _c_div(ful, poss)
        return [s / len(rp.jgs) if s > 0.0 else 0.0]

    return calc


def _c_div(a: float, b: float) -> float:
    """C's ``a / b`` on doubles: x / 0 is an infinity, 0 / 0 (or a NaN) :data:`C_NAN`."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return C_NAN if not math.isnan(a) else a
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


# ------------------------------------------------------------------ the table

_CUTS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_FRACS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
_MULTS = (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)

MEASURES: tuple[MeasureDef, ...] = (
    MeasureDef("runid", "runid", None, avg="none", single=False),
    MeasureDef("num_q", "long", _num_q, avg="num_q", single=False),
    MeasureDef("num_ret", "long", _num_ret, avg="sum"),
    MeasureDef("num_rel", "long", _num_rel, avg="num_rel"),
    MeasureDef("num_rel_ret", "long", _num_rel_ret, avg="sum"),
    MeasureDef("map", "double", _map),
    MeasureDef("gm_map", "double", _gm_map, avg="gm", single=False),
    MeasureDef("Rprec", "double", _rprec),
    MeasureDef("bpref", "double", _bpref),
    MeasureDef("recip_rank", "double", _recip_rank),
    MeasureDef("iprec_at_recall", "cut_double", _iprec, _FRACS),
    MeasureDef("P", "cut_long", _p, _CUTS),
    MeasureDef("relstring", "relstring", _relstring, (10.0,), avg="none"),
    MeasureDef("recall", "cut_long", _recall, _CUTS),
    MeasureDef("infAP", "double", _infap),
    MeasureDef("gm_bpref", "double", _gm_bpref, avg="gm", single=False),
    MeasureDef("Rprec_mult", "cut_double", _rprec_mult, _MULTS),
    MeasureDef("utility", "p_double", _utility, (1.0, -1.0, 0.0, 0.0)),
    MeasureDef("11pt_avg", "p_double", _11pt, _FRACS),
    MeasureDef("binG", "double", _bin_g),
    MeasureDef("G", "p_pair", _g, ()),
    MeasureDef("dcg", "p_pair", _dcg, (), versions=(10,)),
    MeasureDef("ideal_dcg", "p_pair", _ideal_dcg, (), versions=(10,)),
    MeasureDef("ndcg", "p_pair", _ndcg, ()),
    MeasureDef("ndcg_rel", "p_pair", _ndcg_rel, ()),
    MeasureDef("Rndcg", "p_pair", _rndcg, ()),
    MeasureDef("ndcg_cut", "cut_long", _ndcg_cut, _CUTS),
    MeasureDef("map_cut", "cut_long", _map_cut, _CUTS),
    MeasureDef("relative_P", "cut_long", _rel_p, _CUTS),
    MeasureDef("success", "cut_long", _success, (1, 5, 10)),
    MeasureDef("set_P", "double", _set_p),
    MeasureDef("set_relative_P", "double", _set_rel_p),
    MeasureDef("set_recall", "double", _set_recall),
    MeasureDef("set_map", "double", _set_map),
    MeasureDef("set_F", "p_double", _set_f, (1.0,)),
    MeasureDef("num_nonrel_judged_ret", "long", _num_nonrel_judged_ret, avg="sum"),
    MeasureDef("prefs_num_prefs_poss", "long", _prefs_num("poss"), avg="sum"),
    MeasureDef("prefs_num_prefs_ful", "long", _prefs_num("ful"), avg="sum"),
    MeasureDef("prefs_num_prefs_ful_ret", "long", _prefs_num("ful_ret"), avg="sum"),
    MeasureDef("prefs_simp", "double", _prefs_simp(False, False)),
    MeasureDef("prefs_pair", "double", _prefs_pair("all")),
    MeasureDef("prefs_avgjg", "double", _prefs_avgjg(False, False)),
    MeasureDef("prefs_avgjg_Rnonrel", "double", _prefs_rnonrel(False)),
    MeasureDef("prefs_simp_ret", "double", _prefs_simp(True, False)),
    MeasureDef("prefs_pair_ret", "double", _prefs_pair("ret")),
    MeasureDef("prefs_avgjg_ret", "double", _prefs_avgjg(True, False)),
    MeasureDef("prefs_avgjg_Rnonrel_ret", "double", _prefs_rnonrel(True)),
    MeasureDef("prefs_simp_imp", "double", _prefs_simp(False, True)),
    MeasureDef("prefs_pair_imp", "double", _prefs_pair("imp")),
    MeasureDef("prefs_avgjg_imp", "double", _prefs_avgjg(False, True)),
    MeasureDef("map_avgjg", "double", _map_avgjg),
    MeasureDef("P_avgjg", "cut_long", _p_avgjg, _CUTS),
    MeasureDef("Rprec_mult_avgjg", "cut_double", _rprec_mult_avgjg, _MULTS),
    MeasureDef("yaap", "double", _yaap),
    MeasureDef("rbp", "p_pair", _rbp, (), versions=(10,)),
    MeasureDef("rbp_resid", "p_pair", _rbp_resid, (), versions=(10,)),
    MeasureDef("unj", "cut_long", _unj, (5, 10, 20), versions=(10,)),
)

_OFFICIAL = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip
_ALL_TREC = (
    *_OFFICIAL, "relstring", "recall", "unj", "rbp", "rbp_resid", "infAP", "gm_bpref",
    "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success", "map_cut",
    "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall", "set_relative_P",
    "set_map", "set_F", "num_nonrel_judged_ret",
)  # fmt: skip
_ALL_PREFS = (
    "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
    "prefs_simp", "prefs_pair", "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret",
    "prefs_pair_ret", "prefs_avgjg_ret", "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp",
    "prefs_pair_imp", "prefs_avgjg_imp",
)  # fmt: skip
_SET = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
    "set_relative_P", "set_map", "set_F",
)  # fmt: skip
_PREFS = (
    "runid", "num_q", "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret",
    "prefs_simp", "prefs_pair", "prefs_avgjg",
)  # fmt: skip
#: trec_eval's names for sets of measures (``-m all_trec``); trec_eval 9 has no rbp,
#: rbp_resid and unj, so its sets lack them
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _OFFICIAL,
    "set": _SET,
    "all_trec": _ALL_TREC,
    "all_prefs": _ALL_PREFS,
    "prefs": _PREFS,
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}


def measure_table(version: int) -> tuple[MeasureDef, ...]:
    """The measures trec_eval ``version`` (9 or 10) knows, in its table's order (the order of
    its output)."""
    return tuple(m for m in MEASURES if version in m.versions)


def measure_sets(version: int) -> dict[str, tuple[str, ...]]:
    """trec_eval ``version``'s sets of measures (``official``, ``all_trec``, ``set``,
    ``all_prefs``, ``prefs``, ``qrels_jg``), each with the names it holds in that version."""
    known = {m.name for m in measure_table(version)}
    return {k: tuple(n for n in v if n in known) for k, v in NICKNAMES.items()}
