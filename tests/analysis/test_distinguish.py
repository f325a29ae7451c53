"""Distinguishability curves: the fast prefix kernel against ndcglab.measures.evaluate on
``dataset.permute_within_queries(seed).truncate(n)``, the stability statistics against a slow
loop written here, and the plots."""

from __future__ import annotations

import numpy as np
import pytest

from ndcglab.analysis.distinguish import DistinguishResult, distinguishability, make_grid
from ndcglab.data.dataset import RankingDataset
from ndcglab.errors import ConventionError, DataFormatError, EmptyQueryError
from ndcglab.measures import evaluate


def _dataset(seed: int = 0) -> tuple[RankingDataset, dict[str, np.ndarray]]:
    """Small lists (1..30 docs), labels 0..3, and two rankers stored as feature columns so that
    the oracle can recover the scores of any shuffled, truncated copy. Scores are float32 values
    (exact in the float32 features); ranker "tied" has many ties."""
    rng = np.random.default_rng(seed)
    lengths = np.array([1, 7, 30, 12, 25, 3])
    n = int(lengths.sum())
    y = rng.integers(0, 4, n).astype(float)
    y[:1] = 0.0  # the one-document list has no relevant document (empty query)
    smooth = (y + rng.normal(0, 1.5, n)).astype(np.float32).astype(np.float64)
    tied = np.round(rng.random(n) * 4).astype(np.float32).astype(np.float64)
    features = np.stack([smooth, tied], axis=1)
    doc_ids = np.array([f"d{(7 * i) % 11}" for i in range(n)], dtype=object)
    ds = RankingDataset.from_arrays(features, y, group=lengths, doc_ids=doc_ids)
    return ds, {"smooth": smooth, "tied": tied}


MEASURES = [
    "ndcg",
    "ndcg(discount=power:0.5)",
    "ndcg(discount=exp:2)",
    "ndcg@0.2n",
    "ndcg(rounding=floor)@0.3n",
    "ndcg@5",
    "ndcg(short=zero)@5",
    "dcg(discount=zipf)@3",
    "idcg@0.5n",
    "ndcg(ties=average)",
    "ndcg(ties=average,discount=power:0.5)@0.5n",
    "ndcg(ties=pessimistic)@4",
    "ndcg(ties=optimistic)",
    "ndcg(ties=docid,gain=linear)",
    "ndcg(ties=random:3)",
    "ndcg_beta",
    "ndcg(empty=skip,discount=zipf)",
    "ndcg(empty=one,gain=letor,discount=letor)@0.5n",
    "map",
    "p@5",
    "mrr",
]


def _oracle(ds, res: DistinguishResult, measures) -> np.ndarray:
    """(R, K, M, G, Q) by evaluating every truncated copy with ndcglab.measures.evaluate."""
    seeds = res.seeds if res.seeds is not None else [None]
    out = np.zeros_like(res.per_query)
    for r, seed in enumerate(seeds):
        shuffled = ds if seed is None else ds.permute_within_queries(seed)
        for gi, n in enumerate(res.grid.tolist()):
            part = shuffled.truncate(n)
            for k in range(len(res.rankers)):
                ev = evaluate(
                    part, part.features[:, k].astype(np.float64), measures, duplicates="keep"
                )
                for j, values in enumerate(ev.per_query.values()):  # in the order given
                    out[r, k, j, gi] = values
    return out


@pytest.mark.parametrize("repeats", [0, 2])
def test_prefix_values_match_evaluate_on_truncated_data(repeats: int) -> None:
    ds, scores = _dataset()
    res = distinguishability(
        ds, scores, MEASURES, grid="linear", points=12, repeats=repeats, seed=9
    )
    assert res.engines["ndcg"] == "fast" and res.engines["map"] == "evaluate"
    assert res.engines["ndcg(ties=random:3)"] == "evaluate"
    assert res.per_query.shape == (max(repeats, 1), 2, len(MEASURES), len(res.grid), 6)
    want = _oracle(ds, res, MEASURES)
    np.testing.assert_allclose(res.per_query, want, rtol=0, atol=1e-12, equal_nan=True)
    assert np.isnan(res.per_query[:, :, MEASURES.index("ndcg(empty=skip,discount=zipf)")]).any()


def test_keep_per_query_false_keeps_the_means() -> None:
    ds, scores = _dataset(4)
    full = distinguishability(ds, scores, ["ndcg", "ndcg(empty=skip)"], grid=[2, 9], repeats=2)
    lean = distinguishability(
        ds, scores, ["ndcg", "ndcg(empty=skip)"], grid=[2, 9], repeats=2, keep_per_query=False
    )
    assert lean.per_query is None
    np.testing.assert_allclose(lean.values, full.values)
    np.testing.assert_allclose(full.values, np.nanmean(full.per_query, axis=-1))
    assert lean.to_dict()["n_queries"] == 6


def test_engine_evaluate_gives_the_same_numbers() -> None:
    ds, scores = _dataset(1)
    ms = ["ndcg", "ndcg(ties=average)@0.5n", "ndcg(short=zero)@4"]
    fast = distinguishability(ds, scores, ms, grid=[1, 2, 5, 9, 30], repeats=1, seed=4)
    slow = distinguishability(
        ds, scores, ms, grid=[1, 2, 5, 9, 30], repeats=1, seed=4, engine="evaluate"
    )
    assert set(slow.engines.values()) == {"evaluate"}
    np.testing.assert_allclose(fast.per_query, slow.per_query, atol=1e-12)


def test_preset_fills_the_conventions() -> None:
    ds, scores = _dataset(2)
    res = distinguishability(ds, scores, ["ndcg@0.5n"], preset="sklearn", grid=[3, 30])
    assert res.conventions["ndcg@0.5n"] == (
        "ndcg(discount=log,empty=zero,gain=linear,rounding=ceil,ties=average)@0.5n"
    )
    want = _oracle(ds, res, ["ndcg(gain=linear,ties=average)@0.5n"])
    np.testing.assert_allclose(res.per_query, want, atol=1e-12)


def test_file_order_mean_is_the_mean_over_queries() -> None:
    ds, scores = _dataset(3)
    res = distinguishability(ds, scores, "ndcg", grid=[4, 10])
    assert res.order == "file" and res.seeds is None and res.n_repeats == 1
    part = ds.truncate(10)
    ev = evaluate(part, part.features[:, 0], "ndcg")
    assert res.curve("smooth")[-1] == pytest.approx(ev.mean["ndcg"])
    assert np.isnan(res.std()).all()


def test_make_grid() -> None:
    g = make_grid(5000, "log", 60)
    assert g[0] == 1 and g[-1] == 5000 and np.all(np.diff(g) > 0) and 40 <= len(g) <= 60
    lin = make_grid(100, "linear", 10, n_min=10)
    assert lin.tolist() == [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    with pytest.raises(ConventionError):
        make_grid(10, "cubic")


def test_bad_inputs_raise_project_errors() -> None:
    ds, scores = _dataset()
    with pytest.raises(DataFormatError):
        distinguishability(ds, {"a": np.zeros(3)}, "ndcg")
    with pytest.raises(ConventionError):
        distinguishability(ds, scores, "ndcg", engine="magic")
    with pytest.raises(EmptyQueryError, match="empty=zero, one or skip"):
        distinguishability(ds, scores, "ndcg(empty=error)", grid=[5])


# ----------------------------------------------------------------------------- stability
def _stable_by_loop(d: np.ndarray) -> np.ndarray:
    """For a (G,) difference curve: stable[i] = sign(d[i]) != 0 and sign(d[j]) == sign(d[i])
    for every j >= i."""
    g = len(d)
    out = np.zeros(g, dtype=bool)
    for i in range(g):
        s = np.sign(d[i])
        out[i] = s != 0 and all(np.sign(d[j]) == s for j in range(i, g))
    return out


def _handmade() -> DistinguishResult:
    """3 rankers, 4 repetitions, 6 sizes, one query: curves that cross at chosen places."""
    grid = np.array([1, 2, 4, 8, 16, 32])
    a = np.array(
        [
            [0.5, 0.6, 0.6, 0.7, 0.7, 0.8],
            [0.5, 0.4, 0.6, 0.7, 0.7, 0.8],
            [0.9, 0.6, 0.6, 0.7, 0.7, 0.8],
            [0.5, 0.6, 0.6, 0.7, 0.7, 0.8],
        ]
    )
    b = np.array(
        [
            [0.6, 0.5, 0.5, 0.6, 0.6, 0.7],
            [0.5, 0.5, 0.5, 0.6, 0.6, 0.7],
            [0.6, 0.5, 0.7, 0.6, 0.6, 0.7],
            [0.6, 0.5, 0.5, 0.6, 0.8, 0.7],
        ]
    )
    c = np.array(
        [
            [0.1, 0.2, 0.2, 0.3, 0.3, 0.3],
            [0.1, 0.5, 0.2, 0.3, 0.3, 0.3],
            [0.1, 0.2, 0.2, 0.3, 0.3, 0.3],
            [0.1, 0.2, 0.2, 0.3, 0.3, 0.3],
        ]
    )
    pq = np.stack([a, b, c], axis=1)[:, :, None, :, None]  # (R, K, M=1, G, Q=1)
    return DistinguishResult(
        rankers=("a", "b", "c"),
        measures=("ndcg",),
        conventions={"ndcg": "ndcg(...)"},
        grid=grid,
        order="shuffled",
        seeds=[1, 2, 3, 4],
        per_query=pq,
        query_ids=np.array(["q"], dtype=object),
    )


def test_pair_stability_matches_a_slow_loop() -> None:
    res = _handmade()
    vals = res.per_query[:, :, 0, :, 0]
    stab = res.pair_stability()
    for (x, y), frac in stab.items():
        i, j = res.rankers.index(x), res.rankers.index(y)
        want = np.mean([_stable_by_loop(vals[r, i] - vals[r, j]) for r in range(4)], axis=0)
        np.testing.assert_allclose(frac, want)
    # a vs b: rep 0 stable from n=2, rep 1 from 4, rep 2 from 8, rep 3 from 32
    np.testing.assert_allclose(stab[("a", "b")], [0, 0.25, 0.5, 0.75, 0.75, 1.0])
    assert res.stable_from("a", "b") == 32
    assert res.stable_from("a", "b", level=0.75) == 8
    assert res.stable_from("a", "c") == 4  # rep 1: c beats a at n = 2
    assert res.stable_from("b", "c") == 4
    full = np.mean(
        [
            _stable_by_loop(vals[r, 0] - vals[r, 1])
            & _stable_by_loop(vals[r, 0] - vals[r, 2])
            & _stable_by_loop(vals[r, 1] - vals[r, 2])
            for r in range(4)
        ],
        axis=0,
    )
    np.testing.assert_allclose(res.ranking_stability(), full)
    assert res.ranking_stable_from() == 32
    assert res.winner("a", "b") == 1.0


def test_to_dict_is_json_ready() -> None:
    import json

    from ndcglab.cli._common import to_json

    d = json.loads(to_json(_handmade().to_dict()))
    assert d["mean"]["a"]["ndcg"] == pytest.approx(0.8)
    assert d["stability"]["ndcg"]["pairs"]["a vs b"]["stable_from"] == 32
    assert len(d["curves"]["ndcg"]["c"]["std"]) == 6


def test_plots_label_conventions_and_save(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    ds, scores = _dataset(5)
    res = distinguishability(
        ds, scores, ["ndcg", "ndcg(discount=power:0.5)"], grid="log", points=8, repeats=3
    )
    axes = res.plot()
    assert len(axes) == 2
    # a short y label; the measure and its full convention in the title (lines join back to it)
    assert axes[1].get_ylabel() == "mean over queries"
    name, *conv = axes[1].get_title().split("\n")
    assert name == "ndcg(discount=power:0.5)"
    assert "".join(conv) == "ndcg(discount=power:0.5,empty=zero,gain=exp2,ties=input)"
    assert all(len(line) <= 61 for line in conv)
    assert [t.get_text() for t in axes[0].get_legend().get_texts()] == ["smooth", "tied"]
    assert len(axes[0].collections) == 2  # one error band per ranker
    ax = res.plot_stability(measure="ndcg")
    assert ax.get_legend() is not None
    res.save_plot(tmp_path / "curves.png")
    res.save_plot(tmp_path / "stab.png", kind="stability")
    assert (tmp_path / "curves.png").stat().st_size > 1000
    assert (tmp_path / "stab.png").stat().st_size > 1000
    with pytest.raises(ConventionError):
        res.plot(band="iqr")
    import matplotlib.pyplot as plt

    plt.close("all")


def test_web40_shape_runs_in_seconds() -> None:
    """40 queries x 5000 documents, 3 rankers, the paper's 4 measures, a 60-point log grid.

    Only a smoke test (no timing assertion; see the report for timings)."""
    from ndcglab.data import make_synthetic

    ds = make_synthetic("web40")
    rng = np.random.default_rng(0)
    w = rng.normal(size=ds.n_features)
    x = np.nan_to_num(ds.features.astype(np.float64)) @ w
    scores = {
        "linear": x,
        "noisy": x + rng.normal(0, 3 * x.std(), ds.n_docs),
        "random": rng.uniform(-1, 1, ds.n_docs),
    }
    res = distinguishability(
        ds, scores, ["ndcg", "ndcg(discount=power:0.5)", "ndcg(discount=exp:2)", "ndcg@0.2n"]
    )
    assert res.grid[-1] == 5000 and res.per_query.shape == (1, 3, 4, len(res.grid), 40)
    assert np.isfinite(res.per_query).all()
