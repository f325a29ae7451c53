"""The compat layer's fast path: trec_eval's common measures straight from pytrec_eval's dicts.

BEIR, MTEB and Pyserini call ``RelevanceEvaluator(qrels, measures).evaluate(run)`` with
``{query_id: {doc_id: value}}`` dicts of thousands of queries × a thousand documents, where the
general path (:func:`ndcglab.measures.evaluate_trec`: every document's label, score and id into
columns, every ranking sorted with its ids as the tie key) spends its time copying dicts and
ranking documents no measure looks at. The measures this path computes — ``map``,
``map_cut_k``, ``ndcg``, ``ndcg_cut_k``, ``P_k``, ``recall_k``, ``success_k``, ``recip_rank``,
``Rprec``, ``bpref``, ``num_ret``, ``num_rel``, ``num_rel_ret`` — depend on a ranking only
through the positions of its *judged* documents, so:

* the qrels are read once, when the evaluator is made: per query its judged ids and labels;
* per run, the scores are read in one ``numpy.fromiter`` over all queries' values and each
  judged document's score by one dict look-up (about 50 per query, not 1,000);
* a judged document's position is the number of documents with a larger score, compared in
  single precision as trec_eval 9 does (:func:`._trec_kernels.judged_positions_kernel`, no
  sort); where
  a judged document shares its score with another one, the document ids break the tie
  (descending, trec_eval's rule) for that query only, in Python, and only those tied ids are
  read;
* one kernel computes every measure of every query from those positions
  (:func:`._trec_kernels.trec_measures_kernel`), the sums in the general kernels' order.

The numbers are the general path's (the tests compare both, and both with pytrec_eval); inputs
this path does not take — other tie rules, ``judged_docs_only_flag``, negative or non-finite
labels, a score that is not a finite single-precision number, other measures — go to the
general path, which also gives the errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

import numpy as np

__all__ = ["FastQrels", "fast_kinds"]

_CUT = re.compile(r"^(map_cut|ndcg_cut|P|recall|success)_([0-9]+)$")
_PLAIN = {
    "map": 0,
    "ndcg": 1,
    "recip_rank": 5,
    "bpref": 6,
    "Rprec": 7,
    "num_ret": 8,
    "num_rel": 9,
    "num_rel_ret": 10,
}
_WITH_CUT = {"ndcg_cut": 2, "P": 3, "recall": 4, "map_cut": 11, "success": 12}


def fast_kinds(specs: Sequence[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """``(kinds, cut-offs)`` of trec_eval measure names (``map``, ``ndcg_cut_10``, ``P_5``…) for
    :func:`._trec_kernels.trec_measures_kernel`, or None when one of them is not on this path."""
    kinds: list[int] = []
    ks: list[int] = []
    for spec in specs:
        if spec in _PLAIN:
            kinds.append(_PLAIN[spec])
            ks.append(0)
            continue
        m = _CUT.match(spec)
        if m is None or int(m.group(2)) < 1:
            return None
        kinds.append(_WITH_CUT[m.group(1)])
        ks.append(int(m.group(2)))
    return np.asarray(kinds, np.int64), np.asarray(ks, np.int64)


class FastQrels:
    """Qrels read once for the fast path: per query its judged document ids and labels (flat,
    with offsets). :meth:`build` returns None for qrels this path does not take (a label that
    is negative, not finite or not a number)."""

    def __init__(self, qids: list[str], docs: list[list[str]], labels: np.ndarray) -> None:
        self.qids = qids
        self.index = {q: i for i, q in enumerate(qids)}
        self.docs = docs
        self.labels = labels
        self.bnd = np.zeros(len(qids) + 1, np.int64)
        np.cumsum([len(d) for d in docs], out=self.bnd[1:])

    @classmethod
    def build(cls, qrels: Mapping[str, Mapping[str, Any]]) -> FastQrels | None:
        qids = [q for q, d in qrels.items() if len(d) > 0]
        docs = [list(qrels[q]) for q in qids]
        total = sum(map(len, docs))
        try:
            labels = np.fromiter(
                chain.from_iterable(qrels[q].values() for q in qids), np.float64, total
            )
        except (TypeError, ValueError):
            return None
        if not (np.isfinite(labels).all() and (labels >= 0.0).all()):
            return None
        return cls(qids, docs, labels)

    def evaluate(
        self,
        run: Mapping[str, Mapping[str, Any]],
        kinds: np.ndarray,
        ks: np.ndarray,
        level: float,
    ) -> tuple[list[str], np.ndarray] | None:
        """``(query ids sorted, values (Q, len(kinds)))`` of the run's queries that have
        judgements, or None when the run is not for this path (a score that is not a number,
        or not finite in single precision)."""
        from ._trec_kernels import judged_positions_kernel, trec_measures_kernel

        index = self.index
        qids = sorted(q for q in run if q in index)
        if not qids:
            return [], np.zeros((0, len(kinds)))
        ranked = [run[q] for q in qids]
        rows = [index[q] for q in qids]
        nret = np.fromiter(map(len, ranked), np.int64, len(qids))
        dbnd = np.zeros(len(qids) + 1, np.int64)
        np.cumsum(nret, out=dbnd[1:])
        jdocs = [self.docs[r] for r in rows]
        jlen = np.fromiter(map(len, jdocs), np.int64, len(qids))
        jbnd = np.zeros(len(qids) + 1, np.int64)
        np.cumsum(jlen, out=jbnd[1:])
        try:
            sc64 = np.fromiter(
                chain.from_iterable(d.values() for d in ranked), np.float64, int(dbnd[-1])
            )
            js64 = np.fromiter(
                chain.from_iterable(map(d.get, ds) for d, ds in zip(ranked, jdocs)),
                np.float64,
                int(jbnd[-1]),
            )
        except (TypeError, ValueError):
            return None
        with np.errstate(over="ignore"):  # too large for single precision: inf, refused
            sc = sc64.astype(np.float32)
        if not np.isfinite(sc).all():
            return None
        jret = ~np.isnan(js64)  # a judged document the run lacks: None, read as NaN
        js = js64.astype(np.float32)
        labels = (
            self.labels
            if rows == list(range(len(self.qids)))
            else np.concatenate([self.labels[self.bnd[r] : self.bnd[r + 1]] for r in rows])
        )
        above = np.zeros(len(js), np.int64)
        tied = np.zeros(len(qids), np.bool_)
        nq = len(qids)  # one thread: the kernels are a small part of the time (reading the dicts)
        judged_positions_kernel(sc, dbnd, js, jret, jbnd, 0, nq, above, tied)
        for t in np.flatnonzero(tied).tolist():
            _break_ties(ranked[t], jdocs[t], sc[dbnd[t] : dbnd[t + 1]], js, jret, jbnd[t], above)
        n = int(max(int(nret.max()), int(jlen.max()))) + 1
        darr = 1.0 / np.log2(1.0 + np.arange(1, n + 1, dtype=np.float64))
        out = np.zeros((len(qids), len(kinds)))
        trec_measures_kernel(
            above, jret, labels, jbnd, nret, float(level), darr, kinds, ks, 0, nq, out
        )
        return qids, out


def _break_ties(
    ranked: Mapping[str, Any],
    jdocs: list[str],
    sc: np.ndarray,
    js: np.ndarray,
    jret: np.ndarray,
    j0: int,
    above: np.ndarray,
) -> None:
    """Add to each retrieved judged document's position the documents with the same single
    precision score and a larger id (trec_eval ranks ties by document id descending)."""
    ids = list(ranked)
    for i, d in enumerate(jdocs):
        j = j0 + i
        if not jret[j]:
            continue
        same = np.flatnonzero(sc == js[j]).tolist()
        if len(same) > 1:
            above[j] += sum(1 for s in same if ids[s] > d)
