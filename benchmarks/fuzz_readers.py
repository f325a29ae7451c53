"""A longer fuzz run of the LETOR and TREC readers (the engine of tests/data/test_fuzz_readers.py).

Usage, from the repository root::

    python benchmarks/fuzz_readers.py --seconds 300 --seed 1 [--formats letor]

Prints the counts of cases read correctly, refused with a clear error, crashes (any exception
other than NdcglabError) and silent misreads (a read that differs from the slow reference
parser, or a read of input it refuses), with up to ten examples of each failure; the exit status
is 1 when there is any crash or misread.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=120.0, help="how long to run")
    parser.add_argument("--seed", type=int, default=1, help="seed of the mutations")
    parser.add_argument("--max-cases", type=int, default=None, help="stop after this many")
    parser.add_argument(
        "--formats",
        default="letor,qrels,run",
        help="comma-separated formats to mutate (default letor,qrels,run)",
    )
    args = parser.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.data.test_fuzz_readers import run_fuzz

    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip())
    report = run_fuzz(args.seed, seconds=args.seconds, max_cases=args.max_cases, formats=formats)
    print(report.summary())
    print("mutations:", ", ".join(f"{k} {v}" for k, v in sorted(report.kinds.items())))
    for name, items in (("crash", report.crashes), ("misread", report.misreads)):
        for item in items[:10]:
            print(f"{name}: {item}")
    return 1 if report.crashes or report.misreads else 0


if __name__ == "__main__":
    raise SystemExit(main())
