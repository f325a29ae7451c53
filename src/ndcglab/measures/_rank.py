"""Per-query values of the rank family: recall@k, R-precision, success@k, bpref, infAP,
gm_map, interpolated precision (one level, 11-point average), ERR@k, RBP@k and its residual,
judged@k, num_rel, num_ret, num_rel_ret.

Each (tie rule, relevance rule) sorts every query once (:func:`._kernels.ranked_order_kernel`);
the measures are then NumPy expressions over all queries at once: per-document indicators in
ranking order ("slots"), their cumulative sums, and a gather at each query's cut-off. The rules
follow trec_eval 9 (the formulas are in ``docs/measures.md``, "The rank family"; interpolated
precision's ``recall_cut`` option picks trec_eval 9's or trec_eval 10's recall cut-off):

* relevant: a judged document (``in_qrels``, label >= 0) whose label passes ``rel``;
* judged non-relevant: a judged document that is not relevant;
* pool-unjudged: a qrels line with a negative relevance (trec_eval: "in the pool but
  unjudged"); documents absent from the qrels are neither judged nor pool-unjudged;
* R: relevant documents of the query, retrieved or not; a query with R = 0 is *empty*.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..errors import ConventionError
from ._parallel import run_kernel
from .conventions import apply_empty, apply_short, cutoff_k, precision_divisor, relevance
from .registry import RECALL_CUTS


def _tk() -> Any:
    """The compiled kernels, imported on first use (so importing the measures loads no Numba)."""
    from . import _trec_kernels

    return _trec_kernels


__all__ = ["INFAP_EPSILON", "MIN_GEO_MEAN", "rank_per_query"]

#: trec_eval's epsilon in infAP's smoothed precision
INFAP_EPSILON = 0.00001
#: trec_eval's floor of AP before the log of gm_map
MIN_GEO_MEAN = 0.00001
#: the 11 recall levels of the 11-point average, as trec_eval 9 and 10 state them
ELEVEN_LEVELS = tuple(i / 10.0 for i in range(11))


def _per_query(x: np.ndarray, bnd: np.ndarray) -> np.ndarray:
    """Per query: the number of True values of the bool ``x`` over its documents
    ``bnd[q]:bnd[q+1]`` (float64), found among the positions of the True values (no array of
    one number per document)."""
    at = np.flatnonzero(x)
    return np.diff(np.searchsorted(at, bnd)).astype(np.float64)


def _relevant(rel: str, labels: np.ndarray) -> np.ndarray:
    """``relevance(rel, labels) > 0`` as a bool array, without the float64 array between."""
    if rel == "letor":
        return (labels == 1.0) | (labels == 2.0)
    return labels >= float(rel)


def _segment_cumsum(x: np.ndarray) -> np.ndarray:
    """``C`` with ``C[0] = 0`` and ``C[i + 1] = x[0] + ... + x[i]`` (float64)."""
    out = np.zeros(len(x) + 1)
    np.cumsum(x, out=out[1:])
    return out


class _Ranking:
    """One sort of every query and the per-slot indicators the measures need (computed on first
    use: a call asking for bpref alone never builds the arrays of RBP, and so on)."""

    def __init__(
        self,
        labels: np.ndarray,
        in_qrels: np.ndarray,
        rel: str | None,
        tkey: np.ndarray,
        scores: np.ndarray,
        bnd: np.ndarray,
        rend: np.ndarray,
    ) -> None:
        self.b = bnd
        self.rend = rend
        self.nq = len(bnd) - 1
        self.n_ranked = rend - bnd[:-1]
        self.n_all = np.diff(bnd)
        if len(labels) < 2**31:  # (int32 slots: half the memory)
            order = np.empty(len(labels), dtype=np.int32)
            run_kernel(_tk().ranked_order32_kernel, bnd, scores, tkey, bnd, rend, (order,))
        else:
            order = np.empty(len(labels), dtype=np.int64)
            run_kernel(_tk().ranked_order_kernel, bnd, scores, tkey, bnd, rend, (order,))
        self.order = order
        self.labels = labels
        self.in_qrels = in_qrels
        self.judged_doc = in_qrels & (labels >= 0.0)
        self._rel = rel
        self._cache: dict[str, Any] = {}

    def _get(self, name: str, make: Callable[[], Any]) -> Any:
        if name not in self._cache:
            self._cache[name] = make()
        return self._cache[name]

    @property
    def qidx(self) -> np.ndarray:
        """Query of each slot."""
        return self._get("qidx", lambda: np.repeat(np.arange(self.nq, dtype=np.int64), self.n_all))

    @property
    def pos(self) -> np.ndarray:
        """1-based position of each slot within its query."""
        return self._get(
            "pos",
            lambda: np.arange(len(self.labels), dtype=np.int64) - self.b[:-1][self.qidx] + 1,
        )

    @property
    def ranked(self) -> np.ndarray:
        """True for the slots that hold a ranked document."""

        def make() -> np.ndarray:  # per query: n_ranked True, then the unranked False
            runs = np.stack([self.n_ranked, self.n_all - self.n_ranked], axis=1).ravel()
            flags = np.tile(np.array([True, False]), self.nq)
            return np.repeat(flags, runs)

        return self._get("ranked", make)

    def _slots(self, per_doc: np.ndarray) -> np.ndarray:
        """A per-document 0/1 array in ranking order, 0 on unranked slots (float64)."""
        return (per_doc[self.order] & self.ranked).astype(np.float64)

    @property
    def judged(self) -> np.ndarray:
        return self._get("judged", lambda: self._slots(self.judged_doc))

    @property
    def reld(self) -> np.ndarray:
        """Relevant documents (judged and passing ``rel``), per document."""
        rel = self._rel
        assert rel is not None
        return self._get("reld", lambda: _relevant(rel, self.labels) & self.judged_doc)

    @property
    def nrel(self) -> np.ndarray:
        """R: relevant documents of each query, ranked or not."""
        return self._get("nrel", lambda: _per_query(self.reld, self.b))

    @property
    def rel(self) -> np.ndarray:
        """Relevant ranked documents in ranking order, 0 on unranked slots (bool: an eighth
        of a float64 array; the sums and the kernels read it as 0/1)."""
        return self._get("rel", lambda: self.reld[self.order] & self.ranked)

    @property
    def rel_slots(self) -> np.ndarray:
        """The slots of the relevant ranked documents, ascending (one entry per relevant
        document, not per slot)."""
        return self._get("rel_slots", lambda: np.flatnonzero(self.rel))

    def rel_count(self, k: np.ndarray) -> np.ndarray:
        """Per query: the relevant documents among its first min(k, n) ranked slots (float64;
        :meth:`at` of the cumulative count, without the cumulative array)."""
        kk = np.minimum(np.asarray(k, dtype=np.int64), self.n_ranked)
        start = self.b[:-1]
        slots = self.rel_slots
        return (np.searchsorted(slots, start + kk) - np.searchsorted(slots, start)).astype(
            np.float64
        )

    def sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per query: bpref's, infAP's and AP's sums (:func:`._trec_kernels.judged_sums_kernel`)."""

        def make() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            reld = self.reld
            nonrel = self.judged_doc & ~reld
            nnonrel = _per_query(nonrel, self.b)
            unjudged = self.in_qrels & (self.labels < 0.0)
            out = (np.zeros(self.nq), np.zeros(self.nq), np.zeros(self.nq))
            run_kernel(
                _tk().judged_sums_kernel,
                self.b,
                self.order,
                reld,
                self.judged_doc,
                unjudged,
                self.b,
                self.rend,
                self.nrel,
                nnonrel,
                out,
            )
            return out

        return self._get("sums", make)

    def infap_extreme(self, scores: np.ndarray, best: bool) -> np.ndarray:
        """Per query: infAP's sum under the order of tied documents that makes it largest
        (``best``) or smallest (:func:`._trec_kernels.infap_extreme_kernel`); NaN for a query
        whose tied groups are too large to search."""
        reld = self.reld
        unjudged = self.in_qrels & (self.labels < 0.0)
        out = np.zeros(self.nq)
        ok = np.ones(self.nq, dtype=bool)
        run_kernel(
            _tk().infap_extreme_kernel,
            self.b,
            self.order,
            scores,
            reld,
            self.judged_doc,
            unjudged,
            self.b,
            self.rend,
            best,
            (out, ok),
        )
        return np.where(ok, out, np.nan)

    def at(self, cum: np.ndarray, k: np.ndarray) -> np.ndarray:
        """Per query: the sum over its first min(k, n) ranked slots, from a cumulative sum."""
        kk = np.minimum(np.asarray(k, dtype=np.int64), self.n_ranked)
        start = self.b[:-1]
        return cum[start + kk] - cum[start]

    def rbp_weights(self, p: float) -> np.ndarray:
        """(1 − p) p^(r − 1) on the ranked slots, 0 elsewhere."""
        return np.where(self.ranked, (1.0 - p) * np.power(p, self.pos - 1.0), 0.0)


def rank_per_query(
    group: Sequence[Any],
    labels: np.ndarray,
    scores: np.ndarray,
    bnd: np.ndarray,
    rend: np.ndarray,
    in_qrels: np.ndarray,
    rel: str | None,
    tkey: np.ndarray,
    query_ids: Sequence[str] | np.ndarray | None,
    extreme: bool | None = None,
) -> dict[Any, tuple[np.ndarray, np.ndarray]]:
    """``{measure: (values, empty)}`` for resolved measures of the rank family that share one
    ranking (tie key ``tkey``) and one relevance rule ``rel`` (``None`` when none of them uses
    relevance). ``extreme`` (the tie rules ``optimistic``: True, ``pessimistic``: False): infAP
    takes its largest or smallest value over the orders of tied documents, which no tie key
    gives."""
    rk = _Ranking(labels, in_qrels, rel, tkey, scores, bnd, rend)
    nq = rk.nq
    iprec = _iprec_tables(rk, group)
    out: dict[Any, tuple[np.ndarray, np.ndarray]] = {}
    no_empty = np.zeros(nq, dtype=bool)
    for m in group:
        name = m.name
        k = cutoff_k(m.cutoff, m.get("rounding"), rk.n_ranked, rk.n_all)
        if name == "num_ret":
            out[m] = (rk.n_ranked.astype(np.float64), no_empty)
            continue
        if name == "judged":
            hits = rk.at(_segment_cumsum(rk.judged), k)
            div = precision_divisor(m, k, rk.n_ranked)
            v = np.where(div > 0, hits / np.maximum(div, 1), 0.0)
            out[m] = (apply_short(m, v, rk.n_ranked), no_empty)
            continue
        if name == "err":
            out[m] = _err(m, rk, k, query_ids)
            continue
        if name == "rbp_residual":
            p = float(m.get("p"))
            unj = rk.at(_segment_cumsum(rk.rbp_weights(p) * (1.0 - rk.judged)), k)
            depth = np.minimum(k, rk.n_ranked)
            out[m] = (unj + np.power(p, depth.astype(np.float64)), no_empty)
            continue
        nrel = rk.nrel
        empty = nrel == 0.0
        safe_r = np.where(empty, 1.0, nrel)
        if name == "num_rel":
            out[m] = (nrel.copy(), no_empty)
            continue
        if name == "num_rel_ret":
            out[m] = (rk.rel_count(rk.n_ranked), no_empty)
            continue
        if name == "rbp":
            p = float(m.get("p"))
            out[m] = (rk.at(_segment_cumsum(rk.rbp_weights(p) * rk.rel), k), no_empty)
            continue
        if name == "recall":
            v = rk.rel_count(k) / safe_r
        elif name == "success":
            v = (rk.rel_count(k) > 0).astype(np.float64)
        elif name == "rprec":
            v = rk.rel_count(nrel.astype(np.int64)) / safe_r
        elif name == "bpref":
            v = rk.sums()[0] / safe_r
        elif name == "infap" and extreme is not None:  # pessimistic / optimistic: exact
            v = rk.infap_extreme(scores, extreme) / safe_r
        elif name == "infap":
            v = rk.sums()[1] / safe_r
        elif name == "gm_map":
            ap = rk.sums()[2] / safe_r
            ap = apply_empty(m, ap, empty, query_ids)
            out[m] = (np.log(np.maximum(ap, MIN_GEO_MEAN)), empty)
            continue
        elif name == "iprec":
            table, at = iprec[m.get("recall_cut")]
            v = table[:, at[float(m.get("level"))]]
        elif name == "iprec_11pt":
            table, at = iprec[m.get("recall_cut")]
            cols = [at[x] for x in ELEVEN_LEVELS]  # (in rows of their own, as one pass gives
            v = np.ascontiguousarray(table[:, cols]).mean(axis=1)  # them: the same sums)
        else:  # pragma: no cover - the registry lists every rank measure above
            raise ConventionError(f"no computation for measure {name}")
        out[m] = (apply_empty(m, np.where(empty, 0.0, v), empty, query_ids), empty)
    return out


def _iprec_tables(
    rk: _Ranking, group: Sequence[Any]
) -> dict[str, tuple[np.ndarray, dict[float, int]]]:
    """``{recall_cut: (table, column of each level)}``: interpolated precision at every level
    the ``iprec`` and ``iprec_11pt`` measures of ``group`` ask for, one pass of :func:`_iprec`
    per recall-cut rule (``all_trec`` asks for twelve measures at eleven levels). A level's
    column holds the numbers one pass for that level alone gives (each level is computed on
    its own from the same suffix maxima)."""
    levels: dict[str, dict[float, int]] = {}
    for m in group:
        if m.name == "iprec":
            wanted: Sequence[float] = (float(m.get("level")),)
        elif m.name == "iprec_11pt":
            wanted = ELEVEN_LEVELS
        else:
            continue
        at = levels.setdefault(m.get("recall_cut"), {})
        for x in wanted:
            at.setdefault(x, len(at))
    return {cut: (_iprec(rk, tuple(at), cut), at) for cut, at in levels.items()}


def _iprec(rk: _Ranking, levels: Sequence[float], recall_cut: str = "trunc") -> np.ndarray:
    """Interpolated precision ``(Q, len(levels))``: the c-th relevant document, c = floor(level·R
    + 0.9) (``recall_cut="trunc"``, trec_eval 9) or c = lround(level·R) (``"round"``, trec_eval
    10); the largest precision at it or below it; 0 if fewer than c relevant documents were
    retrieved (:func:`._trec_kernels.iprec_kernel`, whose flag is the rule's index in
    :data:`.registry.RECALL_CUTS`)."""
    out = np.zeros((rk.nq, len(levels)))
    lv = np.asarray(levels, dtype=np.float64)
    flag = RECALL_CUTS.index(recall_cut)  # 0: trunc, 1: round (the registry checked it)
    run_kernel(_tk().iprec_kernel, rk.b, rk.rel, rk.b, rk.rend, rk.nrel, lv, flag, (out,))
    return out


def _err(
    m: Any, rk: _Ranking, k: np.ndarray, query_ids: Sequence[str] | np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """ERR@k with stop probabilities (2^g − 1) / 2^g_max, g = max(label, 0)."""
    gmax = float(m.get("max_grade"))
    g = np.maximum(rk.labels, 0.0)
    too_big = g > gmax
    if too_big.any():
        i = int(np.flatnonzero(too_big)[0])
        q = int(np.searchsorted(rk.b, i, side="right") - 1)
        where = f"query {query_ids[q]}" if query_ids is not None else f"query #{q}"
        raise ConventionError(
            f"{m}: label {rk.labels[i]:g} ({where}) exceeds max_grade={m.get('max_grade')}, so "
            "its stop probability (2^g - 1) / 2^max_grade would exceed 1. Fix: "
            f"err(max_grade={rk.labels.max():g}) or another preset"
        )
    stop_doc = (np.exp2(g) - 1.0) / np.exp2(gmax)
    stop = np.where(rk.ranked, stop_doc[rk.order], 0.0)
    cum = np.zeros(len(stop))
    run_kernel(_tk().err_prefix_kernel, rk.b, stop, rk.b, rk.b[:-1] + rk.n_ranked, (cum,))
    kk = np.minimum(k, rk.n_ranked)
    idx = rk.b[:-1] + kk - 1
    v = np.where(kk > 0, cum[np.maximum(idx, 0)] if len(cum) else 0.0, 0.0)
    empty = _per_query(stop_doc > 0, rk.b) == 0
    return apply_empty(m, v, empty, query_ids), empty


def rank_tie_values(rel: str | None, labels: np.ndarray) -> Callable[[], np.ndarray]:
    """The per-document values the ``pessimistic``/``optimistic`` tie rules order by: the
    relevance of the group's rule (the label itself when no measure uses relevance)."""
    if rel is None:
        return lambda: np.maximum(labels, 0.0)
    return lambda: relevance(rel, labels)
