"""The interleaved timing loop the boosting benchmarks share: a reference and each contender run
in turn, ``repeats`` times, after one warm-up call each, with the load average read between rounds
(ratios of one round share the machine's state)."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence


def interleaved_ratios(
    run: Callable[[str | None], float], names: Sequence[str], repeats: int
) -> tuple[dict[str, list[float]], list[float], list[float]]:
    """``(ratios, reference times, load averages)``: ``run(None)`` times the reference and
    ``run(name)`` each contender; every ratio is a contender's time over the reference time of
    the same round."""
    for name in [None, *names]:  # warm-up: binding, first calls
        run(name)
    ratios: dict[str, list[float]] = {name: [] for name in names}
    ref_times: list[float] = []
    loads = [os.getloadavg()[0]]
    for _ in range(repeats):
        ref = run(None)
        ref_times.append(ref)
        for name in names:
            ratios[name].append(run(name) / ref)
        loads.append(os.getloadavg()[0])
    return ratios, ref_times, loads
