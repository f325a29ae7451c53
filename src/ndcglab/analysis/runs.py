"""Several TREC runs against one qrels, on one stated set of topics: :func:`evaluate_runs`.

Runs and qrels may be given as files (paths), as the dict-of-dicts that pytrec_eval, ir_measures
and ranx users hold (``{query_id: {doc_id: score}}``), or as pandas DataFrames with the columns
``query_id, doc_id, score`` (qrels: ``query_id, doc_id, relevance``); a ranx ``Run``/``Qrels``
works through its ``to_dict()``. Runs are a mapping ``{name: run}`` or a sequence of runs
(named after their files, else ``run1``, ``run2``, …).

**The query set** (:class:`QuerySet`), stated with every comparison:

* ``intersection`` (default, as trec_eval): each run is evaluated on its topics that have
  judgements, and the comparison uses the topics that **every** run has; topics some runs miss
  are dropped from all, and named in a warning;
* ``complete`` (trec_eval ``-c``): every topic of the qrels; a topic a run misses scores 0 in
  every measure;
* ``topics`` (a list, or ``--topics FILE``): exactly these topics; a listed topic a run misses
  scores 0, a listed topic without judgements is dropped (warning).

A run's topics that have no judgements are ignored (as trec_eval does) and named in a warning;
an empty run, or one that shares no topic with the qrels, is dropped with a warning. Nothing is
averaged over different topic sets: every system's mean is over the same topics.
"""

from __future__ import annotations

import glob
import os
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._tables import counted
from .._warn import terminal_safe, warn_user
from ..errors import ConventionError, DataFormatError

__all__ = [
    "QuerySet",
    "RunSet",
    "evaluate_runs",
    "expand_run_paths",
    "read_topics",
    "run_names",
    "to_trec_dict",
]


#: the pattern of the tie-range warning of one evaluation (``tie_warnings``), which a
#: comparison replaces by its own, naming the system
_TIE_WARNING = r".*: ties decide .* of the mean "


def _shown(items: Sequence[str], limit: int = 8) -> str:
    """``a, b, c`` (the first ``limit``, then ``… (N in all)``)."""
    items = list(items)
    head = ", ".join(items[:limit])
    return head + (f", … ({len(items)} in all)" if len(items) > limit else "")


def _grouped(by_run: Mapping[str, Any]) -> dict[Any, list[str]]:
    """``{run: value}`` as ``{value: [runs]}`` (first-seen order): one warning for the runs that
    share it, not one per run."""
    out: dict[Any, list[str]] = {}
    for name, value in by_run.items():
        out.setdefault(value, []).append(name)
    return out


def _runs(names: Sequence[str]) -> str:
    """``run 'a'`` or ``runs 'a', 'b'`` (every run: ``all N runs``)."""
    if len(names) == 1:
        return f"run {names[0]!r}"
    return "runs " + _shown([repr(n) for n in names])


def to_trec_dict(obj: Any, *, what: str, value: str) -> dict[str, dict[str, float]]:
    """``{query_id: {doc_id: number}}`` from a path, a dict-of-dicts, a pandas DataFrame (columns
    ``query_id``, ``doc_id`` and ``value``: ``score`` or ``relevance``; or PyTerrier's ``qid``,
    ``docno``, ``score``/``label``), an object with ``to_dict()`` (ranx) or ir_measures'
    namedtuples: :func:`ndcglab.data.trec_inputs.as_trec_dict`. Query ids become strings; a
    query's ``{doc_id: value}`` dict with string ids is used as it is (not copied)."""
    from ..data.trec_inputs import as_trec_dict

    return as_trec_dict(obj, what=what, value=value)


def expand_run_paths(items: Sequence[str]) -> list[str]:
    """Run files from command-line items: a file as it is, a folder as its files (sorted, hidden
    files skipped), a glob pattern as its matches (sorted). An item that names nothing raises."""
    out: list[str] = []
    for it in items:
        p = Path(it)
        if p.is_dir():
            entries = sorted((f for f in p.iterdir() if not f.name.startswith(".")), key=str)
            files = [str(f) for f in entries if f.is_file()]
            broken = [f for f in entries if not f.is_file() and not f.is_dir()]
            for f in broken:
                what = (
                    f"a symbolic link to a missing file ({os.readlink(f)})"
                    if f.is_symlink()
                    else "not a regular file"
                )
                warn_user(f"run folder {it}: {f.name} is {what}; it is skipped")
            if not files:
                raise DataFormatError("the run folder holds no file", path=it, fix="give run files")
            out += files
        elif p.exists():
            out.append(str(p))
        elif any(c in it for c in "*?["):
            found = sorted(glob.glob(it))
            if not found:
                raise DataFormatError(
                    "the pattern matches no file", path=it, fix="check the pattern"
                )
            out += found
        else:
            raise DataFormatError("no such run file", path=it, fix="check the path")
    return out


def read_topics(path: str | os.PathLike[str]) -> list[str]:
    """Topic ids from a file: the first blank-separated field of every non-empty line that does
    not start with ``#`` (a list of ids, or a qrels/run file)."""
    out: list[str] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            tok = line.split()
            if tok and not tok[0].startswith("#") and tok[0] not in seen:
                seen.add(tok[0])
                out.append(tok[0])
    if not out:
        raise DataFormatError("no topic id in the file", path=path, fix="one topic id a line")
    return out


@dataclass(frozen=True)
class QuerySet:
    """The topics a comparison uses and why: ``policy`` (``intersection``, ``complete`` or
    ``topics``), ``topics`` (sorted ids), ``dropped`` (topics left out: id -> reason),
    ``zero_filled`` (run name -> topics it misses that score 0), ``runs_dropped`` (name ->
    reason), ``ignored`` (run name -> its topics without judgements), ``empty`` (topics without
    a relevant document)."""

    policy: str
    topics: tuple[str, ...]
    dropped: dict[str, str] = field(default_factory=dict)
    zero_filled: dict[str, list[str]] = field(default_factory=dict)
    runs_dropped: dict[str, str] = field(default_factory=dict)
    ignored: dict[str, list[str]] = field(default_factory=dict)
    empty: tuple[str, ...] = ()

    @property
    def statement(self) -> str:
        """One sentence: the policy, the number of topics, and what was dropped or filled."""
        rule = {
            "intersection": "the topics every run retrieved for and the qrels judge (as "
            "trec_eval; topics some runs miss are dropped from all)",
            "complete": "every topic of the qrels (trec_eval -c); a topic a run misses scores 0",
            "topics": "the listed topics; a listed topic a run misses scores 0",
        }[self.policy]
        text = f"query set: {counted(len(self.topics), 'topic')}, {rule}"
        extra = []
        if self.dropped:
            extra.append(f"{counted(len(self.dropped), 'topic')} dropped")
        filled = sum(len(v) for v in self.zero_filled.values())
        if filled:
            extra.append(f"{counted(filled, 'missing run-topic pair')} scored 0")
        if self.runs_dropped:
            extra.append(f"runs dropped: {_shown(list(self.runs_dropped))}")
        if self.empty:
            extra.append(f"{counted(len(self.empty), 'topic')} without a relevant document")
        return text + ("; " + "; ".join(extra) if extra else "") + "."

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy,
            "n_topics": len(self.topics),
            "topics": list(self.topics),
            "dropped": dict(self.dropped),
            "zero_filled": {k: list(v) for k, v in self.zero_filled.items()},
            "runs_dropped": dict(self.runs_dropped),
            "ignored": {k: list(v) for k, v in self.ignored.items()},
            "empty": list(self.empty),
            "statement": self.statement,
        }


@dataclass(frozen=True)
class RunSet:
    """Every run evaluated on the same topics: ``results`` (name -> ``EvaluationResult`` whose
    ``query_ids`` are ``query_set.topics``), the ``query_set`` and the measures' printed names."""

    results: dict[str, Any]
    query_set: QuerySet
    measures: tuple[str, ...]

    def per_query(self) -> dict[str, dict[str, np.ndarray]]:
        """``{run: {measure: (Q,) values}}`` on the common topics, in topic order."""
        return {n: dict(r.per_query) for n, r in self.results.items()}


_RUN_SUFFIXES = (".gz", ".txt", ".run", ".trec", ".res", ".tsv")


def run_names(paths: Sequence[str | os.PathLike[str]]) -> list[str]:
    """A name per run file: its file name, the suffixes ``.gz``, ``.txt``, ``.run``, ``.trec``,
    ``.res``, ``.tsv`` dropped while the names stay distinct; the full paths when two files share
    a name (the same path twice stays a clash, refused by :func:`evaluate_runs`). A control
    character in a file name is escaped (:func:`ndcglab._warn.terminal_safe`): names are
    printed in tables and warnings."""
    out = [terminal_safe(Path(p).name) for p in paths]
    for suffix in _RUN_SUFFIXES:
        stripped = [n[: -len(suffix)] if n.endswith(suffix) else n for n in out]
        if len(set(stripped)) == len(stripped) and all(stripped):
            out = stripped
    if len(set(out)) != len(out):
        out = [terminal_safe(p) for p in paths]
    return out


def _names_for(runs: Any) -> list[tuple[str, Any]]:
    if isinstance(runs, Mapping):
        return [(str(k), v) for k, v in runs.items()]
    if isinstance(runs, str | os.PathLike):
        runs = [runs]
    items = list(runs)
    paths = [str(r) for r in items if isinstance(r, str | os.PathLike)]
    if len(paths) == len(items):
        return list(zip(run_names(paths), items))
    out = []
    for i, r in enumerate(items, start=1):
        name = getattr(r, "name", None)
        out.append((str(name) if isinstance(name, str) and name else f"run{i}", r))
    return out


def evaluate_runs(
    qrels: Any,
    runs: Any,
    measures: Any = None,
    *,
    preset: Any = "trec_eval",
    complete: bool = False,
    topics: Sequence[str] | str | os.PathLike[str] | None = None,
    judged_only: bool | None = None,
    depth: int | None = None,
    score_precision: str | None = None,
    tie_range: bool = False,
) -> RunSet:
    """Evaluate every run on the qrels (:func:`ndcglab.measures.evaluate_trec`) and align them
    on one query set (module docstring). ``runs``: ``{name: run}`` or a sequence of runs (paths,
    dicts, DataFrames). ``topics``: a list of ids or a file (:func:`read_topics`).
    ``tie_range=True``: each result also holds its tie range (``result.tie_range``), without
    the per-run warning of :func:`~ndcglab.measures.evaluate_trec` (the comparison warns, naming
    the run)."""
    from ..measures import evaluate_trec, get_preset

    if complete and topics is not None:
        raise ConventionError(
            "complete=True (-c) and topics= (--topics) are two query sets. Fix: give one"
        )
    q = to_trec_dict(qrels, what="qrels", value="relevance")
    if not q:
        raise DataFormatError("the qrels hold no judgement", fix="give the qrels of the topics")
    named = _names_for(runs)
    seen: dict[str, int] = {}
    for n, _ in named:
        seen[n] = seen.get(n, 0) + 1
    twice = [n for n, c in seen.items() if c > 1]
    if twice:
        raise ConventionError(
            f"two runs are named {twice[0]!r}. Fix: give each run its own name (--name)"
        )
    read: dict[str, dict[str, dict[str, float]]] = {}
    runs_dropped: dict[str, str] = {}
    ignored: dict[str, list[str]] = {}
    for name, r in named:
        run = to_trec_dict(r, what=f"run {name!r}", value="score")
        if not run:
            runs_dropped[name] = "empty run"
            continue
        extra = sorted(t for t in run if t not in q)
        if extra:
            ignored[name] = extra
        if len(extra) == len(run):
            runs_dropped[name] = "no topic of the run is in the qrels"
            continue
        read[name] = run
    for why, names in _grouped(runs_dropped).items():
        warn_user(f"{_runs(names)} dropped from the comparison: {why}")
    kept = {n: tuple(v) for n, v in ignored.items() if n not in runs_dropped}
    for extra, names in _grouped(kept).items():
        warn_user(
            f"{_runs(names)}: {counted(len(extra), 'topic')} without judgements in the qrels "
            f"{'is' if len(extra) == 1 else 'are'} ignored (as trec_eval): {_shown(list(extra))}"
        )
    if not read:
        raise DataFormatError(
            "no run is left to evaluate ("
            + "; ".join(f"{k}: {v}" for k, v in runs_dropped.items())
            + ")",
            fix="give runs of the qrels' topics",
        )
    dropped: dict[str, str] = {}
    zero_filled: dict[str, list[str]] = {}
    if topics is not None:
        policy = "topics"
        listed = read_topics(topics) if isinstance(topics, str | os.PathLike) else list(topics)
        listed = [str(t) for t in listed]
        for t in listed:
            if t not in q:
                dropped[t] = "listed but not in the qrels"
        chosen = sorted(t for t in set(listed) if t in q)
    elif complete:
        policy = "complete"
        chosen = sorted(q)
    else:
        policy = "intersection"
        per_run = [set(r) & set(q) for r in read.values()]
        common = set.intersection(*per_run)
        union = set.union(*per_run)
        for t in sorted(union - common):
            missing = [n for n, r in read.items() if t not in r]
            dropped[t] = f"missing from {_shown(missing, 3)}"
        chosen = sorted(common)
    if not chosen:
        raise DataFormatError(
            "the runs share no judged topic, so nothing can be compared",
            fix="use -c (every qrels topic, a missing one scoring 0) or runs of the same topics",
        )
    if policy != "intersection":
        for n, r in read.items():
            miss = [t for t in chosen if t not in r]
            if miss:
                zero_filled[n] = miss
    if dropped:
        warn_user(
            f"{counted(len(dropped), 'topic')} dropped from the comparison ({policy}): "
            + _shown([f"{t} ({why})" for t, why in dropped.items()], 5)
        )
    if zero_filled:
        how = (
            "are evaluated against one unjudged document (trec_eval 10 -c: 0 in every measure "
            "of the ranking; num_rel and idcg keep their values)"
            if get_preset(preset).missing == "unjudged"
            else "score 0 in every measure"
        )
        warn_user(
            f"topics a run misses {how}: "
            + "; ".join(f"{n}: {_shown(v, 5)}" for n, v in zero_filled.items())
        )
    sub_q = {t: q[t] for t in chosen}
    results: dict[str, Any] = {}
    for n, r in read.items():
        sub_r = {t: r[t] for t in chosen if t in r}
        if not sub_r:  # a run with none of the chosen topics: every topic scores 0
            sub_r = {}
        with warnings.catch_warnings():
            if tie_range:  # compare_rankers warns about the range, naming the run
                warnings.filterwarnings("ignore", message=_TIE_WARNING)
            res = evaluate_trec(
                sub_q,
                sub_r,
                measures,
                preset=preset,
                complete=True,
                judged_only=judged_only,
                depth=depth,
                score_precision=score_precision,
                tie_range=tie_range,
            )
        results[n] = res
    first = next(iter(results.values()))
    empty = _empty_topics(sub_q, first)
    return RunSet(
        results,
        QuerySet(
            policy,
            tuple(chosen),
            dropped,
            zero_filled,
            runs_dropped,
            ignored,
            empty,
        ),
        tuple(first.names),
    )


def _empty_topics(qrels: Mapping[str, Mapping[str, float]], res: Any) -> tuple[str, ...]:
    """Topics without a document of the relevance level of the evaluation (label >= the
    preset's ``rel``, default 1)."""
    rel = 1.0
    conv = res.convention.get("measures", {})
    for c in conv.values():
        if "rel" in c:
            try:
                rel = float(c["rel"])
            except (TypeError, ValueError):
                rel = 1.0
            break
    return tuple(t for t, docs in qrels.items() if not any(v >= rel for v in docs.values()))
