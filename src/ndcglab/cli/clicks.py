"""``ndcglab clicks SUBCOMMAND``: simulate click logs, fit click models, evaluate from clicks.

Each sub-command lives in its own module (:data:`SUBCOMMANDS`), which defines
``add_parser(subparsers)`` (registering its parser and setting ``func``) and
``run(args) -> int``, as the commands of :mod:`ndcglab.cli.main` do; a module not present is
left out.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

#: sub-command of ``ndcglab clicks`` -> its module in :mod:`ndcglab.cli`
SUBCOMMANDS: dict[str, str] = {
    "simulate": "_clicks_simulate",
    "fit": "_clicks_fit",
    "evaluate": "_clicks_evaluate",
    "stats": "_clicks_stats",
}


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "clicks",
        help="simulate click logs, fit click models, evaluate rankers from clicks",
        description=(
            "Work with click logs: 'simulate' writes a log from a dataset, a click model and a "
            "logging policy; 'fit' fits click models and propensities to a log; 'evaluate' "
            "estimates a new ranker's NDCG from a log; 'stats' sums logs into sufficient "
            "statistics. See 'ndcglab clicks SUBCOMMAND --help'."
        ),
    )
    sub = p.add_subparsers(dest="clicks_command", metavar="SUBCOMMAND")
    for module in SUBCOMMANDS.values():
        try:
            mod = importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__package__}.{module}":
                continue  # sub-command not built yet
            raise
        mod.add_parser(sub)
    p.set_defaults(func=run, clicks_parser=p)


def run(args: argparse.Namespace) -> int:
    """``ndcglab clicks`` without a sub-command: print its help."""
    args.clicks_parser.print_help()
    return 0
