"""The fast path of ``ndcglab trec_eval``: every topic read, ranked and measured by compiled
kernels (docs/trec_eval_cli.md, "Speed").

:func:`evaluate_fast` takes the common case — ``-R qrels``, labels written as integers, the
measures of :data:`._measure_kernels.CODES` (with their parameters), ``relstring`` and
``runid`` — and gives each evaluated topic's values, the same doubles as the Python engine's
(:mod:`._run`, the reference). For anything else (another ``-R``, ``-Z``, ``-D``, a run on the
standard input, a gain that is not finite, trec_eval 10's comment lines in qrels or its topics
missing from the run, a topic whose labels are all negative, a malformed line, a document named
twice, a NaN score, a division by zero or a logarithm of 0) it returns ``None`` and the Python
engine runs, which applies every rule and names every error.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import _readers as rd
from ._measure_kernels import CODES, column_sums, topic_measures
from ._measures import Topic, _gain_table, _rbp_p
from ._ranking import ResRels
from ._scan_kernels import rank_join, scan_qrels, scan_run

__all__ = ["FastResult", "evaluate_fast"]

_CODE = {name: k for k, name in enumerate(CODES)}
#: the largest cut-off read exactly as a double
_MAX_CUT = 2**53
#: the largest recall fraction the kernels turn into a count (x * R stays within int64)
_MAX_FRACTION = 2.0**20


@dataclass
class FastResult:
    """The evaluated topics (``qids``, in trec_eval's order), their values (``values[t,
    cols[k]:cols[k+1]]`` for slot ``k``) and column sums (added topic by topic), the rankings
    (``rl[offs[t]:offs[t+1]]``, for ``relstring``), the qrels' topic ids (sorted), the number of
    qrels lines with relevance > 0, and the run's id."""

    qids: list[bytes]
    values: np.ndarray
    sums: np.ndarray
    cols: list[int]
    rl: np.ndarray
    offs: np.ndarray
    rel_ids: list[bytes]
    positive: int
    run_id: bytes


def _topics(
    data: bytes, ts: np.ndarray, te: np.ndarray, tl: np.ndarray, n_lines: int
) -> tuple[list[bytes], np.ndarray, np.ndarray, np.ndarray | None]:
    """(sorted topic ids, first line and number of lines of each topic, line order) from the
    runs of lines of one topic (their id's offsets ``ts:te``, their first lines ``tl``). When
    a topic's lines are split over the file, the order (``None`` otherwise) puts the lines of
    each topic together, in file order, the topics sorted, and the first lines are in that
    order."""
    names = [data[a:b] for a, b in zip(ts.tolist(), te.tolist(), strict=True)]
    ids = sorted(set(names))
    index = {q: i for i, q in enumerate(ids)}
    run_topic = np.array([index[q] for q in names], dtype=np.int64)
    lens = np.diff(np.append(tl, n_lines))
    if len(run_topic) == len(ids):  # one run of lines per topic: no reordering
        starts = np.empty(len(ids), dtype=np.int64)
        counts = np.empty(len(ids), dtype=np.int64)
        starts[run_topic] = tl
        counts[run_topic] = lens
        return ids, starts, counts, None
    counts = np.bincount(run_topic, weights=lens, minlength=len(ids)).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    by_topic = np.argsort(run_topic, kind="stable")
    s_starts = tl[by_topic]
    s_lens = lens[by_topic]
    new_starts = np.concatenate(([0], np.cumsum(s_lens)[:-1]))
    order = np.repeat(s_starts - new_starts, s_lens) + np.arange(n_lines)
    return ids, starts, counts, order


def _read_scores(
    data: bytes, sim: np.ndarray, xl: np.ndarray, xs: np.ndarray, xe: np.ndarray, single: bool
) -> bool:
    """Fill in the scores the kernel left to ``atof``; False when a score is NaN."""
    if len(xl):
        texts = [data[a:b] for a, b in zip(xs.tolist(), xe.tolist(), strict=True)]
        values = np.array([rd.atof(t) for t in texts], dtype=np.float64)
        if single:
            with np.errstate(over="ignore"):
                values = values.astype(np.float32).astype(np.float64)
        sim[xl] = values
    return not bool(np.isnan(sim).any())


def _kernel_slots(
    slots: list[Any],
) -> tuple[list[int], list[int], list[float], list[int], list[int]] | None:
    """(code per slot, -1 for none; first column per slot and the end; parameters; where
    each slot's parameters start and end), or None when a slot is not the kernel's."""
    codes: list[int] = []
    cols = [0]
    params: list[float] = []
    pstart: list[int] = []
    pend: list[int] = []
    for s in slots:
        name = s.m.name
        cols.append(cols[-1] + len(s.names))
        pstart.append(len(params))
        if s.m.kind in ("runid", "relstring"):
            codes.append(-1)
            pend.append(len(params))
            continue
        if name not in _CODE:
            return None
        if s.m.kind == "p_pair":
            if not all(math.isfinite(v) for _, v in s.params):
                return None
            if name in ("rbp", "rbp_resid"):
                params.append(_rbp_p(s.params))
        elif s.m.kind == "cut_long":
            if max(s.params) > _MAX_CUT:
                return None
            params.extend(float(c) for c in s.params)
        elif s.m.kind in ("cut_double", "p_double"):
            if name == "utility" and len(s.params) != 4:
                return None
            if name == "11pt_avg" and not s.params:
                return None
            if name in ("iprec_at_recall", "11pt_avg", "Rprec_mult") and not all(
                math.isfinite(f) and abs(f) <= _MAX_FRACTION for f in s.params
            ):
                return None  # fractions turned into counts: Python's int() rules there
            params.extend(float(c) for c in s.params)
        codes.append(_CODE[name])
        pend.append(len(params))
    return codes, cols, params, pstart, pend


#: the measures that read a gain table
_GAIN_MEASURES = ("G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "rbp")


def _gain_tables(
    slots: list[Any], nlev: np.ndarray, version: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Each gain measure's table for each number of relevance levels the topics have, formed
    by the Python engine's ``_gain_table`` (arrays of :func:`._measure_kernels.topic_measures`:
    ``gstart, glen, glev, ggain, gsrc``); None when a level is out of int64's range."""
    counts = sorted(set(nlev.tolist())) if len(nlev) else [0]
    width = counts[-1] + 1
    gstart = np.zeros((len(slots), width), dtype=np.int64)
    glen = np.zeros((len(slots), width), dtype=np.int64)
    glev: list[int] = []
    ggain: list[float] = []
    gsrc: list[int] = []
    made: dict[tuple[Any, int], tuple[int, int]] = {}
    for k, s in enumerate(slots):
        if s.m.name not in _GAIN_MEASURES:
            continue
        for nl in counts:
            key = (tuple(s.params), nl)
            if key not in made:
                # level i judged i + 1 times: an entry's count names the level it counts
                rr = ResRels([], 0, 0, 0, 0, 0, [i + 1 for i in range(nl)], nl)
                topic = Topic(0, 0, version, {"rr": lambda rr=rr: rr})
                table = _gain_table(topic, s.params)
                made[key] = (len(glev), len(table))
                for g in table:
                    if abs(g.level) >= 2**62:
                        return None
                    glev.append(g.level)
                    ggain.append(g.gain)
                    gsrc.append(g.count - 1)
            gstart[k, nl], glen[k, nl] = made[key]
    return (
        gstart, glen, np.array(glev, dtype=np.int64), np.array(ggain, dtype=np.float64),
        np.array(gsrc, dtype=np.int64),
    )  # fmt: skip


def _log2_table(n: int) -> np.ndarray:
    """log2(i + 2) for i < n, by Python's ``math.log2`` (the Python engine's values)."""
    return np.array([math.log2(i + 2) for i in range(n)], dtype=np.float64)


def evaluate_fast(opts: Any, rel_path: str, run_path: str, slots: list[Any]) -> FastResult | None:
    """The values of ``slots`` (the marked measures) for ``opts`` (``_run.Options``), or
    ``None`` when the Python engine must run (module docstring)."""
    if (
        opts.rel_format != "qrels"
        or opts.zscores is not None
        or opts.debug_query is not None
        or opts.results_format != "trec_results"
        or opts.max_docs < 0
        or (opts.version >= 10 and run_path.startswith("-"))
        or abs(opts.relevance_level) > 2**62
        or abs(opts.num_docs_in_coll) > 2**62
    ):
        return None
    plan = _kernel_slots(slots)
    if plan is None:
        return None
    codes, cols, params, pstart, pend = plan
    try:
        qdata = Path(rel_path).read_bytes()
        rdata = Path(run_path).read_bytes()
    except OSError:
        return None
    if not qdata or not rdata:
        return None
    if opts.version >= 10 and (qdata.startswith(b"#") or b"\n#" in qdata):
        return None
    # offsets as int32 when the files allow (half the memory)
    proto = np.empty(0, np.int32 if max(len(qdata), len(rdata)) < 2**31 - 1 else np.int64)
    qbuf = np.frombuffer(qdata, np.uint8)
    status, qds, qde, qrel, ts, te, tl = scan_qrels(qbuf, qdata.count(b"\n") + 1, proto)
    if status:
        return None
    rel_ids, qstart, qcount, qorder = _topics(qdata, ts, te, tl, len(qds))
    if qorder is not None:
        qds, qde, qrel = qds[qorder], qde[qorder], qrel[qorder]
    rbuf = np.frombuffer(rdata, np.uint8)
    single = opts.version < 10
    scanned = scan_run(rbuf, rdata.count(b"\n") + 1, opts.version >= 10, single, proto)
    status, rds, rde, sim, ts, te, tl, xl, xs, xe, id_s, id_e = scanned
    del scanned
    if status or not len(rds):
        return None
    if not _read_scores(rdata, sim, xl, xs, xe, single):
        return None
    run_ids, rstart, rcount, rorder = _topics(rdata, ts, te, tl, len(rds))
    if rorder is not None:
        rds, rde, sim = rds[rorder], rde[rorder], sim[rorder]
    run_index = {q: i for i, q in enumerate(run_ids)}
    rel_index = {q: i for i, q in enumerate(rel_ids)}
    if opts.version >= 10:
        if any(q not in run_index for q in rel_ids):
            return None  # an error, or under -c trec_eval 10's stand-in ranking
        qids = rel_ids
    else:
        qids = [q for q in run_ids if q in rel_index]
    if not qids:
        return None
    pr = np.array([run_index[q] for q in qids], dtype=np.int64)
    pq = np.array([rel_index[q] for q in qids], dtype=np.int64)
    if len(qrel) and qrel.min() < 0:
        starts, counts = qstart[pq].tolist(), qcount[pq].tolist()
        if any(qrel[a : a + n].max() < 0 for a, n in zip(starts, counts, strict=True)):
            return None  # a topic with only negative labels: the Python engine's rules
    max_docs = min(opts.max_docs, 2**62)
    joined = rank_join(
        rbuf, rds, rde, sim, rstart, rcount, qbuf, qds, qde, qrel, qstart, qcount, pr, pq,
        max_docs, opts.judged_only, opts.relevance_level,
    )  # fmt: skip
    status, rl, offs, num_ret, num_rel, num_rel_ret, nonpool, unjudged, levels, loffs, nlev = joined
    if status:
        return None
    widest = int(np.max(np.diff(offs))) if len(offs) > 1 else 0
    deepest = int(np.max(qcount[pq]))  # judged documents of a topic, at most
    log2 = _log2_table(widest + deepest + 3)
    tables = _gain_tables(slots, nlev, opts.version)
    if tables is None:
        return None
    gstart, glen, glev, ggain, gsrc = tables
    values = np.zeros((len(qids), cols[-1]), dtype=np.float64)
    try:
        topic_measures(
            rl, offs, num_ret, num_rel, num_rel_ret, nonpool, unjudged, levels, loffs, nlev,
            np.array(codes, dtype=np.int64), np.array(cols[:-1], dtype=np.int64),
            np.array(pstart, dtype=np.int64), np.array(pend, dtype=np.int64),
            np.array(params, dtype=np.float64), opts.relevance_level, opts.num_docs_in_coll,
            opts.version >= 10, log2, gstart, glen, glev, ggain, gsrc, values,
        )  # fmt: skip
    except (ZeroDivisionError, ValueError):
        return None  # the Python engine raises it
    return FastResult(
        qids, values, column_sums(values), cols, rl, offs, rel_ids,
        int(np.count_nonzero(qrel > 0)), rdata[id_s:id_e],
    )  # fmt: skip
