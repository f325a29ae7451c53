"""A topic's ranking joined with its judgements, as trec_eval forms it (docs/trec_eval_cli.md,
"The ranking").

* The run's documents are ranked by score, descending; equal scores by document name,
  *descending* (byte order). ``-M N`` keeps the first N. A document named twice in one topic of
  the run is refused (trec_eval: "duplicate docs").
* Each ranked document gets its qrels relevance (``atol`` of the label); a document absent from
  the qrels is *not in the pool* (:data:`NONPOOL`, -1); one judged with a negative relevance is
  *in the pool but unjudged* (:data:`UNJUDGED`, -2).
* ``-J`` keeps only the judged documents (relevance >= 0), in rank order.
* ``rel_levels[i]`` counts the judged documents of level ``i`` (retrieved or not);
  ``num_rel`` counts those with a level >= ``-l`` (default 1); ``num_rel_ret`` the retrieved
  judged ones with a level >= ``-l``.
* A topic whose labels are all negative (largest label ``max_rel`` < 0) has no level to count,
  and trec_eval's buffer of level counts (sized ``max_rel + 1``, kept from topic to topic) then
  misbehaves (docs/trec_eval_cli.md, "Topics with only negative labels"): as the first topic
  formed it cannot be evaluated (:class:`NegativeTopic`, exit status 4); later, ``max_rel``
  = -1 keeps the level counts and number of levels of the last topic formed before it
  (:class:`LevelsMemory`; ``num_rel`` is 0), and ``max_rel`` <= -2 crashes trec_eval.
* Preference judgements (``-R prefs``/``qrels_prefs``): the run's documents ranked by score
  descending and equal scores by name *ascending* (that part of trec_eval orders ties the other
  way), ``-M`` applied; the judged retrieved documents get internal ranks 0, 1, … in rank
  order, the judged unretrieved ones the next ranks in name order. Each judgment group is
  either a list of equivalence classes (one subgroup: documents of a higher level are preferred
  to those of a lower one) or, with several subgroups, a preference matrix closed under
  transitivity.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ._readers import JudgedTopic, PrefLine, RunTopic, TrecEvalError

__all__ = [
    "NONPOOL",
    "UNJUDGED",
    "Jg",
    "LevelsMemory",
    "NegativeTopic",
    "PrefsInfo",
    "ResRels",
    "form_prefs",
    "form_res_rels",
]

#: a retrieved document absent from the qrels
NONPOOL = -1
#: a retrieved document in the qrels with a negative relevance
UNJUDGED = -2


@dataclass
class ResRels:
    """A ranking joined with its judgements (trec_eval's ``RES_RELS``)."""

    rl: list[int]
    num_ret: int
    num_rel: int
    num_rel_ret: int
    num_nonpool: int
    num_unjudged_in_pool: int
    rel_levels: list[int]
    num_rel_levels: int


class NegativeTopic(TrecEvalError):
    """A topic whose qrels labels are all negative, where trec_eval cannot go on: the first
    topic formed (trec_eval: "Can't calculate measure", exit status 4) or, later, one whose
    largest label is -2 or less (trec_eval crashes). ``measure`` is set by the caller (the
    measure being computed), the message is formed by :meth:`describe`."""

    def __init__(self, qid: bytes, max_rel: int, first: bool) -> None:
        self.qid = qid
        self.max_rel = max_rel
        self.first = first
        self.measure = ""
        super().__init__(self.describe(None), 4 if first else 1)

    def describe(self, rel_path: str | None) -> str:
        """The refusal's one line; ``rel_path`` names the qrels file (None: not a file)."""
        where = f" of {rel_path}" if rel_path is not None else ""
        topic = self.qid.decode("latin-1")
        if self.first:
            what = (
                f"can't calculate measure '{self.measure}': topic {topic}{where} has only "
                f"negative relevance labels (largest {self.max_rel}) and is the first topic "
                "evaluated (trec_eval refuses it so, exit status 4)"
            )
        else:
            what = (
                f"topic {topic}{where} has only negative relevance labels, the largest "
                f"{self.max_rel} (trec_eval crashes on it: a memset of a negative size)"
            )
        self.args = (f"{what}. Fix: give the topic a label of 0 or more (or drop its qrels lines)",)
        return str(self.args[0])


@dataclass
class LevelsMemory:
    """trec_eval's buffer of level counts, kept from topic to topic (module docstring):
    ``levels``/``num_rel_levels`` of the last topic formed with a label of 0 or more (None
    before the first)."""

    levels: list[int] | None = None
    num_rel_levels: int = 0


def _ranked(run: RunTopic, max_docs: int, ties_descending: bool) -> list[bytes]:
    if ties_descending:  # score descending, then name descending: one sort on (score, name)
        pairs = sorted(zip(run.sims, run.docs, strict=True), reverse=True)
        docs = [d for _, d in pairs[:max_docs]]
    else:  # by name ascending, then stably by score descending
        named = sorted(zip(run.docs, run.sims, strict=True), key=lambda p: p[0])
        named.sort(key=lambda p: p[1], reverse=True)
        docs = [d for d, _ in named[:max_docs]]
    if len(set(docs)) != len(docs):
        seen: set[bytes] = set()
        for d in sorted(docs):
            if d in seen:
                raise TrecEvalError(
                    f"duplicate docs {d.decode('latin-1')} in topic "
                    f"{run.qid.decode('latin-1')} of the run — the run names one document "
                    "twice for one topic. Fix: keep one line per (topic, document)",
                    4,
                )
            seen.add(d)
    return docs


def _levels(rels: list[int], relevance_level: int) -> tuple[list[int], int, int]:
    max_rel = max(rels) if rels else -1
    levels = [0] * (max_rel + 1 if max_rel >= 0 else 0)
    for r in rels:
        if r >= 0:
            levels[r] += 1
    num_rel_levels = 0
    num_rel = 0
    for i, c in enumerate(levels):
        if c:
            num_rel_levels = i + 1
            if i >= relevance_level:
                num_rel += c
    return levels, num_rel_levels, num_rel


def form_res_rels(
    judged: JudgedTopic,
    run: RunTopic,
    *,
    relevance_level: int,
    max_docs: int,
    judged_only: bool,
    check_duplicates: bool = True,
    memory: LevelsMemory | None = None,
) -> ResRels:
    """The ranking of ``run`` joined with ``judged`` (module docstring). With ``memory`` a
    topic whose labels are all negative is formed as trec_eval forms it (raising
    :class:`NegativeTopic` where trec_eval stops); without, its levels are empty."""
    if check_duplicates and len(set(judged.docs)) != len(judged.docs):
        for a, b in itertools.pairwise(sorted(judged.docs)):
            if a == b:
                raise TrecEvalError(
                    f"duplicate docs {a.decode('latin-1')} in topic "
                    f"{judged.qid.decode('latin-1')} of the qrels — the qrels judge one "
                    "document twice for one topic. Fix: keep one line per (topic, document)",
                    4,
                )
    docs = _ranked(run, max_docs, True)
    max_rel = max(judged.rels) if judged.rels else -1
    if memory is not None and max_rel < 0 and (memory.levels is None or max_rel < -1):
        raise NegativeTopic(judged.qid, max_rel, memory.levels is None)
    rels = judged.rels
    if rels and min(rels) < 0:  # a negative relevance: in the pool, unjudged
        rels = [r if r >= 0 else UNJUDGED for r in rels]
    get = dict(zip(judged.docs, rels, strict=True)).get
    rl = [get(d, NONPOOL) for d in docs]
    nonpool = rl.count(NONPOOL)
    unjudged = rl.count(UNJUDGED)
    if judged_only and (nonpool or unjudged):
        rl = [v for v in rl if v >= 0]
    if judged_only:
        nonpool = unjudged = 0
    if relevance_level > 0:
        rel_ret = sum(1 for v in rl if v >= relevance_level)
    else:
        rel_ret = len(rl) - nonpool - unjudged if not judged_only else len(rl)
    levels, num_levels, num_rel = _levels(judged.rels, relevance_level)
    if memory is not None:
        if max_rel >= 0:
            memory.levels, memory.num_rel_levels = levels, num_levels
        elif memory.levels is not None:  # -1: the buffer as the last topic left it
            levels, num_levels = list(memory.levels), memory.num_rel_levels
    return ResRels(rl, len(rl), num_rel, rel_ret, nonpool, unjudged, levels, num_levels)


@dataclass
class Jg:
    """One judgment group of a topic's preferences (trec_eval's ``JG``)."""

    ecs: list[tuple[float, list[int]]] = field(default_factory=list)
    #: where the last equivalence class starts in the topic's rank pool (see RankPool)
    last_ec_at: int = 0
    pa: Any = None  # the transitive preference matrix (several subgroups), else None
    rel_array: list[float] = field(default_factory=list)
    ful_ret: int = 0
    poss_ret: int = 0
    ful_imp: int = 0
    poss_imp: int = 0
    poss_notoccur: int = 0
    num_nonrel: int = 0
    num_nonrel_ret: int = 0
    num_rel: int = 0
    num_rel_ret: int = 0


@dataclass
class PrefsInfo:
    """A topic's preferences joined with the run (trec_eval's ``RESULTS_PREFS``)."""

    jgs: list[Jg]
    num_judged: int
    num_judged_ret: int
    counts: Any  # num_judged x num_judged: how many groups prefer doc i to doc j
    pool: list[int] = field(default_factory=list)


class RankPool:
    """trec_eval's buffer of the equivalence classes' ranks, kept from topic to topic.

    prefs_avgjg_Rnonrel reads the first R ranks of a group's last class, R being the group's
    number of relevant documents, even when that class is shorter: trec_eval then reads on into
    the next classes' ranks, or into what an earlier topic left in the buffer. The buffer is
    kept here so that those reads give what trec_eval's give; memory trec_eval never wrote
    reads as 0 (a fresh allocation).
    """

    def __init__(self) -> None:
        self.data: list[int] = []

    def write(self, at: int, values: list[int]) -> None:
        end = at + len(values)
        if end > len(self.data):
            self.data.extend([0] * (end - len(self.data)))
        self.data[at:end] = values


def form_prefs(
    lines: list[PrefLine], run: RunTopic, *, max_docs: int, pool: RankPool | None = None
) -> PrefsInfo:
    """The preference judgements of one topic joined with the run (module docstring)."""
    pool = RankPool() if pool is None else pool
    docs = _ranked(run, max_docs, False)
    judged_names = {p.docno for p in lines}
    retrieved = [d for d in docs if d in judged_names]
    rank = {d: i for i, d in enumerate(retrieved)}
    njr = len(retrieved)
    nxt = njr
    for d in sorted(judged_names):
        if d not in rank:
            rank[d] = nxt
            nxt += 1
    nj = nxt
    ordered = sorted(lines, key=lambda p: (p.jg, p.jsg, -p.rel, rank[p.docno]))
    counts = np.zeros((nj, nj), dtype=np.int64)
    jgs: list[Jg] = []
    start = 0
    at = 0
    while start < len(ordered):
        end = start
        while end < len(ordered) and ordered[end].jg == ordered[start].jg:
            end += 1
        group = ordered[start:end]
        subgroups = 1 + sum(1 for a, b in itertools.pairwise(group) if a.jsg != b.jsg)
        if subgroups > 1:
            jgs.append(_jg_matrix(group, rank, nj, njr, counts))
        else:
            jg = _jg_classes(group, rank, njr, counts)
            ranks = [r for _, rs in jg.ecs for r in rs]
            pool.write(at, ranks)
            jg.last_ec_at = at + len(ranks) - len(jg.ecs[-1][1])
            at += len(ranks)
            jgs.append(jg)
        start = end
    return PrefsInfo(jgs, nj, njr, counts, list(pool.data))


def _jg_classes(group: list[PrefLine], rank: dict[bytes, int], njr: int, counts: Any) -> Jg:
    jg = Jg()
    for p in group:
        if not jg.ecs or jg.ecs[-1][0] != p.rel:
            jg.ecs.append((p.rel, []))
        jg.ecs[-1][1].append(rank[p.docno])
    for k, (level, ranks) in enumerate(jg.ecs):
        ret = sum(1 for r in ranks if r < njr)
        if level > 0.0:
            jg.num_rel_ret += ret
            jg.num_rel += len(ranks)
        else:
            jg.num_nonrel_ret += ret
            jg.num_nonrel += len(ranks)
        a = np.asarray(ranks, dtype=np.int64)[:, None]
        for _, lower in jg.ecs[k + 1 :]:
            b = np.asarray(lower, dtype=np.int64)[None, :]
            np.add.at(counts, (np.broadcast_to(a, (a.shape[0], b.shape[1])),
                               np.broadcast_to(b, (a.shape[0], b.shape[1]))), 1)  # fmt: skip
            if np.any(a == b):
                raise TrecEvalError(
                    "a document is in two equivalence classes of one judgment group — prefs "
                    "file. Fix: give each document one relevance level per judgment group",
                    4,
                )
            before = a < b
            a_ret = a < njr
            b_ret = b < njr
            jg.ful_ret += int(np.count_nonzero(before & b_ret))
            jg.ful_imp += int(np.count_nonzero(before & ~b_ret & a_ret))
            jg.poss_ret += int(np.count_nonzero(~before & a_ret))
            jg.poss_imp += int(np.count_nonzero(~before & ~a_ret & b_ret))
            jg.poss_notoccur += int(
                np.count_nonzero(before & ~a_ret & ~b_ret)
                + np.count_nonzero(~before & ~a_ret & ~b_ret)
            )
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp
    return jg


def _jg_matrix(group: list[PrefLine], rank: dict[bytes, int], nj: int, njr: int, counts: Any) -> Jg:
    jg = Jg()
    rel = [-1.0] * nj
    pa = np.zeros((nj, nj), dtype=bool)
    for i, p in enumerate(group):
        r = rank[p.docno]
        if (rel[r] > 0.0 and p.rel == 0.0) or (rel[r] == 0.0 and p.rel > 0.0):
            raise TrecEvalError(
                f"document {p.docno.decode('latin-1')} is both relevant and nonrelevant in one "
                "judgment group — prefs file. Fix: give it relevance 0 everywhere or nowhere "
                "in that group",
                4,
            )
        rel[r] = p.rel
        j = i + 1
        while j < len(group) and group[j].jsg == p.jsg and group[j].rel == p.rel:
            j += 1
        while j < len(group) and group[j].jsg == p.jsg:
            pa[r, rank[group[j].docno]] = True
            j += 1
    # transitive closure (reflexive while it is formed, then the diagonal cleared)
    closure = pa | np.eye(nj, dtype=bool)
    while True:
        nxt = (closure.astype(np.int64) @ closure.astype(np.int64)) > 0
        if np.array_equal(nxt, closure):
            break
        closure = nxt
    np.fill_diagonal(closure, False)
    if np.any(closure & closure.T):
        raise TrecEvalError(
            "inconsistent preferences: two documents are each preferred to the other — prefs "
            "file. Fix: remove the cycle from that judgment group",
            4,
        )
    jg.pa = closure
    jg.rel_array = rel
    for i in range(nj):
        if rel[i] > 0.0:
            jg.num_rel += 1
            if i < njr:
                jg.num_rel_ret += 1
        elif rel[i] == 0.0:
            jg.num_nonrel += 1
            if i < njr:
                jg.num_nonrel_ret += 1
    counts += closure
    a = closure
    jg.poss_ret = int(np.tril(a[:njr, :njr], -1).sum())
    jg.ful_ret = int(np.triu(a[:njr, :njr], 1).sum())
    jg.ful_imp = int(a[:njr, njr:].sum())
    jg.poss_imp = int(a[njr:, :njr].sum())
    jg.poss_notoccur = int(a[njr:, njr:].sum())
    jg.poss_ret += jg.ful_ret
    jg.poss_imp += jg.ful_imp
    return jg
