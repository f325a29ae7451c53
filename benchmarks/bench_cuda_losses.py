"""ListNet and ListMLE on a CUDA device against allRank's formulas, forward and backward.

    python benchmarks/bench_cuda_losses.py [--rounds 5] [--calls 200]

For each batch shape and dtype, and round by round (interleaved), times ``calls`` calls of
forward + backward of: ndcglab's ``listnet`` and ``listmle`` (``get_loss``), the plain
formulas of ``bench_training.py`` (allRank's ListNet and ListMLE), and the suffix log-sum-exp
of ListMLE in its two forms — ``masked_logcumsumexp`` (the shifted cumulative sum, the CPU's
choice) and ``torch.logcumsumexp`` of the padded row (what ``masked_suffix_logsumexp`` uses on
other devices). Prints min/median/max over the rounds of each time and of the ratios, and the
load average. Without a CUDA device it says so and exits 0.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _cases(s, y, mask, gen) -> dict:
    """The timed calls (forward and backward) on one batch."""
    import torch

    from bench_training import _allrank_listmle, _allrank_listnet
    from ndcglab.losses import _ops, get_loss

    fill = _ops.fill_value(s.dtype)
    listnet, listmle = get_loss("listnet"), get_loss("listmle")

    def suffix_plain():
        z = torch.where(mask, s, fill)
        torch.logcumsumexp(z.flip(-1), -1).flip(-1).sum().backward()

    return {
        "listnet": lambda: listnet(s, y, mask).mean().backward(),
        "allRank listnet": lambda: _allrank_listnet(torch, s, y, mask).mean().backward(),
        "listmle": lambda: listmle(s, y, mask, generator=gen).mean().backward(),
        "allRank listmle": lambda: _allrank_listmle(torch, s, y, mask).mean().backward(),
        "masked_logcumsumexp": lambda: (
            _ops.masked_logcumsumexp(s, mask, reverse=True).sum().backward()
        ),
        "logcumsumexp": suffix_plain,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no CUDA device: nothing to time")
        return 0
    dev = torch.device("cuda")
    print(f"{torch.cuda.get_device_name(dev)}, torch {torch.__version__}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    def timed(fn) -> float:
        for _ in range(10):
            fn()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(args.calls):
            fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / args.calls * 1e6

    def mmm(v: list[float], fmt: str = "{:.0f}") -> str:
        return " / ".join(fmt.format(x) for x in (min(v), statistics.median(v), max(v)))

    torch.manual_seed(0)
    for b, m in ((64, 60), (64, 300), (1024, 300)):
        for dt in (torch.float32, torch.float64):
            s = torch.randn(b, m, device=dev, dtype=dt, requires_grad=True)
            y = torch.randint(0, 3, (b, m), device=dev).to(dt)
            mask = torch.ones(b, m, dtype=torch.bool, device=dev)
            mask[:, m * 3 // 4 :] = False
            cases = _cases(s, y, mask, torch.Generator(device=dev).manual_seed(1))
            t: dict[str, list[float]] = {k: [] for k in cases}
            for _ in range(args.rounds):
                for k, fn in cases.items():
                    t[k].append(timed(fn))
            print(f"\n{b} lists x {m} documents, {str(dt)[6:]}  (µs per call, min / median / max)")
            for k, v in t.items():
                print(f"  {k:22s} {mmm(v)}")
            for ours, theirs in (
                ("listnet", "allRank listnet"),
                ("listmle", "allRank listmle"),
                ("masked_logcumsumexp", "logcumsumexp"),
            ):
                r = [a / c for a, c in zip(t[ours], t[theirs], strict=True)]
                print(f"  ratio {ours} / {theirs}: {mmm(r, '{:.2f}')}")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
