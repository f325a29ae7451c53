"""Training speed: seconds per epoch and documents per second, linear model.

Losses: ListNet, ListMLE, CS-ListMLE@10. Data: MQ2008 Fold1 train (skipped when
``../shared/data`` is absent) and the MSLR-WEB30K-sized synthetic set
(``make_synthetic("mslr30k")``, ~3.77M documents, 136 features; ``--quick`` or
``--mslr-queries N`` take a subset of its queries). Each line trains a few epochs through
:func:`ndcglab.training.train` (the real loop, data already on the device) and reports the
median time of the epochs after the first (warm-up). Optimisers: ``gd`` (one full-batch step per
epoch, gradients accumulated over length buckets of 256 queries) and ``adam`` (minibatches of 64
queries, bucketed by length).

For comparison, ``padded-features`` times the straightforward alternative for ListNet: a dense
``(Q, M, F)`` feature tensor with a mask, scored as a whole, one full-batch step. The training
loop avoids it by scoring the flat ``(N, F)`` rows and padding only the scores.

    python benchmarks/bench_training.py [--quick] [--epochs 4] [--threads N] [--skip-mslr]
    python benchmarks/bench_training.py --overhead [--quick] [--repeats 5]
    python benchmarks/bench_training.py --loss-only [--mslr-queries 3000] [--repeats 5]

``--loss-only``: the loss alone (forward and backward of ListNet and ListMLE on the same padded
batches, one thread) against allRank's formulas, interleaved and repeated, called as
``loss(scores, labels, mask)`` and bound to each batch's labels (``loss.bind``, as the training
loop calls it); printed: min/median/max of the ratio and the load average.

``--overhead``: per-batch overhead against a plain PyTorch loop written here. Both train the same
linear model with Adam (minibatches of 64 queries) on the same batches — the padding and the
length-bucketed batch order of :class:`ndcglab.training.batching.BatchPlan` — and the plain loop
uses allRank's ListNet and ListMLE formulas (softmax cross-entropy over ``-inf``-padded rows;
one random permutation, one sort by label, a cumulative sum of ``exp`` of max-shifted scores).
``--overhead-losses listwise`` (or a list of specs) times every listwise loss the same way; for
losses other than ListNet and ListMLE the plain loop calls ndcglab's own loss on each batch, so
what is compared is the training loop around it.
Both run on the same torch threads (``--threads``, else torch's default: ``train()`` gets
``num_threads`` set to it, so its own thread rule does not enter the comparison). The two are
run interleaved and repeated; printed: the min/median/max over the repeats of the
ratio ``ndcglab epoch / plain epoch`` (median epoch of each run after the first), the time
``train()`` spends before its first epoch, and the load average.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
LOSSES = ("listnet", "listmle", "cs_listmle@10")
#: ``--overhead-losses listwise``: the listwise losses (surrogates, their NDCG-consistent
#: versions, the Bregman and q-norm families, CS-ListMLE@k, and the smooth-NDCG losses)
LISTWISE = (
    "listnet",
    "listmle",
    "cosine",
    "squared",
    "consistent_listnet",
    "consistent_cosine",
    "consistent_squared",
    "bregman",
    "qnorm",
    "cs_listmle@10",
    "softmax_ce",
    "approx_ndcg",
    "neural_ndcg@10",
    "lambdaloss@10",
)


def epoch_times(ds, loss: str, optimizer: str, epochs: int, batch_size: int = 64) -> list[float]:
    from ndcglab.training import train

    r = train(
        ds,
        loss=loss,
        optimizer=optimizer,
        lr=1e-3 if optimizer == "adam" else 0.1,
        epochs=epochs,
        tol=0.0,
        batch_size=batch_size,
        normalize="none",
        progress=False,
    )
    return [h["seconds"] for h in r.history]


def padded_features_listnet(ds, epochs: int) -> list[float]:
    """The alternative: a dense (Q, M, F) tensor, full batch, same loss and optimiser step."""
    import torch

    from ndcglab.losses import get_loss
    from ndcglab.models import LinearModel

    x, mask = ds.padded_features()
    y, _ = ds.padded()
    keep = np.flatnonzero(y.max(1) > np.where(mask, y, np.inf).min(1))
    xt = torch.as_tensor(x[keep])
    yt = torch.as_tensor(y[keep], dtype=torch.float32)
    mt = torch.as_tensor(mask[keep])
    model = LinearModel(ds.n_features)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss = get_loss("listnet")
    times = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        opt.zero_grad()
        s = torch.where(mt, model(xt), torch.zeros(()))
        loss(s, yt, mt).mean().backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    return times


def _allrank_listnet(torch, s, y, mask):
    """allRank's ``listNet``: softmax cross-entropy, padded cells at ``-inf`` (eps = 1e-10)."""
    neg = torch.tensor(float("-inf"), dtype=s.dtype)
    p = torch.softmax(torch.where(mask, s, neg), dim=1) + 1e-10
    t = torch.softmax(torch.where(mask, y, neg), dim=1)
    return -(t * torch.log(p)).sum(dim=1)


def _allrank_listmle(torch, s, y, mask):
    """allRank's ``listMLE``: random permutation, sort by label, max-shifted cumsum of exp."""
    perm = torch.randperm(s.shape[-1])
    s, y, mask = s[:, perm], torch.where(mask, y, -1.0)[:, perm], mask[:, perm]
    y_sorted, idx = y.sort(descending=True, dim=-1)
    pad = y_sorted == -1.0
    ps = torch.gather(s, 1, idx).masked_fill(pad, float("-inf"))
    ps = ps - ps.max(dim=1, keepdim=True).values
    cums = torch.cumsum(ps.exp().flip(dims=[1]), dim=1).flip(dims=[1])
    obs = (torch.log(cums + 1e-10) - ps).masked_fill(pad, 0.0)
    return obs.sum(dim=1)


def _plain_loss(loss: str):
    """The plain loop's loss: allRank's formulas for ListNet and ListMLE; for any other loss,
    ndcglab's registered loss called as ``loss(scores, labels, mask)`` (so the comparison is of
    the training loop around it)."""
    if loss == "listnet":
        return _allrank_listnet
    if loss == "listmle":
        return _allrank_listmle
    from ndcglab.losses import get_loss

    fn = get_loss(loss)
    return lambda torch, s, y, mask: fn(s, y, mask)


def plain_epochs(ds, loss: str, epochs: int, batch_size: int = 64) -> list[float]:
    """A plain PyTorch loop: the same batches, a linear model, Adam, the loss of
    :func:`_plain_loss`."""
    import torch

    from ndcglab.training.batching import BatchPlan
    from ndcglab.training.prepare import informative_queries

    keep = informative_queries(ds.labels, ds.boundaries)
    sub = ds.subset(keep)
    plan = BatchPlan(sub.features, sub.labels, sub.boundaries, batch_size=batch_size, seed=0)
    fn = _plain_loss(loss)
    torch.manual_seed(0)
    model = torch.nn.Linear(ds.n_features, 1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    times = []
    for epoch in range(epochs):
        t0 = time.perf_counter()
        for batch in plan.epoch_batches(epoch):
            opt.zero_grad(set_to_none=True)
            s = model(batch.features(plan.x)).squeeze(-1)[batch.pad_index]
            fn(torch, s, batch.labels, batch.mask).mean().backward()
            opt.step()
        times.append(time.perf_counter() - t0)
    return times


def overhead(sets, epochs: int, repeats: int, losses: list[str]) -> None:
    """ndcglab's epoch vs the plain loop's, interleaved and repeated (see the module docstring)."""
    import os

    import torch

    from ndcglab.training import train

    # both loops on the same torch threads (the plain loop runs on torch's current count): what
    # is compared is the loop, not train()'s thread rule (docs/training.md, "Threads")
    threads = torch.get_num_threads()
    print(f"  (both loops on {threads} torch thread(s))")
    for name, ds in sets:
        for loss in losses:
            ratios, setups = [], []
            plain_epochs(ds, loss, 2)  # warm-up: first calls of every operation
            loads = [os.getloadavg()[0]]
            for _ in range(repeats):
                plain = statistics.median(plain_epochs(ds, loss, epochs)[1:])
                t0 = time.perf_counter()
                r = train(
                    ds,
                    loss=loss,
                    optimizer="adam",
                    lr=1e-3,
                    epochs=epochs,
                    tol=0.0,
                    batch_size=64,
                    normalize="none",
                    progress=False,
                    num_threads=threads,
                )
                total = time.perf_counter() - t0
                ours = [h["seconds"] for h in r.history]
                setups.append(total - sum(ours))
                ratios.append(statistics.median(ours[1:]) / plain)
                loads.append(os.getloadavg()[0])
            print(
                f"  {name:34s} {loss:18s} ndcglab / plain epoch: min {min(ratios):.2f}  median "
                f"{statistics.median(ratios):.2f}  max {max(ratios):.2f}   (train() outside "
                f"epochs: median {statistics.median(setups):.2f} s; load "
                f"{min(loads):.2f}..{max(loads):.2f}; {repeats} repeats x {epochs} epochs)",
                flush=True,
            )


def _ndcglab_loss(loss, gen, s, y, mask):
    return loss(s, y, mask, generator=gen)


def _bound_loss(bound, gen, s, y, mask):
    """The loss bound to the batch's labels once (as the training loop calls it)."""
    return bound[id(y)](s, generator=gen)


def _best_pass(fn, batches, passes: int = 5) -> float:
    """Seconds of the fastest of ``passes`` passes of forward and backward over ``batches``."""
    times = []
    for _ in range(passes):
        t0 = time.perf_counter()
        for s0, y, m in batches:
            s = s0.clone().requires_grad_(True)
            fn(s, y, m).mean().backward()
        times.append(time.perf_counter() - t0)
    return min(times)


def loss_overhead(sets, repeats: int, max_batches: int = 24) -> None:
    """The loss alone: forward and backward of ndcglab's ListNet/ListMLE against allRank's
    formulas on the same padded batches (one epoch's batches of :class:`BatchPlan`, at most
    ``max_batches``, scores of a fixed random linear model), one thread, interleaved and
    repeated; each timing is the best of 5 passes over the batches."""
    import os

    import torch

    from ndcglab.losses import get_loss
    from ndcglab.training.batching import BatchPlan
    from ndcglab.training.prepare import informative_queries

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for name, ds in sets:
            keep = informative_queries(ds.labels, ds.boundaries)
            sub = ds.subset(keep)
            plan = BatchPlan(sub.features, sub.labels, sub.boundaries, batch_size=64, seed=0)
            torch.manual_seed(0)
            model = torch.nn.Linear(ds.n_features, 1)
            with torch.no_grad():
                batches = [
                    (model(b.features(plan.x)).squeeze(-1)[b.pad_index], b.labels, b.mask)
                    for b in list(plan.epoch_batches(0))[:max_batches]
                ]
            gen = torch.Generator().manual_seed(0)
            for loss in ("listnet", "listmle"):
                fn = get_loss(loss)
                bound = {id(y): fn.bind(y, m) for _, y, m in batches}
                variants = {
                    "loss(s, y, m)": partial(_ndcglab_loss, fn, gen),
                    "bound (training)": partial(_bound_loss, bound, gen),
                }
                plain = partial(_allrank_listnet if loss == "listnet" else _allrank_listmle, torch)
                for what, ours in variants.items():
                    _best_pass(ours, batches), _best_pass(plain, batches)  # warm-up
                    ratios, loads = [], [os.getloadavg()[0]]
                    for _ in range(repeats):
                        ratios.append(_best_pass(ours, batches) / _best_pass(plain, batches))
                        loads.append(os.getloadavg()[0])
                    print(
                        f"  {name:34s} {loss:8s} {what:16s} fwd+bwd / allRank: min "
                        f"{min(ratios):.2f}  median {statistics.median(ratios):.2f}  max "
                        f"{max(ratios):.2f}   ({len(batches)} batches, 1 thread; load "
                        f"{min(loads):.2f}..{max(loads):.2f}; {repeats} repeats)",
                        flush=True,
                    )
    finally:
        torch.set_num_threads(threads)


def row(name: str, ds, label: str, times: list[float]) -> list[str]:
    t = statistics.median(times[1:] if len(times) > 1 else times)
    return [name, label, f"{ds.n_queries}", f"{ds.n_docs}", f"{t:.4f}", f"{ds.n_docs / t:,.0f}"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="MSLR-sized set: a 3,000-query subset")
    ap.add_argument("--epochs", type=int, default=4, help="epochs per measurement (default 4)")
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default torch's)")
    ap.add_argument("--skip-mslr", action="store_true", help="only MQ2008")
    ap.add_argument("--mslr-queries", type=int, default=None, help="subset size for the MSLR set")
    ap.add_argument("--overhead", action="store_true", help="ndcglab vs a plain PyTorch loop")
    ap.add_argument(
        "--loss-only",
        action="store_true",
        help="the loss's forward and backward alone vs allRank's formulas (same batches)",
    )
    ap.add_argument(
        "--repeats", type=int, default=5, help="--overhead, --loss-only: interleaved repeats"
    )
    ap.add_argument(
        "--overhead-losses",
        default="listnet,listmle",
        help="--overhead: comma-separated loss specs, or 'listwise' for every listwise loss "
        "(default listnet,listmle); losses other than ListNet and ListMLE run ndcglab's own "
        "loss in the plain loop",
    )
    args = ap.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, CPU", flush=True)
    rows: list[list[str]] = []
    notes: list[str] = []

    sets = []
    mq = SHARED / "MQ2008" / "Fold1"
    if mq.exists():
        from ndcglab.data import read_letor

        path = next(p for p in (mq / "train.txt.gz", mq / "train.txt") if p.exists())
        sets.append(("MQ2008 Fold1 train", read_letor(path)))
    else:
        print(f"(MQ2008 not found under {SHARED}: skipped)")
    if not args.skip_mslr:
        from ndcglab.data import make_synthetic

        t0 = time.perf_counter()
        big = make_synthetic("mslr30k", seed=0)
        print(
            f"make_synthetic('mslr30k'): {big.n_queries} queries, {big.n_docs} docs, "
            f"{big.n_features} features in {time.perf_counter() - t0:.1f} s",
            flush=True,
        )
        n_sub = args.mslr_queries or (3000 if args.quick else None)
        if n_sub is not None and n_sub < big.n_queries:
            big = big.subset(np.arange(n_sub))
            name = f"mslr30k synthetic (first {n_sub} queries)"
        else:
            name = "mslr30k synthetic"
        sets.append((name, big))

    if args.overhead:
        losses = (
            list(LISTWISE)
            if args.overhead_losses == "listwise"
            else [x.strip() for x in args.overhead_losses.split(",") if x.strip()]
        )
        overhead(sets, max(args.epochs, 3), 3 if args.quick else args.repeats, losses)
        return 0
    if args.loss_only:
        loss_overhead(sets, args.repeats)
        return 0

    for name, ds in sets:
        for loss in LOSSES:
            for opt in ("gd", "adam"):
                times = epoch_times(ds, loss, opt, args.epochs)
                rows.append(row(name, ds, f"{loss} / {opt}", times))
                print("  ".join(rows[-1]), flush=True)
        if ds.n_docs <= 200_000:
            times = padded_features_listnet(ds, args.epochs)
            rows.append(row(name, ds, "listnet / padded-features (alternative)", times))
            print("  ".join(rows[-1]), flush=True)
        else:
            m = int(ds.query_lengths.max())
            gib = ds.n_queries * m * ds.n_features * 4 / 2**30
            notes.append(
                f"{name}: padded-features alternative not run: a dense (Q, M, F) float32 tensor "
                f"would take {gib:.1f} GiB ({ds.n_queries} x {m} x {ds.n_features})"
            )

    header = ["data", "loss / optimiser", "queries", "docs", "s/epoch", "docs/s"]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)] if rows else []
    print()
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for r in rows:
        print(
            "  ".join(
                c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
            )
        )
    for note in notes:
        print(note)
    return 0


if __name__ == "__main__":
    sys.exit(main())
