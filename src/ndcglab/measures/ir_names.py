"""Measure names as trec_eval's ``-m`` and ir_measures write them, translated to ndcglab specs.

* **trec_eval's ``-m`` syntax** (:func:`expand_measure_specs`): a measure with a list of
  cut-offs, ``ndcg_cut.5,10`` → ``ndcg_cut_5``, ``ndcg_cut_10`` (also ``P.5,10``,
  ``recall.100``, ``map_cut.10``, ``success.1,5``, ``iprec_at_recall.0.1,0.5``); such a measure
  without a list takes trec_eval's default cut-offs (``P`` → ``P_5`` … ``P_1000``); and the
  sets ``all_trec`` (every trec_eval measure that ndcglab computes) and ``official``
  (trec_eval's default output). The names produced are trec_eval's own, which the registry reads
  (``ndcg_cut_10`` is ``ndcg@10``), so results print both names. The measures of ``all_trec``
  that ndcglab does not compute (``set_P``, ``relstring``, ``Rndcg``, preference measures …) are
  named in a warning.
* **ir_measures' parameterised names** (:func:`translate_ir_measures`; quoted values as
  ir_measures writes them, ``dcg='exp-log2'``, or bare): ``nDCG(dcg=log2)@k``
  → ``ndcg(gain=linear,discount=log)@k`` (trec_eval's), ``nDCG(dcg=exp-log2)@k`` →
  ``ndcg(gain=exp2,discount=log)@k`` (Burges'); ``P(rel=2)@5``, ``AP(rel=2)``, ``R@100``,
  ``RR``, ``nDCG@10`` are already registry names.
* **trec_eval's printed name of a measure** (:func:`trec_eval_name`): ``ndcg@10`` →
  ``ndcg_cut_10``, ``p@5`` → ``P_5``, ``mrr`` → ``recip_rank`` …, for ``evaluate -q``'s
  per-query lines in trec_eval's layout.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

__all__ = [
    "ALL_TREC",
    "OFFICIAL",
    "expand_measure_specs",
    "format_trec_eval",
    "is_count_measure",
    "translate_ir_measures",
    "trec_eval_name",
]

#: trec_eval's default cut-offs of its measures with a list of cut-offs
_CUTS = "5,10,15,20,30,100,200,500,1000"
_DEFAULT_CUTS = {
    "P": _CUTS,
    "ndcg_cut": _CUTS,
    "map_cut": _CUTS,
    "recall": _CUTS,
    "success": "1,5,10",
    "iprec_at_recall": "0.00,0.10,0.20,0.30,0.40,0.50,0.60,0.70,0.80,0.90,1.00",
}
#: trec_eval measure name -> how its members are written (``{}``: one cut-off)
_MEMBER = {
    "P": "P_{}",
    "ndcg_cut": "ndcg_cut_{}",
    "map_cut": "map_cut_{}",
    "recall": "recall_{}",
    "success": "success_{}",
    "iprec_at_recall": "iprec_at_recall_{}",
}
_LISTED = re.compile(r"^(P|ndcg_cut|map_cut|recall|success|iprec_at_recall)\.([0-9.,]+)$")


def _members(name: str, cuts: str) -> list[str]:
    out = []
    for c in cuts.split(","):
        c = c.strip()
        if name == "iprec_at_recall":
            c = f"{float(c):.2f}"
        out.append(_MEMBER[name].format(c))
    return out


def _set(*parts: str) -> tuple[str, ...]:
    out: list[str] = []
    for p in parts:
        out += _members(p, _DEFAULT_CUTS[p]) if p in _MEMBER else [p]
    return tuple(out)


#: trec_eval's default output (no ``-m``), less ``runid`` and ``num_q``
OFFICIAL = _set(
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P",
)  # fmt: skip
#: every measure of trec_eval's ``all_trec`` that ndcglab computes, in trec_eval's order
ALL_TREC = _set(
    "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank",
    "iprec_at_recall", "P", "recall", "infAP", "ndcg", "ndcg_cut", "map_cut", "11pt_avg",
    "success",
)  # fmt: skip
#: the measures of ``all_trec`` ndcglab does not compute (named in a warning)
_NOT_COMPUTED = (
    "runid", "num_q", "gm_bpref", "Rprec_mult", "utility", "relstring", "binG", "G", "Rndcg",
    "rel_P", "set_P", "set_recall", "set_map", "set_F", "set_rel_P", "num_nonrel_judged_ret",
    "prefs_*", "map_avgjg", "Rprec_mult_avgjg", "P_avgjg", "yaap", "ndcg_rel", "ndcg_p",
)  # fmt: skip


def expand_measure_specs(specs: Any) -> Any:
    """``specs`` with trec_eval's ``-m`` forms expanded (module docstring); anything else is
    returned as it is (a single string stays a string when it expands to itself)."""
    if specs is None or not (isinstance(specs, str) or _is_str_list(specs)):
        return specs
    single = isinstance(specs, str)
    items = [specs] if single else list(specs)
    out: list[Any] = []
    changed = False
    for s in items:
        if not isinstance(s, str):
            out.append(s)
            continue
        one = _expand_one(s.strip())
        changed |= one != [s]
        out += one
    if not changed:
        return specs
    return out


def _is_str_list(x: Any) -> bool:
    return isinstance(x, Iterable) and not isinstance(x, bytes | dict)


def _expand_one(s: str) -> list[str]:
    if s == "all_trec":
        from .._warn import warn_user

        warn_user(
            "all_trec: the trec_eval measures this table does not compute are left out: "
            + ", ".join(_NOT_COMPUTED)
            + " (and trec_eval 10's rbp, rbp_resid, unj_5/10/20 under trec_eval10); every one "
            "is printed by --format trec_eval and by 'ndcglab trec_eval'"
        )
        return list(ALL_TREC)
    if s == "official":
        return list(OFFICIAL)
    if s in _DEFAULT_CUTS and s != "recall":  # 'recall' alone is also ndcglab's recall
        return _members(s, _DEFAULT_CUTS[s])
    m = _LISTED.match(s)
    if m:
        return _members(m.group(1), m.group(2).strip(","))
    return [s]


_IR_NDCG = re.compile(r"^ndcg\((.*)\)(@.*)?$", re.IGNORECASE)
_DCG_FORMS = {"log2": "gain=linear,discount=log", "exp-log2": "gain=exp2,discount=log"}


def translate_ir_measures(spec: str) -> str:
    """ir_measures' ``nDCG(dcg=…)`` written as ndcglab's ``ndcg(gain=…,discount=…)``; any other
    text unchanged. An unknown ``dcg=`` value is refused, naming ir_measures' two."""
    m = _IR_NDCG.match(spec.strip())
    if not m:
        return spec
    params = [p.strip() for p in m.group(1).split(",") if p.strip()]
    out = []
    for p in params:
        key, _, value = p.partition("=")
        value = value.strip().strip("'\"").lower()
        if key.strip().lower() == "dcg":
            if value not in _DCG_FORMS:
                from ..errors import SpecError

                raise SpecError(
                    f"unknown dcg={value!r} in {spec!r}: ir_measures' nDCG knows dcg="
                    f"{' and dcg='.join(_DCG_FORMS)}. Fix: e.g. nDCG(dcg=exp-log2)@10, or "
                    "ndcglab's ndcg(gain=...,discount=...)@10"
                )
            out.append(_DCG_FORMS[value])
        else:
            out.append(p)
    if out == params:
        return spec
    return "ndcg(" + ",".join(out) + ")" + (m.group(2) or "")


_TREC_NAMES: dict[str, str] = {
    "map": "map",
    "gm_map": "gm_map",
    "rprec": "Rprec",
    "bpref": "bpref",
    "mrr": "recip_rank",
    "infap": "infAP",
    "ndcg": "ndcg",
    "iprec_11pt": "11pt_avg",
    "num_rel": "num_rel",
    "num_ret": "num_ret",
    "num_rel_ret": "num_rel_ret",
}
_TREC_CUT_NAMES = {
    "ndcg": "ndcg_cut_{}",
    "p": "P_{}",
    "recall": "recall_{}",
    "success": "success_{}",
    "map": "map_cut_{}",
}


def trec_eval_name(measure: Any) -> str:
    """trec_eval's printed name of a parsed measure without options (``ndcg@10`` →
    ``ndcg_cut_10``, ``p@5`` → ``P_5``, ``mrr`` → ``recip_rank``, ``iprec(level=0.1)`` →
    ``iprec_at_recall_0.10``); the ndcglab name for the others."""
    name = measure.name
    opts = dict(measure.params)
    cut = measure.cutoff
    if name == "iprec" and set(opts) == {"level"} and cut is None:
        return f"iprec_at_recall_{float(opts['level']):.2f}"
    if opts:
        return str(measure)
    if cut is None:
        return _TREC_NAMES.get(name, str(measure))
    if cut.k is not None and name in _TREC_CUT_NAMES:
        return _TREC_CUT_NAMES[name].format(cut.k)
    return str(measure)


def is_count_measure(measure: Any) -> bool:
    """Whether trec_eval prints the measure as an integer and sums it in its ``all`` line
    (``num_ret``, ``num_rel``, ``num_rel_ret``)."""
    return measure.name in ("num_ret", "num_rel", "num_rel_ret")


def format_trec_eval(
    result: Any,
    *,
    queries: Iterable[str] | None = None,
    runid: str | None = None,
    num_rel_all: int | None = None,
) -> str:
    """``result`` (an :class:`~ndcglab.measures.evaluate.EvaluationResult`) as trec_eval ``-q``
    prints it: for each query (in the result's order, sorted ids), one line per measure
    ``"%-22s\\t%s\\t%6.4f"`` (name, query id, value; ``%ld`` for the counts ``num_ret``,
    ``num_rel``, ``num_rel_ret``), then the same lines for the query id ``all`` with the mean
    (the counts: the sum; ``gm_map``: the geometric mean, as the result's mean), and
    ``runid\\tall\\tNAME`` when ``runid`` is given. Names are those typed (``ndcg_cut_10``) or
    trec_eval's (:func:`trec_eval_name`). ``queries`` limits the per-query lines (trec_eval
    ``-c`` prints only the queries of the run; the ``all`` lines still average over every
    query). ``num_rel_all`` replaces the ``all`` value of ``num_rel`` (trec_eval ``-c`` prints
    there the number of qrels lines with a relevance above 0, of every topic). A NaN value
    (``empty=skip``) prints no line."""
    import math

    back = {canon: typed for typed, canon in result.aliases.items()}
    names = [(str(m), back.get(str(m)) or trec_eval_name(m), is_count_measure(m))
             for m in result.measures]  # fmt: skip
    keep = None if queries is None else set(queries)

    def line(name: str, qid: str, value: float, count: bool) -> str:
        if count:
            return f"{name:<22s}\t{qid}\t{round(value)}"
        return f"{name:<22s}\t{qid}\t{value:6.4f}"

    out: list[str] = []
    for i, qid in enumerate(result.query_ids.tolist()):
        if keep is not None and str(qid) not in keep:
            continue
        for key, shown, count in names:
            v = float(result.per_query[key][i])
            if not math.isnan(v):
                out.append(line(shown, str(qid), v, count))
    if runid is not None:
        out.append(f"{'runid':<22s}\tall\t{runid}")
    for key, shown, count in names:
        if count and num_rel_all is not None and key.split("(")[0] == "num_rel":
            v = float(num_rel_all)
        elif count:
            v = float(sum(x for x in result.per_query[key].tolist() if not math.isnan(x)))
        else:
            v = float(result.mean[key])
        if not math.isnan(v):
            out.append(line(shown, "all", v, count))
    return "\n".join(out) + "\n"
