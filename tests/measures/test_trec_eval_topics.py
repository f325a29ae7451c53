"""ndcglab.treceval.evaluate_topics (topics in memory) against the same engine's command-line
output for the same data written to files (``-q``, every measure of ``all_trec``)."""

from __future__ import annotations

import random

import pytest

from ndcglab.treceval import (
    JudgedTopic,
    Options,
    RunTopic,
    TrecEvalError,
    evaluate_topics,
    run_trec_eval,
    to_float32,
)


def test_per_topic_values_equal_the_printed_lines(tmp_path):
    rng = random.Random(7)
    qrels_lines, run_lines = [], []
    judged, runs = [], []
    for q in range(12):
        qid = f"{q:02d}"
        docs = [f"D{i}" for i in range(rng.randint(2, 30))]
        rels = {
            d: rng.choice([-1, 0, 1, 2, 3]) for d in rng.sample(docs, rng.randint(1, len(docs)))
        }
        qrels_lines += [f"{qid} 0 {d} {r}" for d, r in rels.items()]
        judged.append(JudgedTopic(qid.encode(), [d.encode() for d in rels], list(rels.values())))
        ranked = {d: round(rng.random(), 1) for d in rng.sample(docs, rng.randint(1, len(docs)))}
        run_lines += [f"{qid} Q0 {d} 0 {s} tag" for d, s in ranked.items()]
        runs.append(
            RunTopic(
                qid.encode(), [d.encode() for d in ranked], [to_float32(s) for s in ranked.values()]
            )
        )
    (tmp_path / "qrels").write_text("\n".join(qrels_lines) + "\n")
    (tmp_path / "run").write_text("\n".join(run_lines) + "\n")
    for level in (1, 2):
        text = run_trec_eval(
            [
                "-q",
                "-l",
                str(level),
                "-m",
                "all_trec",
                str(tmp_path / "qrels"),
                str(tmp_path / "run"),
            ]
        )
        printed: dict[str, dict[str, str]] = {}
        for line in text.splitlines():
            name, topic, value = line.split("\t")
            if topic != "all" and name.strip() not in ("runid",):
                printed.setdefault(topic, {})[name.strip()] = value
        got = evaluate_topics(Options(measures=["all_trec"], relevance_level=level), judged, runs)
        assert got.keys() == printed.keys()
        for topic, row in printed.items():
            # -q prints no per-topic line for num_q and the geometric means (logs here)
            assert set(got[topic]) - set(row) == {"num_q", "gm_map", "gm_bpref"}, topic
            for name, value in row.items():
                if name == "relstring":
                    assert got[topic][name] == 0.0
                elif name.startswith("num_"):
                    assert got[topic][name] == int(value), (topic, name)
                else:
                    assert f"{got[topic][name]:6.4f}" == value, (topic, name)


def test_only_qrels_are_read():
    with pytest.raises(TrecEvalError, match="reads qrels only"):
        evaluate_topics(Options(rel_format="prefs"), [], [])
