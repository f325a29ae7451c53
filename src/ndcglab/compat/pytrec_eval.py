"""pytrec_eval's interface, computed by ndcglab: ``import ndcglab.compat.pytrec_eval as
pytrec_eval`` is the whole change for BEIR, MTEB, Pyserini or sentence-transformers code.

>>> import ndcglab.compat.pytrec_eval as pytrec_eval
>>> ev = pytrec_eval.RelevanceEvaluator({"q1": {"d1": 1, "d2": 0}}, ["map", "ndcg_cut.10"])
>>> ev.evaluate({"q1": {"d1": 0.2, "d2": 0.9}})
{'q1': {'map': 0.5, 'ndcg_cut_10': 0.6309297535714575}}

What is the same as pytrec_eval (the trec_eval 9 rules, the ``trec_eval`` preset):

* the queries evaluated are those of the run that have a non-empty judgement list in the
  qrels; results are ``{query_id: {measure: value}}``, an empty run gives ``{}``;
* measure names as pytrec_eval reads them: a trec_eval measure (``map``, ``ndcg``, ``bpref``,
  ``recip_rank``, ``Rprec``, ``infAP``, ``gm_map``, ``11pt_avg``, ``num_ret``, ``num_rel``,
  ``num_rel_ret``, ``num_q``, ``runid``), a measure with cut-offs written ``P.5,10``,
  ``P_5``, ``ndcg_cut.10`` or ``ndcg_cut_10`` (also ``recall``, ``map_cut``, ``success``,
  ``iprec_at_recall``), such a measure alone for trec_eval's default cut-offs (``P`` ->
  ``P_5`` … ``P_1000``; a family named both alone and with cut-offs takes the cut-offs only),
  and the nicknames ``official`` and ``all_trec``; the result keys are trec_eval's printed
  names (``ndcg_cut_10``, ``iprec_at_recall_0.10``);
* documents are ranked by score compared as a C ``float`` (single precision), ties by document
  id descending; the ideal ranking uses every judged document of the query; ``relevance_level``
  is the smallest relevant label (trec_eval ``-l``); ``judged_docs_only_flag`` ranks only the
  judged documents (trec_eval ``-J``); :func:`compute_aggregated_measure` sums ``num_*``,
  takes the geometric mean of ``gm_*`` (per-query values are logs) and the mean of the rest.

What differs:

* **float labels are read** (pytrec_eval raises ``TypeError``): a label is used as the number
  it is — its gain in ``ndcg`` is the label itself (trec_eval's linear gain), it is relevant
  when ``>= relevance_level``, and a negative label is judged, never relevant, gain 0
  (trec_eval's rule for negative judgements). Integers give exactly pytrec_eval's numbers;
* ``ties=`` picks another rule for tied scores: ``"docid"`` (default, pytrec_eval's),
  ``"average"`` (the mean over every order of the tied documents, for the ndcg family, ``map``,
  ``P`` and ``recip_rank``; another measure with it is refused), ``"input"`` (the run's order),
  ``"pessimistic"``, ``"optimistic"``, ``"random:<seed>"``;
* an ndcglab measure spec is read too, the key being the text as typed
  (``"ndcg(ties=average)@10"``, ``"err@20"``, ``"rbp(p=0.8)"``);
* the rest of trec_eval's measures (``set_*``, ``relative_P``, ``Rprec_mult``, ``utility``,
  ``G``, ``binG``, ``Rndcg``, ``ndcg_rel``, ``relstring``, ``gm_bpref``,
  ``num_nonrel_judged_ret``) are computed per query by :func:`ndcglab.treceval.evaluate_topics`
  (trec_eval 9's rules, pytrec_eval's numbers; ``relstring`` is 0.0, as pytrec_eval gives): they
  take pytrec_eval's tie rule only, and integer labels (a fractional label is refused with
  ``ValueError``, as trec_eval would read it as its integer part);
* every evaluation of the same inputs gives the same numbers, and no value leaves [0, 1] through
  a bad ranking (pytrec_eval issue 57).

Inputs may also be pandas DataFrames, ranx ``Qrels``/``Run``, ir_measures namedtuples or a TREC
file path (:func:`ndcglab.data.trec_inputs.as_trec_dict`).

trec_eval's common measures under pytrec_eval's tie rule are computed straight from the dicts,
the qrels read once by the constructor (:mod:`ndcglab.compat._trec_fast`: the same numbers as
the general path, several times pytrec_eval's speed); everything else goes through
:func:`ndcglab.measures.evaluate_trec`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from ..data.trec_inputs import as_trec_dict
from ..errors import SpecError
from ..measures import Measure, evaluate_trec, get_preset, parse_measure
from ..measures.ir_names import expand_measure_specs
from ..treceval import JudgedTopic, Options, RunTopic, evaluate_topics, measure_table, to_float32
from ._trec_fast import FastQrels, fast_kinds

__all__ = [
    "NOT_COMPUTED",
    "RelevanceEvaluator",
    "compute_aggregated_measure",
    "parse_measure_names",
    "parse_qrel",
    "parse_run",
    "supported_measures",
    "supported_nicknames",
]

#: trec_eval measures with a list of parameters (cut-offs or recall levels)
_WITH_PARAMS = ("P", "recall", "ndcg_cut", "map_cut", "success", "iprec_at_recall")
#: trec_eval measures without parameters that ndcglab computes
_PLAIN = (
    "map", "gm_map", "Rprec", "bpref", "recip_rank", "infAP", "ndcg", "11pt_avg", "num_ret",
    "num_rel", "num_rel_ret",
)  # fmt: skip
#: bookkeeping lines of trec_eval's output, not measures: num_q (1 per query), runid (0.0)
_BOOKKEEPING = {"num_q": 1.0, "runid": 0.0}
#: trec_eval measures computed per query by trec_eval's engine (:mod:`ndcglab.treceval`)
_ENGINE = frozenset(
    {
        "G", "Rndcg", "Rprec_mult", "binG", "gm_bpref", "ndcg_rel", "num_nonrel_judged_ret",
        "relative_P", "relstring", "set_F", "set_P", "set_map", "set_recall",
        "set_relative_P", "utility",
    }
)  # fmt: skip
#: ... of them, those with a list of parameters (cut-offs or multiples of R)
_ENGINE_WITH_PARAMS = ("Rprec_mult", "relative_P")
#: trec_eval (and pytrec_eval) measures that ndcglab does not compute: none are left
NOT_COMPUTED: frozenset[str] = frozenset()

#: trec_eval's default measures (its output without ``-m``)
_OFFICIAL = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P",
)  # fmt: skip
#: the measures this evaluator computes, by their trec_eval names (as pytrec_eval's set)
supported_measures: frozenset[str] = frozenset((*_WITH_PARAMS, *_PLAIN, *_BOOKKEEPING, *_ENGINE))
#: trec_eval's ``set`` measures (its ``-m set``)
_SET = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
    "set_relative_P", "set_map", "set_F",
)  # fmt: skip
#: pytrec_eval's nicknames (trec_eval's measure sets) this evaluator expands
supported_nicknames: dict[str, frozenset[str]] = {
    "official": frozenset(_OFFICIAL),
    "set": frozenset(_SET),
    "all_trec": frozenset(supported_measures),
}

_PARAMS = re.compile(r"^([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)$")


def _default_params(base: str) -> list[str]:
    """trec_eval's default parameters of a measure with a list (``P`` -> 5, 10, … 1000), read
    from :func:`~ndcglab.measures.ir_names.expand_measure_specs` (one table of them), or from
    trec_eval's table for the measures its engine computes."""
    if base in _ENGINE_WITH_PARAMS:
        (m,) = [m for m in measure_table(9) if m.name == base]
        return [str(p) for p in m.default]
    probe = "P" if base == "recall" else base  # 'recall' alone is ndcglab's own recall there
    names = expand_measure_specs([probe])
    prefix = {"P": "P_"}.get(probe, f"{probe}_")
    return [n[len(prefix) :] for n in names]


def _key(base: str, param: str) -> str:
    """trec_eval's printed name of one member: ``P_5``, ``iprec_at_recall_0.10``."""
    if base in ("iprec_at_recall", "Rprec_mult"):
        return f"{base}_{float(param):.2f}"
    value = float(param)
    if value != int(value) or value < 1:
        raise ValueError(f"unsupported measure {base}.{param}: a cut-off is a whole number >= 1")
    return f"{base}_{int(value)}"


def _split(name: str) -> tuple[str, list[str]] | None:
    """``(base, params)`` of a pytrec_eval name (``ndcg_cut.5,10`` -> ``ndcg_cut``, [5, 10]);
    ``None`` for a name that is no trec_eval measure."""
    if name in supported_measures or name in NOT_COMPUTED:
        return name, []
    for base in sorted((*_WITH_PARAMS, *_ENGINE_WITH_PARAMS), key=len, reverse=True):
        if name.startswith(base) and len(name) > len(base) + 1 and name[len(base)] in "._":
            m = _PARAMS.match(name[len(base) + 1 :])
            if m:
                return base, m.group(1).split(",")
    return None


def parse_measure_names(measures: Iterable[str]) -> list[tuple[str, str]]:
    """``(result key, ndcglab spec)`` for each measure pytrec_eval's way of naming them gives
    (module docstring): nicknames expanded, members of one family merged, bare families
    given trec_eval's default cut-offs; an ndcglab spec keeps its text as the key."""
    if isinstance(measures, str):
        measures = [measures]
    params: dict[str, set[str]] = {}
    order: list[str] = []
    own: list[tuple[str, str]] = []
    for raw in measures:
        name = str(raw).strip()
        if name in supported_nicknames:
            names: list[tuple[str, list[str]]] = [
                (n, []) for n in sorted(supported_nicknames[name])
            ]
        elif name in ("all_prefs", "prefs", "qrels_jg"):
            raise ValueError(
                f"unsupported measure {name}: trec_eval's {name!r} measures are not computed by "
                "ndcglab. Fix: use pytrec_eval for them"
            )
        else:
            split = _split(name)
            if split is None:
                try:
                    parse_measure(name)
                except SpecError as exc:
                    raise ValueError(f"unsupported measure {name} ({exc})") from None
                own.append((name, name))
                continue
            names = [split]
        for base, ps in names:
            if base in NOT_COMPUTED:
                raise ValueError(
                    f"unsupported measure {name}: trec_eval's {base} is not computed by "
                    "ndcglab. Fix: use pytrec_eval for it, or drop it"
                )
            if ps and base not in (*_WITH_PARAMS, *_ENGINE_WITH_PARAMS):
                raise ValueError(f"unsupported measure {name}: {base} takes no parameters")
            if base not in params:
                params[base] = set()
                order.append(base)
            params[base].update(ps)
    out: list[tuple[str, str]] = []
    for base in order:
        if base not in (*_WITH_PARAMS, *_ENGINE_WITH_PARAMS):
            out.append((base, base))
            continue
        keys = {_key(base, p) for p in (params[base] or _default_params(base))}
        if base in _ENGINE_WITH_PARAMS:  # the spec given to trec_eval's engine: base.param
            out += [(k, f"{base}.{k[len(base) + 1 :]}") for k in sorted(keys, key=_member_order)]
            continue
        out += [(k, k) for k in sorted(keys, key=_member_order)]
    return out + own


def _member_order(key: str) -> tuple[str, float]:
    base, _, p = key.rpartition("_")
    return base, float(p)


def compute_aggregated_measure(measure: str, values: Sequence[float] | np.ndarray) -> float:
    """Aggregate per-query values as trec_eval's ``all`` line: the sum for ``num_*``, the
    geometric mean for ``gm_*`` (per-query values are natural logs: ``exp(mean)``), the
    arithmetic mean otherwise."""
    v = np.asarray(values, dtype=np.float64)
    if measure.startswith("num_"):
        return float(v.sum())
    if measure.startswith("gm_"):
        return float(np.exp(v.sum() / len(v)))
    return float(v.mean())


def parse_qrel(f_qrel: Iterable[str]) -> dict[str, dict[str, int]]:
    """Qrels lines ``QID ITER DOCNO REL`` -> ``{qid: {docno: int(rel)}}`` (pytrec_eval's reader;
    a repeated pair raises ``ValueError``)."""
    out: dict[str, dict[str, int]] = {}
    for line in f_qrel:
        fields = line.split()
        if not fields:
            continue
        qid, _, doc, rel = fields
        if doc in out.setdefault(qid, {}):
            raise ValueError(f"document {doc!r} judged twice for query {qid!r}")
        out[qid][doc] = int(rel)
    return out


def parse_run(f_run: Iterable[str]) -> dict[str, dict[str, float]]:
    """Run lines ``QID Q0 DOCNO RANK SCORE TAG`` -> ``{qid: {docno: float(score)}}``
    (pytrec_eval's reader; a repeated pair raises ``ValueError``)."""
    out: dict[str, dict[str, float]] = {}
    for line in f_run:
        fields = line.split()
        if not fields:
            continue
        qid, _, doc, _, score, _ = fields
        if doc in out.setdefault(qid, {}):
            raise ValueError(f"document {doc!r} ranked twice for query {qid!r}")
        out[qid][doc] = float(score)
    return out


class RelevanceEvaluator:
    """pytrec_eval's ``RelevanceEvaluator``, computed by ndcglab (module docstring).

    Parameters
    ----------
    query_relevance
        ``{query_id: {doc_id: label}}`` (int or float labels), or a DataFrame, ranx ``Qrels``,
        ir_measures qrels or a qrels file path. Queries with no judgement are dropped.
    measures
        pytrec_eval measure names (``{"map", "ndcg_cut.10", "P_5"}``), nicknames, or ndcglab
        specs.
    relevance_level
        Smallest relevant label (trec_eval ``-l``; default 1).
    judged_docs_only_flag
        Rank only the judged documents (trec_eval ``-J``).
    ties
        Rule for tied scores: ``"docid"`` (pytrec_eval's: document id descending), ``"average"``,
        ``"input"``, ``"pessimistic"``, ``"optimistic"`` or ``"random:<seed>"``.
    """

    def __init__(
        self,
        query_relevance: Any,
        measures: Iterable[str],
        relevance_level: int | float = 1,
        judged_docs_only_flag: bool = False,
        *,
        ties: str = "docid",
    ) -> None:
        qrels = as_trec_dict(query_relevance, what="qrels", value="relevance")
        self._qrels = {q: d for q, d in qrels.items() if len(d) > 0}
        self._names = parse_measure_names(measures)
        judged = ",judged_only=yes" if judged_docs_only_flag else ""
        self._preset = get_preset(
            f"trec_eval(labels=float64,rel={float(relevance_level):g}{judged})"
        )
        self.ties = ties
        self._engine_specs = _engine_specs(spec for _, spec in self._names)
        self._engine: tuple[Options, dict[str, JudgedTopic]] | None = None
        if self._engine_specs:
            self._engine = _engine_inputs(
                self._qrels, relevance_level, judged_docs_only_flag, ties, self._engine_specs
            )
        self._measures = [_with_ties(spec, ties) for _, spec in self._names]
        self.relevance_level = relevance_level
        self.judged_docs_only_flag = judged_docs_only_flag
        # trec_eval's common measures straight from the dicts (._trec_fast), when they allow it
        self._fast: FastQrels | None = None
        self._fast_cols: tuple[list[str], np.ndarray, np.ndarray] | None = None
        computed = [(k, spec) for k, spec in self._names if _ndcglab_computes(spec)]
        kinds = fast_kinds([spec for _, spec in computed])
        if ties == "docid" and not judged_docs_only_flag and kinds is not None:
            self._fast = FastQrels.build(self._qrels)
            self._fast_cols = ([k for k, _ in computed], *kinds)

    @property
    def measures(self) -> list[str]:
        """The result keys, in the order computed."""
        return [k for k, _ in self._names]

    def evaluate(self, scores: Any) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}`` for the queries of ``scores`` (``{query_id:
        {doc_id: score}}``, or a DataFrame, ranx ``Run``, ir_measures run or run file path) that
        have judgements; ``{}`` for an empty run."""
        if isinstance(scores, Mapping) and not scores:
            return {}
        run = as_trec_dict(scores, what="run", value="score")
        out = self._evaluate(run)
        if self._engine is None or not out:
            return out
        # trec_eval's other measures, per query, by its engine (ndcglab.treceval)
        opts, judged = self._engine
        runs = [
            RunTopic(
                q.encode("utf-8"),
                [str(d).encode("utf-8") for d in run.get(q, {})],
                [to_float32(float(v)) for v in run.get(q, {}).values()],
            )
            for q in out
        ]
        got = evaluate_topics(opts, [judged[q] for q in out], runs)
        names = [k for k, _ in self._names]
        return {q: {k: row[k] if k in row else got[q][k] for k in names} for q, row in out.items()}

    def _evaluate(self, run: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        """The result dicts for the measures ndcglab computes and the bookkeeping lines."""
        if self._fast is not None and self._fast_cols is not None:
            keys, kinds, ks = self._fast_cols
            got = self._fast.evaluate(run, kinds, ks, float(self.relevance_level))
            if got is not None:
                return self._fast_result(keys, *got)
        run = {q: d for q, d in run.items() if q in self._qrels}
        if not run:
            return {}
        keys = [k for k, spec in self._names if _ndcglab_computes(spec)]
        measures = [m for (_, spec), m in zip(self._names, self._measures) if m is not None]
        out: dict[str, dict[str, float]] = {q: {} for q in sorted(run)}
        columns: list[tuple[str, list[float]]] = []
        if measures:
            res = evaluate_trec(self._qrels, run, measures, preset=self._preset)
            qids = [str(q) for q in res.query_ids.tolist()]
            out = {q: {} for q in qids}
            for key, m in zip(keys, measures):
                columns.append((key, res.per_query[str(m)].tolist()))
        qids = list(out)
        for key, spec in self._names:
            if spec in _BOOKKEEPING:
                columns.append((key, [_BOOKKEEPING[spec]] * len(qids)))
        order = {k: i for i, (k, _) in enumerate(self._names)}
        columns.sort(key=lambda kc: order[kc[0]])
        for key, vals in columns:
            for q, v in zip(qids, vals):
                out[q][key] = v
        return out

    def _fast_result(
        self, keys: list[str], qids: list[str], values: np.ndarray
    ) -> dict[str, dict[str, float]]:
        """The result dicts from the fast path's ``(Q, measures)`` values, the bookkeeping
        lines put in their places."""
        if not qids:
            return {}
        names = [k for k, s in self._names if s not in self._engine_specs]
        if len(keys) == len(names):
            return {q: dict(zip(names, row)) for q, row in zip(qids, values.tolist())}
        cols = dict(zip(keys, values.T))
        full = np.stack(
            [
                cols[k] if k in cols else np.full(len(qids), _BOOKKEEPING[s])
                for k, s in self._names
                if s not in self._engine_specs
            ],
            axis=1,
        )
        return {q: dict(zip(names, row)) for q, row in zip(qids, full.tolist())}


def _ndcglab_computes(spec: str) -> bool:
    """Whether ndcglab's measures compute ``spec`` (not a bookkeeping line, not trec_eval's
    engine)."""
    return spec not in _BOOKKEEPING and spec.partition(".")[0] not in _ENGINE


def _engine_specs(specs: Iterable[str]) -> frozenset[str]:
    """The specs computed by trec_eval's engine (``set_P``, ``Rprec_mult.0.20`` …)."""
    return frozenset(s for s in specs if s.partition(".")[0] in _ENGINE)


def _engine_inputs(
    qrels: Mapping[str, Mapping[str, Any]],
    relevance_level: int | float,
    judged_only: bool,
    ties: str,
    specs: frozenset[str],
) -> tuple[Options, dict[str, JudgedTopic]]:
    """trec_eval's options (``-m`` per measure, its parameters joined) and judged topics for
    the engine's measures; ``ValueError`` for what trec_eval's rules cannot read (another tie
    rule, a fractional label or relevance level)."""
    names = ", ".join(sorted(specs))
    if ties != "docid":
        raise ValueError(
            f"ties={ties!r}: trec_eval's measures {names} are computed under pytrec_eval's tie "
            "rule only. Fix: leave ties at 'docid', or drop them"
        )
    level = float(relevance_level)
    if level != int(level):
        raise ValueError(
            f"relevance_level={relevance_level}: trec_eval's measures {names} read whole "
            "relevance levels. Fix: give an integer relevance_level, or drop them"
        )
    params: dict[str, list[str]] = {}
    for spec in sorted(specs, key=lambda s: (s.partition(".")[0], float(s.partition(".")[2] or 0))):
        base, _, p = spec.partition(".")
        params.setdefault(base, [])
        if p:
            params[base].append(p)
    ms = [base + ("." + ",".join(ps) if ps else "") for base, ps in params.items()]
    judged: dict[str, JudgedTopic] = {}
    for q, docs in qrels.items():
        rels: list[int] = []
        for d, label in docs.items():
            value = float(label)
            if value != int(value):
                raise ValueError(
                    f"label {label!r} of document {d!r}, query {q!r}: trec_eval's measures "
                    f"{names} read integer labels (trec_eval would read {int(value)}). Fix: "
                    "give integer labels, or drop them"
                )
            rels.append(int(value))
        judged[q] = JudgedTopic(q.encode("utf-8"), [str(d).encode("utf-8") for d in docs], rels)
    opts = Options(
        measures=ms, relevance_level=int(level), judged_only=judged_only, query_flag=True
    )
    return opts, judged


def _with_ties(spec: str, ties: str) -> Measure | None:
    """The measure of one result key with the evaluator's tie rule (``None`` for the
    bookkeeping lines and trec_eval's engine); a measure written with its own ``ties=`` keeps
    it."""
    if not _ndcglab_computes(spec):
        return None
    m = parse_measure(spec)
    if ties != "docid" and "ties" in m.info.params and "ties" not in m.options:
        m = m.with_options(ties=ties)
    return m
