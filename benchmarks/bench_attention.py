"""Seconds per training epoch of the attention kind vs a plain loop over allRank's model code.

Both train the same model (input projection 64, ReLU, dropout 0.1; 2 pre-norm encoder blocks, 2
heads, feed-forward 128; one output), with the same loss (ListNet), Adam (lr 1e-3), batches of
16 queries, one torch thread, on the same data (synthetic, or ``--data`` a LETOR file). The
reference is the loop an allRank user writes: its ``LTRModel`` (the published package's
``allrank.models.model.make_model``), each epoch a seeded random order of queries cut into
batches padded to their longest list, the mask passed to the model, allRank's ``listNet`` loss.
ndcglab's time is the epoch time its training loop records (``TrainResult.history``).
Interleaved (``benchmarks/_interleave.py``): ratio = ndcglab / allRank per round, min/median/max
and the load average printed.

Then the memory of one training step (forward + backward) at slate length 240 and batch 64 (46
features, as MQ2008), each implementation in a fresh child process: the peak resident set size
above the process's size just before the step.

    python benchmarks/bench_attention.py [--quick] [--data FILE]

Needs allRank (``pip install --no-deps allRank`` and ``attrs``); without it, prints why and
exits 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
import types
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _interleave import interleaved_ratios

MODEL = {"hidden": (64,), "activation": "relu", "dropout": 0.1, "heads": 2, "blocks": 2,
         "ff_width": 128, "layer_norm": "pre"}  # fmt: skip


def _allrank() -> Any:
    """allRank's model module and listNet (its data loader stubbed: only a constant is used)."""
    import torch

    for name, attrs in (
        ("allrank.data.dataset_loading", {"PADDED_Y_VALUE": -1}),
        ("allrank.models.model_utils", {"get_torch_device": lambda: torch.device("cpu")}),
    ):
        stub = types.ModuleType(name)
        for k, v in attrs.items():
            setattr(stub, k, v)
        sys.modules.setdefault(name, stub)
    from allrank.config import TransformerConfig
    from allrank.models.losses import listNet
    from allrank.models.model import make_model

    def build(n_features: int) -> Any:
        return make_model(
            fc_model={"sizes": [64], "input_norm": False, "activation": "ReLU", "dropout": 0.1},
            transformer=TransformerConfig(
                N=2, d_ff=128, h=2, positional_encoding=None, dropout=0.1
            ),
            post_model={"output_activation": None, "d_output": 1},
            n_features=n_features,
        )

    return build, listNet


def allrank_epoch(ds: Any, build: Any, list_net: Any, epoch: int, state: dict[str, Any]) -> float:
    import torch

    if "model" not in state:
        torch.manual_seed(0)
        state["model"] = build(ds.n_features)
        state["opt"] = torch.optim.Adam(state["model"].parameters(), lr=1e-3)
        b = ds.boundaries
        x = torch.as_tensor(ds.features, dtype=torch.float32)
        y = torch.as_tensor(ds.labels, dtype=torch.float32)
        state["lists"] = [(x[b[i] : b[i + 1]], y[b[i] : b[i + 1]]) for i in range(len(b) - 1)]
    model, opt, lists = state["model"], state["opt"], state["lists"]
    model.train()
    t0 = time.perf_counter()
    order = np.random.default_rng(epoch).permutation(len(lists))
    for lo in range(0, len(order), 16):
        batch = [lists[i] for i in order[lo : lo + 16]]
        n = max(len(q[1]) for q in batch)
        xb = torch.zeros((len(batch), n, ds.n_features))
        yb = torch.full((len(batch), n), -1.0)
        for i, (xq, yq) in enumerate(batch):
            xb[i, : len(yq)], yb[i, : len(yq)] = xq, yq
        pad = yb == -1
        indices = torch.zeros_like(yb, dtype=torch.long)
        opt.zero_grad()
        loss = list_net(model(xb, pad, indices), yb)
        loss.backward()
        opt.step()
    return time.perf_counter() - t0


def ndcglab_epoch(ds: Any) -> float:
    from ndcglab.training import TrainConfig, fit

    cfg = TrainConfig(
        model="attention", loss="listnet", epochs=1, lr=1e-3, batch_size=16, batching="random",
        normalize="none", num_threads=1, skip_uninformative=False, **MODEL,
    )  # fmt: skip
    return float(fit(ds, cfg).history[0]["seconds"])


_CHILD = r"""
import resource, sys, types, numpy as np, torch
sys.path.insert(0, sys.argv[2])
torch.set_num_threads(1)
which, B, L, F = sys.argv[1], 64, 240, 46
x = torch.randn(B, L, F); mask = torch.ones(B, L, dtype=torch.bool)
y = torch.randint(0, 3, (B, L)).float()
if which == "allrank":
    import bench_attention as b
    build, list_net = b._allrank()
    model = build(F)
    idx = torch.zeros(B, L, dtype=torch.long)
    step = lambda: list_net(model(x, ~mask, idx), y)
else:
    from ndcglab.losses import get_loss
    from ndcglab.models.attention import AttentionModel
    import bench_attention as b
    model = AttentionModel(F, **b.MODEL); loss = get_loss("listnet")
    step = lambda: loss(model(x, mask), y, mask).mean()
model.train()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
step().backward()
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print((after - before) / 1024)
"""


def step_memory(which: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, which, os.path.dirname(os.path.abspath(__file__))],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return float(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--data", default=None, help="a LETOR file (default: synthetic)")
    ap.add_argument("--repeats", type=int, default=None)
    args = ap.parse_args()
    try:
        build, list_net = _allrank()
    except ImportError as exc:
        print(f"bench_attention: allRank is not importable ({exc}); nothing to compare")
        return 0
    import torch

    torch.set_num_threads(1)
    if args.data:
        from ndcglab.data import read_letor

        ds = read_letor(args.data)
    else:
        from ndcglab.data import make_synthetic

        n_q = 60 if args.quick else 300
        ds = make_synthetic("default", seed=0, n_queries=n_q)
    state: dict[str, Any] = {}
    epoch = [0]

    def run(name: str | None) -> float:
        epoch[0] += 1
        return ndcglab_epoch(ds) if name else allrank_epoch(ds, build, list_net, epoch[0], state)

    repeats = args.repeats or (3 if args.quick else 7)
    ratios, ref, loads = interleaved_ratios(run, ["ndcglab"], repeats)
    r = ratios["ndcglab"]
    print(f"data: {ds.n_queries} queries, {ds.n_docs} documents, {ds.n_features} features")
    print(
        f"allRank loop: {min(ref):.3f} / {statistics.median(ref):.3f} / {max(ref):.3f} s per epoch"
        " (min / median / max)"
    )
    print(
        f"ndcglab / allRank epoch time: min {min(r):.3f}  median {statistics.median(r):.3f}  "
        f"max {max(r):.3f}  ({repeats} rounds)"
    )
    print(f"load average (1 min) during the rounds: {min(loads):.2f} .. {max(loads):.2f}")
    mem = {which: step_memory(which) for which in ("ndcglab", "allrank")}
    print(
        "one training step at slate length 240, batch 64, 46 features: peak RSS growth "
        f"ndcglab {mem['ndcglab']:.0f} MiB, allRank {mem['allrank']:.0f} MiB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
