"""``ndcglab clicks stats LOG [LOG ...] --out STATS [--dask ADDRESS]``

Sum the sufficient statistics of click logs (impressions and clicks per query × document ×
position) into a statistics file that ``ndcglab train --clicks STATS`` reads. A Parquet log is
read one row group (partition) at a time, so a log larger than memory can be summed; with
``--dask`` each partition is read, checked and counted on a worker of a Dask cluster (the
workers must see the log files), the partitions' counts summed here. Each bad row is one error
line naming the file and its row.
"""

from __future__ import annotations

import argparse
from typing import Any

from ._common import add_format_argument, emit
from ._dask import add_dask_arguments


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "stats",
        help="sum click logs into sufficient statistics (optionally per partition on Dask)",
        description=(
            "Sum the impressions and clicks per query, document and position of LOG (several "
            "logs are summed) into a statistics file (.parquet or .npz) for 'ndcglab train "
            "--clicks STATS'; --dask counts each Parquet row group on a Dask worker."
        ),
    )
    p.add_argument("logs", nargs="+", metavar="LOG", help="click log(s): .parquet or .npz")
    p.add_argument("--out", required=True, metavar="FILE",
                   help="the statistics file to write (.parquet or .npz)")  # fmt: skip
    p.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    add_dask_arguments(p)
    add_format_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..clicks import merge_stats, read_log_stats, write_stats
    from ..distributed.cluster import (
        MIN_EVALUATE_MEMORY,
        check_memory_limit,
        check_timeout,
        parse_address,
    )
    from ._dask import client_from_args, worker_path

    if args.dask is not None:  # a bad address is refused before any log is read
        parse_address(args.dask)
        check_timeout(args.dask_timeout)
        check_memory_limit(args.dask_memory_limit, minimum=MIN_EVALUATE_MEMORY)
    with client_from_args(args, "ndcglab clicks stats") as client:
        parts = [read_log_stats(worker_path(path), client=client) for path in args.logs]
    stats = parts[0] if len(parts) == 1 else merge_stats(parts)
    write_stats(stats, args.out)
    imp, clk = stats.per_position()
    payload: dict[str, Any] = {
        "logs": list(args.logs),
        "out": str(args.out),
        "k": stats.k,
        "rows": len(stats.query),
        "impressions": int(imp.sum()),
        "clicks": int(clk.sum()),
        "dask": args.dask,
    }
    emit(
        args,
        payload,
        lambda: (
            f"{payload['out']}: {payload['rows']} (query, document, position) counts, "
            f"{payload['impressions']} impressions, {payload['clicks']} clicks, k = {stats.k}"
        ),
    )
    return 0
