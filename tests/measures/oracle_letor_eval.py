"""An independent, slow Python transcription of the official LETOR evaluation scripts'
rules (Eval-Score-3.0.pl and Eval-Score-4.0.pl), used as an oracle on real data.

Written from the scripts' rules as docs/measures.md (section 7, letor3 / letor4) states them, not
from ndcglab's implementation:

* each line is ``<label> qid:<qid> ... #docid = <docid> ...``; documents of a query are stored in
  a table keyed by docid, so a docid repeated within a query keeps the *later* line (its label,
  its prediction and its line number);
* a query's documents are taken in file order (line number), then sorted by prediction,
  descending, with a stable sort (equal predictions keep file order);
* gain table {"0": 0, "1": 1, "2": 3}, relevant labels {"1", "2"}; other labels gain 0 and are not
  relevant (labels are looked up as the text of the file);
* DCG: positions 1 and 2 undiscounted, position r >= 3 multiplied by log(2)/log(r);
  the ideal list is the labels sorted by gain, descending;
* NDCG@k = DCG@k / IDCG@k, 0 when IDCG@k = 0, only for k <= n (the list's length); for k > n the
  value is missing and counts as 0 in the average over queries;
* P@k: 4.0 pads positions beyond the list with irrelevant documents (divides by k); 3.0 has no
  value for k > n (counts as 0 in the average);
* AP = sum over relevant positions r of (relevant in top r)/r, divided by the number of relevant
  documents in the list, 0 if none;
* MeanNDCG (4.0 only) = mean of NDCG@1..NDCG@n of the query;
* every average is over all queries of the file.
"""

from __future__ import annotations

import gzip
import math
import re
from pathlib import Path

GAIN = {"0": 0.0, "1": 1.0, "2": 3.0}
RELEVANT = {"1", "2"}
TOP = 10

_LINE = re.compile(r"^(\d+) qid:(\S+).*?#docid = (\S+)")


def read_lines(path: str | Path) -> list[str]:
    p = Path(path)
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt", encoding="utf-8", newline=None) as fh:
        return [line.rstrip("\r\n") for line in fh]


def first_feature(lines: list[str], index: int = 1) -> list[float]:
    """The value of feature ``index`` on every line, as written (parsed as a double)."""
    out = []
    key = f"{index}:"
    for line in lines:
        body = line.split("#", 1)[0].split()
        out.append(next((float(t[len(key) :]) for t in body if t.startswith(key)), 0.0))
    return out


def _dcg(rates: list[str], top: int, pad: bool) -> list[float]:
    dcg = [GAIN.get(rates[0], 0.0)]
    for i in range(1, top):
        if i < len(rates):
            r = rates[i]
        elif pad:
            r = "0"
        else:
            break
        g = GAIN.get(r, 0.0)
        if i < 2:
            dcg.append(dcg[i - 1] + g)
        else:
            dcg.append(dcg[i - 1] + g * math.log(2.0) / math.log(i + 1.0))
    return dcg


def _ndcg(rates: list[str], top: int, pad: bool) -> list[float]:
    dcg = _dcg(rates, top, pad)
    ideal = sorted(rates, key=lambda r: GAIN.get(r, 0.0), reverse=True)
    best = _dcg(ideal, top, pad)
    out = []
    for i in range(min(top, len(rates))):
        out.append(dcg[i] / best[i] if best[i] != 0 else 0.0)
    return out


def _precision(rates: list[str], top: int, pad: bool) -> list[float]:
    out = []
    hits = 0
    for i in range(top):
        if i < len(rates):
            r = rates[i]
        elif pad:
            r = "0"
        else:
            break
        if r in RELEVANT:
            hits += 1
        out.append(hits / (i + 1))
    return out


def _ap(rates: list[str]) -> float:
    hits = 0
    s = 0.0
    for i, r in enumerate(rates):
        if r in RELEVANT:
            hits += 1
            s += hits / (i + 1)
    return s / hits if hits else 0.0


def evaluate_letor(lines: list[str], predictions: list[float], version: str = "4.0") -> dict:
    """Per-query values and averages, the way the LETOR ``version`` script computes them.

    Returns ``{"queries": {qid: {"P": [...], "MAP": x, "NDCG": [...], "MeanNDCG": y}},
    "P": [10 averages], "MAP": x, "NDCG": [10 averages], "MeanNDCG": y (4.0)}``.
    """
    if len(predictions) < len(lines):
        raise ValueError("fewer predictions than lines")
    table: dict[str, dict[str, dict]] = {}
    order_of_qids: list[str] = []
    for num, (line, pred) in enumerate(zip(lines, predictions), start=1):
        m = _LINE.match(line)
        if not m:
            raise ValueError(f"cannot parse line {num}: {line[:60]}")
        label, qid, did = m.group(1), m.group(2), m.group(3)
        if qid not in table:
            table[qid] = {}
            order_of_qids.append(qid)
        table[qid][did] = {"label": label, "pred": float(pred), "line": num}
    pad = version == "4.0"
    per_query: dict[str, dict] = {}
    for qid in order_of_qids:
        docs = sorted(table[qid].values(), key=lambda d: d["line"])
        docs = sorted(docs, key=lambda d: -d["pred"])  # stable
        rates = [d["label"] for d in docs]
        res = {"MAP": _ap(rates), "P": _precision(rates, TOP, pad)}
        if version == "4.0":
            all_ndcg = _ndcg(rates, len(rates), pad)
            res["NDCG"] = all_ndcg[:TOP]
            res["MeanNDCG"] = sum(all_ndcg) / len(all_ndcg)
        else:
            res["NDCG"] = _ndcg(rates, TOP, pad)
        per_query[qid] = res
    nq = len(per_query)
    out: dict = {"queries": per_query}
    out["P"] = [
        sum(q["P"][i] if i < len(q["P"]) else 0.0 for q in per_query.values()) / nq
        for i in range(TOP)
    ]
    out["NDCG"] = [
        sum(q["NDCG"][i] if i < len(q["NDCG"]) else 0.0 for q in per_query.values()) / nq
        for i in range(TOP)
    ]
    out["MAP"] = sum(q["MAP"] for q in per_query.values()) / nq
    if version == "4.0":
        out["MeanNDCG"] = sum(q["MeanNDCG"] for q in per_query.values()) / nq
    return out
