"""``ndcglab`` command line: a thin layer over the library, one module per sub-command.

Each sub-command module in :mod:`ndcglab.cli` defines ``add_parser(subparsers)`` (which registers
its parser and sets ``func``) and a ``run(args) -> int``. Library errors (:class:`NdcglabError`)
are printed as ``ndcglab: error: ...`` with exit status 2; nothing else is caught.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .. import __version__
from ..errors import NdcglabError

#: sub-command name -> module in ndcglab.cli (imported lazily so ``ndcglab --help`` stays fast)
COMMANDS: dict[str, str] = {
    "evaluate": "evaluate",
    "describe": "describe",
    "train": "train",
    "predict": "predict",
    "cv": "cv",
    "compare": "compare",
    "distinguish": "distinguish",
    "reproduce": "reproduce",
    "generate": "generate",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ndcglab",
        description="Measure and optimise NDCG, with every convention stated.",
    )
    parser.add_argument("--version", action="version", version=f"ndcglab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module in COMMANDS.items():
        try:
            mod = importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__package__}.{module}":
                continue  # sub-command not built yet
            raise
        mod.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except NdcglabError as exc:
        print(f"ndcglab: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. `ndcglab ... | head`
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
