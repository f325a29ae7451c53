"""An ir_measures provider computed by ndcglab: importing this module registers the provider
``ndcglab`` in ``ir_measures.providers.registry`` (ir_measures' own ``register``).

>>> import ir_measures
>>> import ndcglab.compat.ir_measures                                   # doctest: +SKIP
>>> ndcg = ir_measures.providers.registry["ndcglab"]                    # doctest: +SKIP
>>> ndcg.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.AP], qrels, run)  # doctest: +SKIP

:func:`use_by_default` puts it first in ``ir_measures.DefaultPipeline``, so that
``ir_measures.calc_aggregate``, ``ir_measures.iter_calc`` and ``ir_measures.evaluator`` — and
PyTerrier's ``pt.Experiment(..., eval_metrics=[...])``, which calls them — compute every measure
ndcglab supports with it (the others still go to ir_measures' own providers).

Measures and the rules they follow:

* ``P``, ``R``, ``AP`` (with or without a cut-off), ``RR``, ``Rprec``, ``nDCG`` (``dcg=log2``,
  with ``gains``), ``Bpref``, ``infAP``, ``Success``, ``IPrec``, ``NumRet``, ``NumRel``,
  ``NumQ``, ``Judged`` (a list shorter than k: the share of its n documents, as ir_measures),
  ``RBP`` (``rel`` given: binary relevance), each with its ``rel`` and
  ``judged_only`` parameters where it has them: trec_eval 9's rules, as pytrec_eval computes
  them (the ``trec_eval`` preset; scores compared in single precision, ties by document id
  descending). ``RR@k`` is the reciprocal rank within the top k;
* ``nDCG(dcg='exp-log2')@k`` and ``ERR@k``: gdeval.pl's rules (the ``gdeval`` preset: gain
  2^y - 1, ties by document id descending), which ir_measures uses for them;
* a query of the qrels that the run misses scores each measure's ``DEFAULT`` (0), as in every
  ir_measures provider; means are over the queries of the qrels.
* ``NdcglabProvider(ties="average")`` is a provider whose measures average over every order of
  tied documents (the ndcg family, ``AP``, ``P`` and ``RR``; another measure is refused under
  it); ``ties="input"``, ``"pessimistic"``, ``"optimistic"`` and ``"random:<seed>"`` work
  likewise. The registered ``ndcglab`` provider keeps trec_eval's rule.

Qrels and runs may be any form ir_measures takes that
:func:`ndcglab.data.trec_inputs.as_trec_dict` reads (dict-of-dicts, DataFrames with
``query_id, doc_id, relevance|score``, namedtuple iterables), and also PyTerrier's
``qid, docno, label|score`` frames. ``calc_aggregate`` computes the means from the per-query
arrays without building one ``Metric`` per query. A group of trec_eval's common measures
(nDCG, nDCG@k, AP, AP@k, P@k, R@k, Success@k, RR, Rprec, Bpref, NumRet, NumRel, NumQ) sharing
one ``rel``, under trec_eval's tie rule, is computed straight from the dicts
(:mod:`ndcglab.compat._trec_fast`, the same numbers as the general path).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

import numpy as np

from .._compat import require
from ..data.trec_inputs import as_trec_dict
from ..measures import evaluate_trec, parse_measure
from ._trec_fast import FastQrels, fast_kinds

__all__ = ["NdcglabProvider", "provider", "to_spec", "use_by_default"]

ir_measures = require("ir_measures")
_providers: Any = ir_measures.providers
_m: Any = ir_measures.measures
_Provider: Any = _providers.Provider
_Evaluator: Any = _providers.Evaluator
_Any = _providers.base.Any
_Choices = _providers.base.Choices
_NOT_PROVIDED = _providers.base.NOT_PROVIDED


def _given(measure: Any, key: str) -> Any:
    """The parameter's value, or ``None`` when not given."""
    v = measure[key]
    return None if v is _NOT_PROVIDED else v


def _rel(measure: Any) -> str:
    rel = _given(measure, "rel")
    return "" if rel is None else f"rel={rel}"


def _spec(name: str, opts: list[str], cutoff: Any = None) -> str:
    opts = [o for o in opts if o]
    text = name + (f"({','.join(opts)})" if opts else "")
    return text + (f"@{cutoff}" if cutoff is not None else "")


def to_spec(measure: Any) -> tuple[str, str, bool, tuple[tuple[Any, Any], ...] | None]:
    """``(ndcglab spec, preset, judged_only, gains)`` of an ir_measures measure it supports:
    ``nDCG@10`` -> ``("ndcg@10", "trec_eval", False, None)``. ``gains`` is the label -> gain
    mapping of ``nDCG(gains=...)`` (as sorted pairs), applied to the qrels."""
    name = measure.NAME
    cut = _given(measure, "cutoff") if "cutoff" in measure.SUPPORTED_PARAMS else None
    judged = bool(measure["judged_only"]) if "judged_only" in measure.SUPPORTED_PARAMS else False
    preset = "trec_eval"
    gains = None
    if name == "nDCG":
        if measure["dcg"] == "exp-log2":
            preset, spec = "gdeval", _spec("ndcg", [], cut)
        else:
            spec = _spec("ndcg", [], cut)
        g = _given(measure, "gains")
        if g is not None:
            gains = tuple(sorted((float(k), float(v)) for k, v in g.items()))
    elif name == "ERR":
        preset, spec = "gdeval", _spec("err", [], cut)
    elif name == "P":
        spec = _spec("p", [_rel(measure)], cut)
    elif name == "R":
        spec = _spec("recall", [_rel(measure)], cut)
    elif name == "AP":
        spec = _spec("map", [_rel(measure)], cut)
    elif name == "RR":
        spec = _spec("mrr", [_rel(measure)], cut)
    elif name == "Rprec":
        spec = _spec("rprec", [_rel(measure)])
    elif name == "Bpref":
        spec = _spec("bpref", [_rel(measure)])
    elif name == "infAP":
        spec = _spec("infap", [_rel(measure)])
    elif name == "Success":
        spec = _spec("success", [_rel(measure)], cut)
    elif name == "IPrec":
        spec = _spec("iprec", [_rel(measure), f"level={measure['recall']}"])
    elif name == "NumRet":
        spec = (
            "num_ret" if _given(measure, "rel") is None else _spec("num_rel_ret", [_rel(measure)])
        )
    elif name == "NumRel":
        spec = _spec("num_rel", [_rel(measure)])
    elif name == "NumQ":
        spec = "num_q"
    elif name == "Judged":
        short = "short=clip" if cut is not None else ""  # k > n: share of the n documents
        spec = _spec("judged", [short], cut)
    elif name == "RBP":
        spec = _spec("rbp", [_rel(measure), f"p={measure['p']}"], cut)
    else:  # pragma: no cover - supports() filters
        raise ValueError(f"unsupported measure {measure}")
    return spec, preset, judged, gains


class NdcglabProvider(_Provider):
    """The ``ndcglab`` provider (module docstring)."""

    NAME = "ndcglab"
    SUPPORTED_MEASURES: ClassVar[list[Any]] = [
        _m._P(cutoff=_Any(), rel=_Any(), judged_only=_Any()),
        _m._R(cutoff=_Any(), rel=_Any(), judged_only=_Any()),
        _m._AP(cutoff=_Any(), rel=_Any(), judged_only=_Any()),
        _m._RR(cutoff=_Any(), rel=_Any(), judged_only=_Any()),
        _m._Rprec(rel=_Any(), judged_only=_Any()),
        _m._nDCG(cutoff=_Any(), dcg=_Choices("log2"), gains=_Any(), judged_only=_Any()),
        _m._nDCG(
            cutoff=_Any(required=True),
            dcg=_Choices("exp-log2"),
            gains=_Choices(_NOT_PROVIDED),
            judged_only=_Choices(False),
        ),
        _m._ERR(cutoff=_Any(required=True)),
        _m._Bpref(rel=_Any()),
        _m._infAP(rel=_Any()),
        _m._Success(cutoff=_Any(), rel=_Any(), judged_only=_Any()),
        _m._IPrec(recall=_Any(), rel=_Any(), judged_only=_Any()),
        _m._NumRet(rel=_Any()),
        _m._NumRel(rel=_Any()),
        _m._NumQ(),
        _m._Judged(cutoff=_Any()),
        _m._RBP(cutoff=_Any(), rel=_Any(required=True), p=_Any()),
    ]

    def __init__(self, ties: str = "docid") -> None:
        super().__init__()
        self.ties = ties

    def _evaluator(self, measures: Iterable[Any], qrels: Any) -> NdcglabEvaluator:
        qrels = as_trec_dict(qrels, what="qrels", value="relevance")
        return NdcglabEvaluator(list(measures), qrels, self.ties)


class NdcglabEvaluator(_Evaluator):
    """Evaluates runs on one qrels: one :func:`~ndcglab.measures.evaluate_trec` call per
    (preset, judged_only, gains) group of the measures."""

    def __init__(
        self, measures: list[Any], qrels: dict[str, dict[str, Any]], ties: str = "docid"
    ) -> None:
        super().__init__(measures, set(qrels))
        self._qrels = qrels
        groups: dict[tuple[Any, ...], list[tuple[Any, str]]] = {}
        for m in measures:
            spec, preset, judged, gains = to_spec(m)
            if ties != "docid" and spec != "num_q":
                parsed = parse_measure(spec)
                if "ties" in parsed.info.params:
                    spec = str(parsed.with_options(ties=ties))
            groups.setdefault((preset, judged, gains), []).append((m, spec))
        self._groups = groups
        self._mapped: dict[Any, dict[str, dict[str, float]]] = {}
        # trec_eval's common measures straight from the dicts (._trec_fast), group by group
        self._fast: dict[tuple[Any, ...], tuple[FastQrels, np.ndarray, np.ndarray, float]] = {}
        for key, members in groups.items():
            preset, judged, gains = key
            plan = _fast_plan([s for _, s in members if s != "num_q"])
            if (
                preset == "trec_eval"
                and not judged
                and gains is None
                and plan is not None
                and all(qrels.values())  # a query judged by nothing: the general path's rule
            ):
                fq = FastQrels.build(qrels)
                if fq is not None:
                    self._fast[key] = (fq, *plan)

    def _qrels_for(self, gains: tuple[tuple[float, float], ...] | None) -> dict[str, Any]:
        if gains is None:
            return self._qrels
        if gains not in self._mapped:
            table = dict(gains)
            self._mapped[gains] = {
                q: {d: table.get(float(v), float(v)) for d, v in docs.items()}
                for q, docs in self._qrels.items()
            }
        return self._mapped[gains]

    def _columns(self, run: Any) -> Iterator[tuple[Any, list[str], np.ndarray]]:
        """``(measure, query ids, per-query values)`` for every measure, each over the queries
        of the run that the qrels judge."""
        r = as_trec_dict(run, what="run", value="score")
        for (preset, judged, gains), members in self._groups.items():
            specs = [s for _, s in members if s != "num_q"]
            fast = self._fast.get((preset, judged, gains))
            got = fast[0].evaluate(r, *fast[1:]) if fast is not None else None
            if got is not None:
                fqids, values = got
                for m, spec in members:
                    col = np.ones(len(fqids)) if spec == "num_q" else values[:, specs.index(spec)]
                    yield m, fqids, col
                continue
            res = None
            if specs:
                res = evaluate_trec(
                    self._qrels_for(gains),
                    r,
                    specs,
                    preset=_labels_as_written(preset),
                    judged_only=judged,
                )
            qids = (
                [str(q) for q in res.query_ids.tolist()]
                if res is not None
                else sorted(q for q in r if q in self._qrels)
            )
            for m, spec in members:
                if spec == "num_q":
                    yield m, qids, np.ones(len(qids))
                else:
                    assert res is not None
                    yield m, qids, res.per_query[str(res.measures[specs.index(spec)])]

    def _iter_calc(self, run: Any) -> Iterator[Any]:
        metric = ir_measures.Metric
        cols = list(self._columns(run))
        by_query: dict[str, list[tuple[Any, float]]] = {}
        for m, qids, values in cols:
            for q, v in zip(qids, values.tolist()):
                by_query.setdefault(q, []).append((m, v))
        for q, pairs in by_query.items():
            for m, v in pairs:
                yield metric(query_id=q, measure=m, value=v)

    def calc_aggregate(self, run: Any) -> dict[Any, float]:
        """The mean (or sum, for the counts) of every measure over the queries of the qrels, a
        query the run misses counting as the measure's ``DEFAULT``."""
        out: dict[Any, float] = {}
        n_all = len(self.qrel_qids)
        for m, _qids, values in self._columns(run):
            agg = m.aggregator()
            for v in values.tolist():
                agg.add(v)
            for _ in range(n_all - len(values)):
                agg.add(m.DEFAULT)
            out[m] = agg.result()
        return out


_FAST_SPEC = re.compile(r"^([a-z_]+)(?:\(rel=([0-9.]+)\))?(?:@([0-9]+))?$")
#: ndcglab spec -> trec_eval name on the fast path (``{k}``: the cut-off), without / with one
_FAST_NAMES = {
    ("ndcg", False): "ndcg",
    ("ndcg", True): "ndcg_cut_{k}",
    ("map", False): "map",
    ("map", True): "map_cut_{k}",
    ("p", True): "P_{k}",
    ("recall", True): "recall_{k}",
    ("success", True): "success_{k}",
    ("mrr", False): "recip_rank",
    ("bpref", False): "bpref",
    ("rprec", False): "Rprec",
    ("num_ret", False): "num_ret",
    ("num_rel", False): "num_rel",
    ("num_rel_ret", False): "num_rel_ret",
}


def _fast_plan(specs: list[str]) -> tuple[np.ndarray, np.ndarray, float] | None:
    """``(kinds, cut-offs, relevance level)`` of a group's specs for
    :meth:`._trec_fast.FastQrels.evaluate`, or None when one is not on the fast path or they
    do not share one relevance level (``ndcg`` has none: trec_eval's gain is the label)."""
    names: list[str] = []
    levels: set[float] = set()
    for spec in specs:
        m = _FAST_SPEC.match(spec)
        if m is None:
            return None
        name, rel, cut = m.groups()
        pattern = _FAST_NAMES.get((name, cut is not None))
        if pattern is None:
            return None
        if name != "ndcg":
            levels.add(float(rel) if rel is not None else 1.0)
        names.append(pattern.format(k=cut))
    kinds = fast_kinds(names)
    if kinds is None or len(levels) > 1:
        return None
    return (*kinds, levels.pop() if levels else 1.0)


#: the registered provider instance (``ir_measures.providers.registry["ndcglab"]``)
provider = _providers.register(NdcglabProvider())


def use_by_default() -> None:
    """Put the ``ndcglab`` provider first in ``ir_measures.DefaultPipeline`` (once), so that
    ``ir_measures.calc_aggregate`` / ``iter_calc`` / ``evaluator`` and PyTerrier's
    ``pt.Experiment`` compute the measures it supports; the others keep their providers."""
    chain = ir_measures.DefaultPipeline.providers
    if not chain or chain[0] is not provider:
        if provider in chain:
            chain.remove(provider)
        chain.insert(0, provider)


def _labels_as_written(preset: str) -> str:
    """The provider's ``trec_eval`` rules with the labels as written (a float label is its own
    gain, as ``compat.pytrec_eval`` reads it), not trec_eval's whole part."""
    return "trec_eval(labels=float64)" if preset == "trec_eval" else preset
