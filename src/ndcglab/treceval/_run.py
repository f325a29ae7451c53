"""trec_eval's evaluation loop and output (docs/trec_eval_cli.md, "Which topics", "Output").

* **Measures**: ``-m NAME`` marks a measure or a set of measures (``official`` — the default
  when no ``-m`` is given —, ``all_trec``, ``set``, ``all_prefs``, ``prefs``, ``qrels_jg``);
  ``-m NAME.PARAMS`` marks it with parameters (the first ``-m`` giving parameters for a name
  wins). Output follows trec_eval's table order, whatever the order of ``-m``.
* **Topics**: trec_eval 9 evaluates the run's topics (sorted) that have judgements;
  trec_eval 10 walks the judged topics (sorted): one the run lacks is an error, except under
  ``-c``, where it is evaluated against a ranking of one unjudged document and its
  ``num_ret``, ``utility``, ``relstring``, ``unj_*`` and ``rbp_resid`` values are then reset.
* **Averages** (the ``all`` lines): the mean over the evaluated topics, or under ``-c`` over
  every judged topic (missing ones count 0); the counts (``num_ret``, ``num_rel_ret`` …) are
  sums; ``gm_map``/``gm_bpref`` are geometric means (missing topics count ``1e-5`` under
  ``-c``); ``num_q`` is the number of topics averaged over; ``num_rel`` under ``-c`` counts
  every qrels line of the file with a relevance > 0 (any topic, any ``-l``).
* **Lines**: ``%-22s\\t%s\\t%6.4f`` (name padded to 22, topic, value with 4 decimals), counts
  as integers (``%ld``, truncated), ``runid`` with the run's id, ``relstring`` quoted; under
  ``-Z`` every value is a z-score and every name but ``runid`` and ``relstring`` gets a ``Z``
  in front (counts then print with 4 decimals too).
"""

from __future__ import annotations

import gc
import itertools
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import _readers as rd
from ._measures import NICKNAMES, MeasureDef, Topic, measure_table
from ._ranking import (
    NONPOOL,
    UNJUDGED,
    LevelsMemory,
    NegativeTopic,
    RankPool,
    ResRels,
    form_prefs,
    form_res_rels,
)
from ._readers import TrecEvalError

if TYPE_CHECKING:
    from ._fast import FastResult

__all__ = ["Options", "evaluate_files", "evaluate_topics"]

#: trec_eval 10's stand-in document for a topic the run lacks (under -c)
BOGUS_DOCNO = b"ceci_nest_pas_un_docno"
MISSING_ZSCORE = -1000000.0
_MAX_LONG = 2**63 - 1
REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")
#: the size (qrels and run together, bytes) from which the fast path is tried by default: its
#: start-up (numba and the compiled kernels, about 0.6 s of CPU) pays off from a few MB
FAST_MIN_BYTES = 4 << 20


@dataclass
class Options:
    """trec_eval's options (``-q``, ``-m``, ``-c`` …), named as in its source."""

    version: int = 9
    query_flag: bool = False
    measures: list[str] = field(default_factory=list)
    average_complete: bool = False
    relevance_level: int = 1
    summary: bool = True
    judged_only: bool = False
    num_docs_in_coll: int = 0
    max_docs: int = _MAX_LONG
    rel_format: str = "qrels"
    results_format: str = "trec_results"
    zscores: str | None = None
    debug_level: int = 0
    debug_query: str | None = None


@dataclass
class _Slot:
    """One requested measure, initialised: its value names and parameters."""

    m: MeasureDef
    names: list[str]
    params: Any


def _sorted_unique(values: list[Any], what: str) -> list[Any]:
    values = sorted(values)
    for a, b in itertools.pairwise(values):
        if a == b:
            raise TrecEvalError(f"duplicate cut-offs in -m {what}. Fix: give each cut-off once", 2)
    return values


def _param_pairs(text: str, name: str) -> list[tuple[str, float]]:
    """``level=gain,…`` (trec_eval's check: '=' and ',' alternate, ending after an '=')."""
    last = ","
    for ch in text:
        if ch == ",":
            if last == ",":
                break
            last = ","
        elif ch == "=":
            if last == "=":
                last = ","
                break
            last = "="
    if last != "=":
        raise TrecEvalError(
            f"malformed pair parameters in -m {name}.{text} — they are name=value pairs "
            f"separated by commas. Fix: e.g. -m {name}.1=3,2=9",
            2,
        )
    out = []
    for part in text.split(","):
        key, _, value = part.partition("=")
        out.append((key, rd.atof(value.encode("latin-1"))))
    return out


def _init(m: MeasureDef, text: str | None) -> _Slot:
    """trec_eval's initialisation of a measure: parameters read, value names formed."""
    name = m.name
    if m.kind in ("cut_long",):
        if text is None:
            cuts = list(m.default)
        else:
            cuts = [rd.atol(c.encode("latin-1")) for c in text.split(",")]
            cuts.sort()
            if cuts[0] <= 0:
                raise TrecEvalError(
                    f"negative or zero cut-off in -m {name}.{text}. Fix: give positive cut-offs",
                    2,
                )
            cuts = _sorted_unique(cuts, f"{name}.{text}")
        return _Slot(m, [f"{name}_{c}" for c in cuts], cuts)
    if m.kind == "cut_double":
        if text is None:
            fracs = list(m.default)
        else:
            fracs = _sorted_unique(
                [rd.atof(c.encode("latin-1")) for c in text.split(",")], f"{name}.{text}"
            )
        # trec_eval's buffer for the name holds the name, '_' and 8 more characters
        return _Slot(m, [f"{name}_{f:3.2f}"[: len(name) + 9] for f in fracs], fracs)
    if m.kind in ("p_double", "relstring"):
        values = list(m.default) if text is None else [
            rd.atof(c.encode("latin-1")) for c in text.split(",")]  # fmt: skip
        return _Slot(m, [name if text is None else f"{name}_{text}"], values)
    if m.kind == "p_pair":
        pairs = [] if text is None else _param_pairs(text, name)
        return _Slot(m, [name if text is None else f"{name}_{text}"], pairs)
    if m.kind == "runid":
        return _Slot(m, [], None)
    return _Slot(m, [name], None)


def _mark(opts: Options) -> list[_Slot]:
    """The requested measures in table order, with their parameters."""
    table = measure_table(opts.version)
    known = {m.name: m for m in table}
    marked: set[str] = set()
    params: dict[str, str] = {}
    for spec in opts.measures or ["official"]:
        name, dot, text = spec.partition(".")
        if dot:
            if not text:
                raise TrecEvalError(
                    f"improper measure parameters in -m {spec} (nothing after the dot). Fix: "
                    f"give parameters after the dot, or -m {name}",
                    1,
                )
            params.setdefault(name, text)
        if name in NICKNAMES:
            # trec_eval 9's sets lack the measures it does not have (rbp, rbp_resid, unj)
            marked.update(n for n in NICKNAMES[name] if n in known)
        elif name in known:
            marked.add(name)
        else:
            hint = ""
            if name in ("rbp", "rbp_resid", "unj", "dcg", "ideal_dcg"):
                hint = " (a measure of trec_eval 10: add --trec-eval-version 10)"
            raise TrecEvalError(
                f"illegal measure '{name}'{hint} — -m {spec}. Fix: give one of trec_eval's "
                "measures or sets (official, all_trec, set, all_prefs, prefs, qrels_jg); "
                "'ndcglab trec_eval -h' lists them",
                1,
            )
    return [_init(m, params.get(m.name)) for m in table if m.name in marked]


def _fmt(v: float) -> str:
    """C's ``%6.4f`` (glibc writes a NaN with its sign, ``-nan``)."""
    if math.isnan(v):
        return f"{'-nan' if math.copysign(1.0, v) < 0 else 'nan':>6s}"
    return f"{v:6.4f}"


def _long(v: float) -> str:
    if not math.isfinite(v):
        return str(-(2**63))
    return str(int(v))


def _relstring(rr: ResRels, length: float) -> str:
    n = min(int(length) if math.isfinite(length) else 0, rr.num_ret)
    chars = []
    for v in rr.rl[: max(n, 0)]:
        if v > 9:
            chars.append(">")
        elif v >= 0:
            chars.append(chr(ord("0") + v))
        elif v == NONPOOL:
            chars.append("-")
        elif v == UNJUDGED:
            chars.append(".")
        else:  # pragma: no cover - no other value is formed
            chars.append("<")
    return "".join(chars)


def _read_rel_info(opts: Options, path: str) -> tuple[list[bytes], dict[bytes, Any], int]:
    """(sorted topic ids, topic -> judgements, qrels lines with relevance > 0)."""
    comments = opts.version >= 10
    if opts.rel_format == "qrels":
        topics = rd.read_qrels(path, comments=comments)
        positive = sum(1 for t in topics for r in t.rels if r > 0)
        return [t.qid for t in topics], {t.qid: t for t in topics}, positive
    if opts.rel_format == "qrels_jg":
        groups = rd.read_qrels_jg(path, comments=comments)
        positive = sum(1 for _, gs in groups for g in gs for r in g.rels if r > 0)
        return [q for q, _ in groups], dict(groups), positive
    if opts.rel_format == "prefs":
        prefs = rd.read_prefs(path, comments=comments)
    elif opts.rel_format == "qrels_prefs":
        prefs = rd.read_qrels_prefs(path, comments=comments)
    else:
        raise TrecEvalError(
            f"illegal rel_format '{opts.rel_format}' — -R. Fix: give one of "
            f"{', '.join(REL_FORMATS)}",
            2,
        )
    return [q for q, _ in prefs], dict(prefs), 0


def evaluate_files(
    opts: Options,
    rel_path: str,
    run_path: str,
    warn: Callable[[str], None] | None = None,
    *,
    fast: bool | None = None,
) -> str:
    """trec_eval's output for ``rel_path`` and ``run_path`` under ``opts`` (the module
    docstring); a refused input raises :class:`TrecEvalError` (with trec_eval's exit status).

    Python's cyclic garbage collector is paused meanwhile: reading and scoring make millions of
    small lists and no reference cycles, and at MSLR size the collector's passes over them cost
    about a tenth of the time.

    With ``fast=True`` the common case is read, ranked and measured by compiled kernels
    (:mod:`._fast`; the same output); ``fast=False`` runs the Python engine, the reference,
    for every input; ``None`` (the default) tries the fast path when the two files hold
    :data:`FAST_MIN_BYTES` or more."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _evaluate_files(opts, rel_path, run_path, warn, fast)
    finally:
        if enabled:
            gc.enable()


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # the Python engine reports it


def _evaluate_files(opts: Options, rel_path: str, run_path: str,
                    warn: Callable[[str], None] | None, fast: bool | None) -> str:  # fmt: skip
    if opts.max_docs < 0:
        raise TrecEvalError(
            f"-M {opts.max_docs}: a negative number of documents (trec_eval crashes on it). "
            "Fix: give -M 0 or more",
            1,
        )
    if opts.results_format != "trec_results":
        raise TrecEvalError(
            f"illegal retrieval results format '{opts.results_format}' — -T. Fix: give -T "
            "trec_results (or leave -T out)",
            2,
        )
    if opts.rel_format not in REL_FORMATS:
        raise TrecEvalError(
            f"illegal rel_format '{opts.rel_format}' — -R. Fix: give one of "
            f"{', '.join(REL_FORMATS)}",
            2,
        )
    if fast is None:
        fast = _size(rel_path) + _size(run_path) >= FAST_MIN_BYTES
    if fast:
        try:
            fast_slots = _mark(opts)
        except TrecEvalError:
            fast_slots = None  # the Python engine reports it, after the files' errors
        if fast_slots is not None:
            from ._fast import evaluate_fast  # numba's import only when it is used

            res = evaluate_fast(opts, rel_path, run_path, fast_slots)
            if res is not None:
                return _fast_output(opts, fast_slots, res)
    rel_ids, rel_info, positive = _read_rel_info(opts, rel_path)
    run_topics, run_id = rd.read_run(run_path, version=opts.version)
    zscores = rd.read_zscores(opts.zscores) if opts.zscores is not None else None
    if warn is not None and opts.rel_format == "qrels":
        _warn_fractional(rel_info, opts, warn)
    slots = _mark(opts)
    runs = {t.qid: t for t in run_topics}
    pool = RankPool()
    memory = LevelsMemory()
    out: list[str] = []
    acc = [[0.0] * len(s.names) for s in slots]
    n_queries = 0
    z = "Z" if zscores is not None else ""

    if opts.version >= 10:
        order: list[tuple[bytes, Any]] = []
        for qid in rel_ids:
            if opts.debug_query is not None and qid.decode("latin-1") != opts.debug_query:
                continue
            run = runs.get(qid)
            if run is None:
                if not opts.average_complete:
                    # refused when reached: an earlier topic's refusal comes first, as there
                    order.append((qid, None))
                    continue
                run = rd.RunTopic(qid, [BOGUS_DOCNO], [1.0])
                order.append((qid, (run, True)))
            else:
                order.append((qid, (run, False)))
    else:
        order = []
        for t in run_topics:
            if opts.debug_query is not None and t.qid.decode("latin-1") != opts.debug_query:
                continue
            if t.qid in rel_info:
                order.append((t.qid, (t, False)))

    for qid, entry in order:
        if entry is None:
            raise TrecEvalError(
                f"topic {qid.decode('latin-1')} of the qrels is not in the run — "
                f"{run_path}. Fix: add -c to score it as trec_eval 10 does (against "
                "one unjudged document), or give a run with every judged topic "
                "(trec_eval 10 refuses it too)",
                4,
                # the -q lines trec_eval has printed before it stops
                output="".join(line + "\n" for line in out),
            )
        run, bogus = entry
        judged = rel_info[qid]
        topic = _topic(opts, judged, run, pool, memory)
        try:
            values, relstrings = _topic_values(slots, topic)
        except NegativeTopic as exc:
            raise TrecEvalError(exc.describe(rel_path), exc.status) from None
        if bogus:
            for k, s in enumerate(slots):
                for j, nm in enumerate(s.names):
                    if nm in ("num_ret", "utility", "rbp_resid") or nm.startswith("unj"):
                        values[k][j] = 0.0
                    elif nm == "relstring":
                        relstrings[k] = ""
        if zscores is not None:
            _to_zscores(zscores.get(qid), slots, values)
        for k, s in enumerate(slots):
            if s.m.avg not in ("none",):
                for j in range(len(s.names)):
                    acc[k][j] += values[k][j]
        if opts.query_flag:
            _topic_lines(out, slots, qid.decode("latin-1"), values, relstrings, z)
        n_queries += 1
    _summary_lines(out, opts, slots, acc, n_queries, len(rel_ids), positive, run_id, z)
    return "".join(line + "\n" for line in out)


def _topic_lines(out: list[str], slots: Sequence[_Slot], qtext: str,
                 values: Sequence[Sequence[float]], relstrings: dict[int, str],
                 z: str) -> None:  # fmt: skip
    """The ``-q`` lines of one topic."""
    for k, s in enumerate(slots):
        if not s.m.single:
            continue
        if s.m.kind == "relstring":
            out.append(f"{s.names[0]:<22s}\t{qtext}\t'{relstrings[k]}'")
            continue
        for j, nm in enumerate(s.names):
            if s.m.kind == "long" and not z:
                out.append(f"{nm:<22s}\t{qtext}\t{_long(values[k][j])}")
            else:
                out.append(f"{z}{nm:<22s}\t{qtext}\t{_fmt(values[k][j])}")


def _summary_lines(out: list[str], opts: Options, slots: Sequence[_Slot],
                   acc: Sequence[Sequence[float]], n_queries: int, n_judged: int,
                   positive: int, run_id: bytes, z: str) -> None:  # fmt: skip
    """The ``all`` lines from the per-topic sums ``acc`` (an error when no topic was
    evaluated)."""
    if n_queries == 0:
        raise TrecEvalError(
            "no topic has both results and judgements — the run's topic ids and the qrels' "
            "differ. Fix: check that the run and the qrels are for the same topics",
            7,
        )
    n_avg = n_judged if opts.average_complete else n_queries
    for k, s in enumerate(slots):
        vals = list(acc[k])
        if s.m.avg == "mean":
            if n_avg:
                vals = [v / n_avg for v in vals]
        elif s.m.avg == "gm":
            if n_avg > 0:
                total = vals[0]
                if opts.average_complete:
                    total += (n_avg - n_queries) * math.log(0.00001)
                vals = [math.exp(total / n_avg)]
        elif s.m.avg == "num_q":
            vals = [float(n_avg)]
        elif s.m.avg == "num_rel" and opts.average_complete:
            vals = [float(positive)]
        if not opts.summary:
            continue
        if s.m.kind == "runid":
            out.append(f"{'runid':<22s}\tall\t{run_id.decode('latin-1')}")
            continue
        if s.m.kind == "relstring":
            continue
        for j, nm in enumerate(s.names):
            if s.m.kind == "long" and not z:
                out.append(f"{nm:<22s}\tall\t{_long(vals[j])}")
            else:
                out.append(f"{z}{nm:<22s}\tall\t{_fmt(vals[j])}")


def _fast_output(opts: Options, slots: list[_Slot], res: FastResult) -> str:
    """The output from the fast path's values (the same lines as the Python engine's)."""
    out: list[str] = []
    cols = res.cols
    if opts.query_flag:
        rows = res.values.tolist()
        rl = res.rl.tolist()
        offs = res.offs.tolist()
        for t, qid in enumerate(res.qids):
            row = rows[t]
            values = [row[cols[k] : cols[k + 1]] for k in range(len(slots))]
            relstrings: dict[int, str] = {}
            for k, s in enumerate(slots):
                if s.m.kind == "relstring":
                    ranked = rl[offs[t] : offs[t + 1]]
                    relstrings[k] = _relstring(
                        ResRels(ranked, len(ranked), 0, 0, 0, 0, [], 0), s.params[0]
                    )
            _topic_lines(out, slots, qid.decode("latin-1"), values, relstrings, "")
    sums = res.sums.tolist()
    acc = [sums[cols[k] : cols[k + 1]] for k in range(len(slots))]
    _summary_lines(out, opts, slots, acc, len(res.qids), len(res.rel_ids), res.positive,
                   res.run_id, "")  # fmt: skip
    return "".join(line + "\n" for line in out)


def _topic_values(slots: Sequence[_Slot], topic: Topic) -> tuple[list[list[float]], dict[int, str]]:
    """One topic's values, a list per slot (``relstring`` has 0.0 there, its text apart)."""
    values: list[list[float]] = []
    relstrings: dict[int, str] = {}
    for k, s in enumerate(slots):
        if s.m.calc is None:
            values.append([])
            continue
        if s.m.kind == "relstring":
            relstrings[k] = _relstring(topic.rr, s.params[0])
            values.append([0.0])
            continue
        try:
            v = s.m.calc(topic, s.params)
        except NegativeTopic as exc:
            exc.measure = s.m.name  # the first measure that forms the ranking: trec_eval's
            raise
        values.append(list(v) if v else [0.0] * len(s.names))
    return values, relstrings


def evaluate_topics(
    opts: Options, judged: Sequence[rd.JudgedTopic], runs: Sequence[rd.RunTopic]
) -> dict[str, dict[str, float]]:
    """Per-topic values of trec_eval's measures for topics held in memory (no files): ``{topic
    id: {printed name: value}}`` for the measures of ``opts.measures`` (``-m``'s syntax).

    The topics are trec_eval 9's: those of ``runs`` (in the order given) that have a judged
    topic of the same id in ``judged``. A run's ``sims`` are compared as given (trec_eval 9
    reads scores as C ``float``: round them with :func:`to_float32` for its ties); ``rels`` are
    trec_eval's integer labels. ``runid`` gives no value, ``num_q`` 1 per topic, ``relstring``
    0.0 (its text is not a number; pytrec_eval's value too); ``gm_*`` values are natural logs,
    as trec_eval accumulates them. Only ``-R qrels`` and the per-topic measures are read;
    ``-c``, ``-Z`` and averaging are the command line's. Raises :class:`TrecEvalError` as the
    command line does (an unknown measure, a document judged twice)."""
    if opts.rel_format != "qrels":
        raise TrecEvalError(
            f"evaluate_topics reads qrels only, not -R {opts.rel_format}. Fix: give "
            "rel_format='qrels'",
            2,
        )
    slots = _mark(opts)
    rel_info = {t.qid: t for t in judged}
    pool = RankPool()
    out: dict[str, dict[str, float]] = {}
    for run in runs:
        topic_judged = rel_info.get(run.qid)
        if topic_judged is None:
            continue
        values, _ = _topic_values(slots, _topic(opts, topic_judged, run, pool))
        row: dict[str, float] = {}
        for s, vals in zip(slots, values, strict=True):
            row.update(zip(s.names, vals, strict=True))
        out[run.qid.decode("latin-1")] = row
    return out


def _topic(opts: Options, judged: Any, run: rd.RunTopic, pool: RankPool,
           memory: LevelsMemory | None = None) -> Topic:  # fmt: skip
    lvl = opts.relevance_level

    def rr() -> ResRels:
        if opts.rel_format != "qrels":
            raise TrecEvalError(
                f"this measure needs qrels (-R qrels), not -R {opts.rel_format}. Fix: ask "
                "for the measures of that format (e.g. -m all_prefs, -m qrels_jg)",
                4,
            )
        return form_res_rels(
            judged, run, relevance_level=lvl, max_docs=opts.max_docs,
            judged_only=opts.judged_only, memory=memory,
        )  # fmt: skip

    def jg() -> list[ResRels]:
        if opts.rel_format != "qrels_jg":
            raise TrecEvalError(
                "this measure needs judgment groups (-R qrels_jg). Fix: give -R qrels_jg",
                4,
            )
        return [
            form_res_rels(g, run, relevance_level=lvl, max_docs=opts.max_docs,
                          judged_only=opts.judged_only, check_duplicates=False)
            for g in judged
        ]  # fmt: skip

    def prefs() -> Any:
        if opts.rel_format not in ("prefs", "qrels_prefs"):
            raise TrecEvalError(
                "this measure needs preferences (-R prefs or -R qrels_prefs). Fix: give one",
                4,
            )
        return form_prefs(judged, run, max_docs=opts.max_docs, pool=pool)

    return Topic(lvl, opts.num_docs_in_coll, opts.version, {"rr": rr, "jg": jg, "prefs": prefs})


def _to_zscores(
    table: dict[bytes, tuple[float, float]] | None,
    slots: Sequence[_Slot],
    values: list[list[float]],
) -> None:
    """Each value as ``(value - mean) / stddev`` with the mean and deviation of its topic and
    measure name; a missing pair, or a zero deviation with a value off the mean, gives
    -1000000."""
    for k, s in enumerate(slots):
        for j, nm in enumerate(s.names):
            if table is None:
                values[k][j] = MISSING_ZSCORE
                continue
            pair = table.get(nm.encode("latin-1"))
            if pair is None:
                values[k][j] = MISSING_ZSCORE
                continue
            mean, sd = pair
            if sd:
                values[k][j] = (values[k][j] - mean) / sd
            elif values[k][j] == mean:
                values[k][j] = 0.0
            else:
                values[k][j] = MISSING_ZSCORE


def _float_or_nan(text: bytes) -> float:
    try:
        return float(text)
    except ValueError:
        return math.nan


def _warn_fractional(
    rel_info: dict[bytes, Any], opts: Options, warn: Callable[[str], None]
) -> None:
    """One warning when trec_eval's reading of a label (``atol``) changes a value written in
    the qrels (``1.5`` read as 1)."""
    texts: set[bytes] = set().union(*(topic.raw for topic in rel_info.values()))
    if all(_float_or_nan(t) == rd.atol(t) for t in texts):
        return  # every distinct label text reads as written (checked once per text)
    changed = 0
    example = ""
    for topic in rel_info.values():
        for raw, rel in zip(topic.raw, topic.rels, strict=True):
            try:
                written = float(raw)
            except ValueError:
                written = math.nan
            if written != rel:
                changed += 1
                if not example:
                    example = (
                        f"'{raw.decode('latin-1')}' read as {rel} (topic "
                        f"{topic.qid.decode('latin-1')})"
                    )
    if changed:
        warn(
            f"{changed} qrels label(s) are not integers and are read as trec_eval reads them "
            f"(the leading integer: 1.5 -> 1, 0.5 -> 0), e.g. {example}; use ndcglab evaluate "
            "--preset standard to keep fractional gains"
        )
