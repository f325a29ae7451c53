"""trec_eval 9 vs trec_eval 10: the two rules of trec_eval 10.0 besides the score precision.

1. Recall-level cut-offs of ``iprec_at_recall`` and ``11pt_avg`` (measure option
   ``recall_cut``): trec_eval 9 turns recall level x into c = ``(long)(x R + 0.9)`` relevant
   documents, trec_eval 10 into c = ``lround(x R)`` (m_iprec_at_recall.c, m_11pt_avg.c).
2. ``-c`` (preset field ``missing``): trec_eval 9 scores a query missing from the run 0 and
   ``-q`` prints no line for it; trec_eval 10 evaluates it against a ranking of one unjudged
   document, ``ceci_nest_pas_un_docno``, resets its num_ret (and RBP residual) to 0 and prints
   it (trec_eval.c).

Oracles: pytrec_eval (trec_eval 9's code) for the trec_eval 9 rules, and for trec_eval 10's
``-c`` given the very ranking trec_eval 10 builds; a slow transcription of trec_eval's reverse
loop over the ranking (below) with C's own ``lround`` (libm, through ctypes) for the recall
cut-offs; hand-derived values for a known case. There is no trec_eval 10 build on PyPI to run.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

from ndcglab.errors import ConventionError
from ndcglab.measures import evaluate_trec, get_preset, parse_measure

from .test_trec_habits import _cli

pytrec_eval = pytest.importorskip("pytrec_eval")

BOGUS = "ceci_nest_pas_un_docno"  # trec_eval.c's bogus_ranking for a missing topic


# ================================================================= the reference loop
def _libm_lround():
    """C's ``lround`` from the C library (None where it cannot be loaded)."""
    name = ctypes.util.find_library("m")
    try:
        lib = ctypes.CDLL(name)
        f = lib.lround
    except (OSError, AttributeError, TypeError):  # pragma: no cover - platform without libm
        return None
    f.argtypes = [ctypes.c_double]
    f.restype = ctypes.c_long
    return f


_LROUND = _libm_lround()


def c_lround(x: float) -> int:
    """C99 ``lround``: the nearest integer, halves away from zero (libm's own where available,
    else the exact decimal value of the double rounded half up; here x >= 0)."""
    if _LROUND is not None:
        return int(_LROUND(x))
    return int(Decimal(x).quantize(Decimal(1), rounding=ROUND_HALF_UP))  # pragma: no cover


def c_trunc_09(x: float) -> int:
    """trec_eval 9's ``(long) (x + 0.9)``: the double x + 0.9 truncated (x >= 0)."""
    return int(x + 0.9)


def iprec_reference(rels: list[bool], num_rel: int, levels: list[float], rule: str) -> list[float]:
    """trec_eval's te_calc_iprec_at_recall, line by line: ``rels`` = relevance of the retrieved
    documents in ranking order (num_ret >= 1), ``num_rel`` = R, ``levels`` ascending. Returns
    the interpolated precision at each level (11pt_avg is their mean over 0.0, 0.1, ..., 1.0)."""
    cut = c_lround if rule == "round" else c_trunc_09
    cutoffs = [cut(x * num_rel) for x in levels]
    values = [0.0] * len(levels)
    num_ret = len(rels)
    num_rel_ret = sum(rels)
    current_cut = len(levels) - 1
    while current_cut >= 0 and cutoffs[current_cut] > num_rel_ret:
        current_cut -= 1
    precis = num_rel_ret / num_ret
    int_precis = precis
    rel_so_far = num_rel_ret
    i = num_ret
    while i > 0 and rel_so_far > 0:
        precis = rel_so_far / i
        if int_precis < precis:
            int_precis = precis
        if rels[i - 1]:
            while current_cut >= 0 and rel_so_far == cutoffs[current_cut]:
                values[current_cut] = int_precis
                current_cut -= 1
            rel_so_far -= 1
        i -= 1
    while current_cut >= 0:
        values[current_cut] = int_precis
        current_cut -= 1
    return values


def test_reference_lround_is_c_lround():
    assert [c_lround(x) for x in (0.5, 1.5, 2.5, 1.1, 1.4999999999999998)] == [1, 2, 3, 1, 1]
    assert c_lround(0.49999999999999994) == 0  # floor(x + 0.5) would give 1
    assert [c_trunc_09(x) for x in (0.0, 0.1, 1.1, 1.0)] == [0, 1, 2, 1]


# ================================================================= 1. recall_cut
#: 11 relevant documents d0..d10 and 5 non-relevant n0..n4, ranked d0, n0..n4, d1..d10
KNOWN_QRELS = {"q": {**{f"d{i}": 1 for i in range(11)}, **{f"n{i}": 0 for i in range(5)}}}
_ORDER = ["d0", *(f"n{i}" for i in range(5)), *(f"d{i}" for i in range(1, 11))]
KNOWN_RUN = {"q": {d: float(100 - i) for i, d in enumerate(_ORDER)}}


def test_known_case_trec_eval9_is_pytrec_eval_and_trec_eval10_is_rounded():
    """Level 0.1, R = 11: trec_eval 9 takes c = (long)(1.1 + 0.9) = 2, the 2nd relevant document
    (rank 7: interpolated precision max_j>=2 j/(j+5) = 11/16 = 0.6875); trec_eval 10 takes
    c = lround(1.1) = 1, the first relevant document at rank 1: 1.0."""
    ref = pytrec_eval.RelevanceEvaluator(KNOWN_QRELS, {"iprec_at_recall", "11pt_avg"})
    want9 = ref.evaluate(KNOWN_RUN)["q"]
    specs = ["iprec(level=0.1)", "iprec_11pt"]
    r9 = evaluate_trec(KNOWN_QRELS, KNOWN_RUN, specs, preset="trec_eval")
    r10 = evaluate_trec(KNOWN_QRELS, KNOWN_RUN, specs, preset="trec_eval10")
    assert want9["iprec_at_recall_0.10"] == 0.6875
    assert r9.mean["iprec(level=0.1)"] == want9["iprec_at_recall_0.10"]
    assert r9.mean["iprec_11pt"] == pytest.approx(want9["11pt_avg"], abs=1e-15)
    assert r10.mean["iprec(level=0.1)"] == 1.0
    # 11pt under trec_eval 10: c = lround(11 x) = 0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11; c <= 1 is
    # the first relevant document (1.0), every other c gives 11/16
    assert r10.mean["iprec_11pt"] == pytest.approx((2 * 1.0 + 9 * 11 / 16) / 11, abs=1e-15)
    # under trec_eval 9: only c(0.0) = (long)0.9 = 0 reaches the first document
    assert want9["11pt_avg"] == pytest.approx((1.0 + 10 * 11 / 16) / 11, abs=1e-15)
    # the rule is a measure option: explicit under any preset
    explicit = evaluate_trec(
        KNOWN_QRELS, KNOWN_RUN, ["iprec(level=0.1,recall_cut=round)"], preset="trec_eval"
    )
    assert explicit.mean["iprec(level=0.1,recall_cut=round)"] == 1.0
    back = evaluate_trec(
        KNOWN_QRELS, KNOWN_RUN, ["iprec(level=0.1,recall_cut=trunc)"], preset="trec_eval10"
    )
    assert back.mean["iprec(level=0.1,recall_cut=trunc)"] == 0.6875


#: levels: trec_eval's 11, quarters, eighths and the 0.05 grid (x R lands on .5 and on .05)
LEVELS = sorted({round(i / 20, 2) for i in range(21)} | {0.125, 0.375, 0.625, 0.875})


def _name(spec: str) -> str:
    """The printed name of a measure spec (``iprec(level=0.0)`` prints ``iprec(level=0)``)."""
    return str(parse_measure(spec))


def _random_cases(seed: int, n: int) -> tuple[dict, dict, dict]:
    """``n`` queries: a ranking of 1..40 documents (relevant, judged non-relevant or unjudged,
    binary or graded labels), plus 0..10 relevant documents the run did not retrieve."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    rels: dict[str, list[bool]] = {}
    for q in range(n):
        qid = f"q{q:04d}"
        length = int(rng.integers(1, 41))
        graded = bool(rng.random() < 0.5)
        p_rel = float(rng.uniform(0.05, 0.9))
        judged: dict[str, int] = {}
        ranking: list[bool] = []
        for i in range(length):
            doc = f"r{i}"
            u = rng.random()
            if u < p_rel:
                judged[doc] = int(rng.integers(1, 4)) if graded else 1
                ranking.append(True)
            elif u < p_rel + (1 - p_rel) * 0.7:
                judged[doc] = 0
                ranking.append(False)
            else:
                ranking.append(False)  # not in the qrels: unjudged, not relevant
        for j in range(int(rng.integers(0, 11))):
            judged[f"u{j}"] = int(rng.integers(1, 4)) if graded else 1
        if not judged:
            judged["u0"] = 1
        qrels[qid] = judged
        run[qid] = {f"r{i}": float(length - i) for i in range(length)}  # no ties
        rels[qid] = ranking
    return qrels, run, rels


@pytest.mark.parametrize("seed", [0, 1])
def test_recall_cut_equals_the_reference_loop_for_both_rules(seed):
    qrels, run, rels = _random_cases(seed, 300)
    eleven = [i / 10 for i in range(11)]
    stats = {"half": 0, "below_tenth": 0, "rules_differ": 0, "values_differ": 0}
    got = {}
    for rule in ("trunc", "round"):
        got[rule] = evaluate_trec(
            qrels, run, [f"iprec(level={x},recall_cut={rule})" for x in LEVELS]
            + [f"iprec_11pt(recall_cut={rule})"], preset="trec_eval"
        )  # fmt: skip
    for i, q in enumerate(got["trunc"].query_ids):
        num_rel = sum(1 for v in qrels[q].values() if v >= 1)
        for rule in ("trunc", "round"):
            res = got[rule]
            want = iprec_reference(rels[q], num_rel, LEVELS, rule)
            for x, w in zip(LEVELS, want):
                v = res.per_query[_name(f"iprec(level={x},recall_cut={rule})")][i]
                assert v == pytest.approx(w, abs=1e-15), (q, x, rule)
            w11 = math.fsum(iprec_reference(rels[q], num_rel, eleven, rule)) / 11
            assert res.per_query[f"iprec_11pt(recall_cut={rule})"][i] == pytest.approx(
                w11, abs=1e-12
            )
        for x in LEVELS:
            frac = x * num_rel - math.floor(x * num_rel)
            stats["half"] += frac == 0.5
            stats["below_tenth"] += 0 < frac < 0.1
            stats["rules_differ"] += c_lround(x * num_rel) != c_trunc_09(x * num_rel)
            a = got["trunc"].per_query[_name(f"iprec(level={x},recall_cut=trunc)")][i]
            b = got["round"].per_query[_name(f"iprec(level={x},recall_cut=round)")][i]
            stats["values_differ"] += a != b
    # the cases reach what tells the rules apart: x R on .5 (both round up, lround exactly)
    # and x R just above an integer (trec_eval 9 rounds up, trec_eval 10 down)
    assert min(stats.values()) > 20, stats
    # the same measures under the presets: trec_eval = trunc, trec_eval10 = round
    for preset, rule in (("trec_eval", "trunc"), ("trec_eval10", "round")):
        res = evaluate_trec(qrels, run, ["iprec(level=0.15)", "iprec_11pt"], preset=preset)
        np.testing.assert_array_equal(
            res.per_query["iprec_11pt"], got[rule].per_query[f"iprec_11pt(recall_cut={rule})"]
        )
        np.testing.assert_array_equal(
            res.per_query["iprec(level=0.15)"],
            got[rule].per_query[f"iprec(level=0.15,recall_cut={rule})"],
        )


@pytest.mark.parametrize("seed", [0, 1])
def test_trunc_rule_equals_pytrec_eval_on_the_same_cases(seed):
    qrels, run, _ = _random_cases(seed, 300)
    names = {x: f"iprec_at_recall_{x:.2f}" for x in LEVELS}
    assert len(set(names.values())) == len(LEVELS)
    param = ",".join(repr(x) for x in LEVELS)
    ev = pytrec_eval.RelevanceEvaluator(qrels, {f"iprec_at_recall.{param}", "11pt_avg"})
    ref = ev.evaluate(run)
    res = evaluate_trec(qrels, run, [f"iprec(level={x})" for x in LEVELS] + ["iprec_11pt"])
    for i, q in enumerate(res.query_ids):
        for x, name in names.items():
            assert res.per_query[_name(f"iprec(level={x})")][i] == pytest.approx(
                ref[q][name], abs=1e-15
            ), (q, x)
        assert res.per_query["iprec_11pt"][i] == pytest.approx(ref[q]["11pt_avg"], abs=1e-12)


def test_recall_cut_option_is_read_and_checked():
    m = parse_measure("iprec(level=0.1,recall_cut=round)")
    assert str(m) == "iprec(level=0.1,recall_cut=round)"
    assert parse_measure(str(m)) == m
    assert parse_measure("iprec_11pt(recall_cut=ROUND)").get("recall_cut") == "round"
    with pytest.raises(ConventionError, match=r"recall_cut .*'bogus'.*known: trunc, round"):
        parse_measure("iprec(level=0.1,recall_cut=bogus)")
    with pytest.raises(ConventionError, match=r"Fix: e.g. iprec_11pt\(recall_cut=round\)"):
        parse_measure("iprec_11pt(recall_cut=0.5)")
    # the presets: trec_eval (9) truncates, trec_eval10 rounds; every other preset truncates
    assert parse_measure("iprec(level=0.1)").resolve("trec_eval").get("recall_cut") == "trunc"
    assert parse_measure("iprec(level=0.1)").resolve("trec_eval10").get("recall_cut") == "round"
    assert parse_measure("iprec_11pt").resolve("trec_eval10").get("recall_cut") == "round"
    assert parse_measure("iprec_11pt").resolve("standard").get("recall_cut") == "trunc"
    assert get_preset("trec_eval10").as_dict()["recall_cut"] == "round"
    # the score precision of trec_eval 10 alone keeps trec_eval 9's other rules
    p = get_preset("trec_eval(scores=trec_eval10)")
    assert p.score_precision == "float64" and p.default("iprec", "recall_cut") == "trunc"
    assert p.missing == "zero"
    res = evaluate_trec(KNOWN_QRELS, KNOWN_RUN, ["iprec(level=0.1)"], score_precision="trec_eval10")
    assert res.mean["iprec(level=0.1)"] == 0.6875


def test_explain_names_the_recall_cut():
    from ndcglab.analysis import explain

    e = explain(KNOWN_QRELS, KNOWN_RUN, "trec_eval", "trec_eval10", measure="iprec(level=0.1)")
    assert e.total == 1.0 - 0.6875
    assert e.contributions["recall_cut"] == e.total
    assert set(e.contributions) == {"recall_cut", "score_precision"}  # never "missing"
    why = next(o.why for o in e.options if o.key == "recall_cut")
    assert "recall_cut=trunc (trec_eval) vs round (trec_eval10)" in why


# ================================================================= 2. -c: missing queries
def _missing_case() -> tuple[dict, dict]:
    rng = np.random.default_rng(7)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(12):
        qid = f"t{q:02d}"
        docs = [f"d{j}" for j in range(20)]
        qrels[qid] = {d: int(rng.choice(4, p=[0.5, 0.25, 0.15, 0.1])) for d in docs[:14]}
        if q in (3, 8):
            qrels[qid] = {d: 0 for d in docs[:5]}  # no relevant document
        if q not in (2, 3, 9):  # t02, t03, t09 are missing from the run
            perm = rng.permutation(docs)[: int(rng.integers(3, 18))]
            run[qid] = {d: float(rng.integers(0, 40)) / 8 for d in perm}
    return qrels, run


#: pytrec_eval name -> ndcglab spec
MISSING_PAIRS = {
    "num_rel": "num_rel",
    "num_ret": "num_ret",
    "num_rel_ret": "num_rel_ret",
    "map": "map",
    "P_5": "p@5",
    "ndcg": "ndcg",
    "ndcg_cut_10": "ndcg@10",
    "recip_rank": "mrr",
    "bpref": "bpref",
    "infAP": "infap",
    "Rprec": "rprec",
    "recall_10": "recall@10",
    "success_1": "success@1",
    "gm_map": "gm_map",
}
EXTRA = ["rbp_residual", "rbp", "idcg", "judged@5", "err@10"]


def _means(values: dict[str, np.ndarray]) -> dict[str, float]:
    return {
        k: math.exp(np.mean(v)) if k == "gm_map" else float(np.mean(v)) for k, v in values.items()
    }


def test_complete_trec_eval9_fills_zeros():
    qrels, run = _missing_case()
    missing = sorted(q for q in qrels if q not in run)
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(MISSING_PAIRS)).evaluate(run)
    res = evaluate_trec(qrels, run, [*MISSING_PAIRS.values(), *EXTRA], complete=True)
    assert list(res.query_ids) == sorted(qrels)
    assert res.convention["missing"] == "zero"
    want = {}
    for tname, ours in MISSING_PAIRS.items():
        fill = math.log(1e-5) if tname == "gm_map" else 0.0
        want[ours] = np.array([ref[q][tname] if q in ref else fill for q in res.query_ids])
        np.testing.assert_allclose(res.per_query[ours], want[ours], rtol=0, atol=1e-12)
    for name, mean in _means(want).items():
        assert res.mean[name] == pytest.approx(mean, rel=1e-12, abs=1e-15), name
    at = np.isin(res.query_ids, missing)
    for name in EXTRA:
        assert (res.per_query[name][at] == 0.0).all(), name


def test_complete_trec_eval10_evaluates_one_unjudged_document():
    """The oracle: pytrec_eval given the ranking trec_eval 10 builds for a missing topic (the
    one document ceci_nest_pas_un_docno, score 1), then num_ret set to 0 as trec_eval.c does."""
    qrels, run = _missing_case()
    missing = sorted(q for q in qrels if q not in run)
    bogus = {**run, **{q: {BOGUS: 1.0} for q in missing}}
    ref = pytrec_eval.RelevanceEvaluator(qrels, set(MISSING_PAIRS)).evaluate(bogus)
    for q in missing:
        ref[q]["num_ret"] = 0.0
    res = evaluate_trec(
        qrels, run, [*MISSING_PAIRS.values(), *EXTRA], preset="trec_eval10", complete=True
    )
    assert list(res.query_ids) == sorted(qrels)
    assert res.convention["missing"] == "unjudged" and BOGUS in res.convention["queries"]
    want = {}
    for tname, ours in MISSING_PAIRS.items():
        want[ours] = np.array([ref[q][tname] for q in res.query_ids])
        np.testing.assert_allclose(res.per_query[ours], want[ours], rtol=0, atol=1e-12)
    for name, mean in _means(want).items():
        assert res.mean[name] == pytest.approx(mean, rel=1e-12, abs=1e-15), name
    at = np.isin(res.query_ids, missing)
    # by hand: a missing topic keeps its R and its ideal DCG (linear gain, log2 discount) ...
    for i in np.flatnonzero(at):
        q = res.query_ids[i]
        gains = sorted((v for v in qrels[q].values() if v > 0), reverse=True)
        assert res.per_query["num_rel"][i] == len(gains) == ref[q]["num_rel"]
        idcg = math.fsum(g / math.log2(r + 2) for r, g in enumerate(gains))
        assert res.per_query["idcg"][i] == pytest.approx(idcg, rel=1e-14, abs=0)
    assert (res.per_query["num_rel"][at] > 0).any()  # the case has R > 0 for a missing topic
    # ... the one unjudged document gives 0 everywhere; num_ret and the RBP residual (1 before
    # trec_eval's clean-up) are reset to 0
    for name in ("num_ret", "num_rel_ret", "map", "p@5", "ndcg", "rbp", "rbp_residual",
                 "judged@5", "err@10", "mrr", "bpref", "infap"):  # fmt: skip
        assert (res.per_query[name][at] == 0.0).all(), name
    assert res.mean["rbp_residual"] == pytest.approx(
        float(np.mean(res.per_query["rbp_residual"])), abs=1e-15
    )
    # the queries of the run are evaluated exactly as under trec_eval 9's -c ...
    nine = evaluate_trec(
        qrels, run, [*MISSING_PAIRS.values(), *EXTRA], preset="trec_eval10(scores=float64)",
        complete=True,
    )  # fmt: skip
    plain = evaluate_trec(qrels, run, [*MISSING_PAIRS.values(), *EXTRA], preset="trec_eval10")
    for name in plain.per_query:
        # (sums over the longer arrays may round in the last bit)
        np.testing.assert_allclose(
            res.per_query[name][~at], plain.per_query[name], rtol=1e-14, atol=1e-15
        )
    # ... and the gm_map mean is the same under both rules (AP 0 -> log(1e-5) either way)
    z = evaluate_trec(qrels, run, ["gm_map"], preset="trec_eval(scores=float64)", complete=True)
    assert res.mean["gm_map"] == pytest.approx(z.mean["gm_map"], rel=1e-12)
    assert nine.mean == pytest.approx(res.mean, rel=1e-14, abs=1e-15)


def test_complete_trec_eval10_tie_range_and_judged_only():
    qrels, run = _missing_case()
    missing = sorted(q for q in qrels if q not in run)
    res = evaluate_trec(
        qrels, run, ["num_ret", "rbp_residual", "map"], preset="trec_eval10", complete=True,
        tie_range=True,
    )  # fmt: skip
    at = np.isin(res.query_ids, missing)
    for name in ("num_ret", "rbp_residual"):
        tr = res.tie_range[name]
        assert (tr.low[at] == 0.0).all() and (tr.high[at] == 0.0).all()
        assert tr.mean_low == pytest.approx(float(np.mean(tr.low)), abs=1e-15)
        assert tr.mean_high == pytest.approx(float(np.mean(tr.high)), abs=1e-15)
    # -J drops the unjudged stand-in document (trec_eval 10 too): an empty ranking
    j = evaluate_trec(qrels, run, ["num_ret", "num_rel", "map"], preset="trec_eval10",
                      complete=True, judged_only=True)  # fmt: skip
    assert (j.per_query["num_ret"][at] == 0).all() and (j.per_query["map"][at] == 0).all()
    assert (j.per_query["num_rel"][at] == res_num_rel(qrels, missing)).all()


def res_num_rel(qrels: dict, queries: list[str]) -> np.ndarray:
    return np.array([sum(1 for v in qrels[q].values() if v >= 1) for q in queries], float)


# ================================================================= -c -q on the command line
def _write(tmp_path, qrels: dict, run: dict) -> tuple[str, str]:
    qp = tmp_path / "qrels.txt"
    qp.write_text("".join(f"{q} 0 {d} {r}\n" for q, docs in qrels.items() for d, r in docs.items()))
    rp = tmp_path / "run.txt"
    lines = []
    for q, docs in run.items():
        for k, (d, s) in enumerate(sorted(docs.items(), key=lambda t: -t[1])):
            lines.append(f"{q} Q0 {d} {k + 1} {s} sys\n")
    rp.write_text("".join(lines))
    return str(qp), str(rp)


def _lines(
    per: dict, queries: list[str], names: list[str], n_all: int, num_rel_all: int | None = None
) -> list[str]:
    """trec_eval -q's lines (meas_print_single.c's formats) from pytrec_eval's values: the
    counts summed in the ``all`` line, map averaged over ``n_all`` queries (-c); under -c the
    ``all`` num_rel is ``num_rel_all``, the qrels lines with a relevance above 0 (m_num_rel.c's
    te_calc_avg_num_rel, trec_eval 9 and 10 alike)."""
    out = []
    for q in queries:
        out.append(f"{'num_rel':<22s}\t{q}\t{int(per[q]['num_rel'])}")
        out.append(f"{'map':<22s}\t{q}\t{per[q]['map']:6.4f}")
    total = sum(int(per[q]["num_rel"]) for q in queries) if num_rel_all is None else num_rel_all
    out.append(f"{'num_rel':<22s}\tall\t{total}")
    out.append(f"{'map':<22s}\tall\t{math.fsum(per[q]['map'] for q in queries) / n_all:6.4f}")
    return out


def test_cli_c_q_prints_missing_queries_under_trec_eval10_only(tmp_path):
    qrels, run = _missing_case()
    missing = sorted(q for q in qrels if q not in run)
    qp, rp = _write(tmp_path, qrels, run)
    args = ("--qrels", qp, "--run", rp, "-q", "-c", "-m", "num_rel", "-m", "map")
    ten = _cli(*args, "--preset", "trec_eval10")
    assert ten.returncode == 0, ten.stderr
    bogus = {**run, **{q: {BOGUS: 1.0} for q in missing}}
    per10 = pytrec_eval.RelevanceEvaluator(qrels, {"num_rel", "map"}).evaluate(bogus)
    assert ten.stdout.splitlines() == _lines(per10, sorted(qrels), ["num_rel", "map"], len(qrels))
    assert f"num_rel               \t{missing[0]}\t" in ten.stdout
    nine = _cli(*args)
    assert nine.returncode == 0, nine.stderr
    per9 = pytrec_eval.RelevanceEvaluator(qrels, {"num_rel", "map"}).evaluate(run)
    positive = sum(1 for q in qrels.values() for v in q.values() if int(v) > 0)
    assert nine.stdout.splitlines() == _lines(
        per9, sorted(run), ["num_rel", "map"], len(qrels), num_rel_all=positive
    )
    assert all(f"\t{q}\t" not in nine.stdout for q in missing)
    # the all line of num_rel under -c: every qrels line with a relevance above 0, in trec_eval
    # 9 as in 10 (the missing topics' relevant documents included in both)
    want_extra = int(res_num_rel(qrels, missing).sum())
    assert want_extra > 0
    last = {x.split("\t")[0].strip(): x.split("\t")[2] for x in ten.stdout.splitlines()
            if "\tall\t" in x}  # fmt: skip
    last9 = {x.split("\t")[0].strip(): x.split("\t")[2] for x in nine.stdout.splitlines()
             if "\tall\t" in x}  # fmt: skip
    assert int(last["num_rel"]) == int(last9["num_rel"]) == positive
    assert last["map"] == last9["map"]
    # a bad rule: one error line naming the known rules and a fix
    bad = _cli("--qrels", qp, "--run", rp, "-m", "iprec(level=0.1,recall_cut=bogus)")
    assert bad.returncode == 2 and bad.stdout == ""
    err = bad.stderr.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("ndcglab: error: unknown recall_cut rule 'bogus'")
    assert (
        "known: trunc, round" in err[0] and "Fix: e.g. iprec(level=0.1,recall_cut=round)" in err[0]
    )
    # --score-precision trec_eval10 is the score precision only: trec_eval 9's -c output
    sp = _cli(*args, "--score-precision", "trec_eval10")
    assert sp.returncode == 0 and all(f"\t{q}\t" not in sp.stdout for q in missing)


def test_compare_warns_what_a_missing_topic_scores_under_each_rule() -> None:
    """``evaluate_runs(complete=True)`` (``compare -c``) says what a topic a run misses
    scores: 0 everywhere (trec_eval 9) or the one-unjudged-document ranking (trec_eval 10)."""
    import warnings

    from ndcglab.analysis.runs import evaluate_runs

    q = {"1": {"a": 1, "b": 0}, "2": {"c": 1}}
    runs = {"A": {"1": {"a": 1.0, "b": 0.5}}, "B": {"1": {"b": 1.0}, "2": {"c": 1.0}}}
    said = {}
    for preset in ("trec_eval", "trec_eval10"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = evaluate_runs(q, runs, ["num_rel"], complete=True, preset=preset)
        said[preset] = " ".join(str(w.message) for w in caught)
        assert "A: 2" in said[preset]
        # num_rel of topic 2 for run A: 0 (trec_eval 9) or its one relevant document (10)
        a = res.results["A"]
        got = dict(zip(a.query_ids.tolist(), a.per_query["num_rel"].tolist()))
        assert got["2"] == (1.0 if preset == "trec_eval10" else 0.0)
    assert "score 0 in every measure" in said["trec_eval"]
    assert "one unjudged document" in said["trec_eval10"]
