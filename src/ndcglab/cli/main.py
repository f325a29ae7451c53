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

#: sub-command name -> (module in ndcglab.cli, one-line help). Modules are imported only when
#: their command runs (or for ``--help`` of that command), so ``ndcglab --help`` stays fast and
#: measuring never imports torch.
COMMANDS: dict[str, tuple[str, str]] = {
    "evaluate": ("evaluate", "evaluate scores against a LETOR file or a TREC run"),
    "describe": ("describe", "describe a dataset: queries, documents, labels, list lengths"),
    "generate": ("generate", "write a seeded synthetic LETOR dataset"),
    "train": ("train", "train a ranker with a registered loss"),
    "predict": ("predict", "score a dataset with a saved model"),
    "cv": ("cv", "cross-validate losses over LETOR folds"),
    "compare": ("compare", "compare rankers with significance tests"),
    "distinguish": ("distinguish", "mean NDCG against list size: distinguishability curves"),
    "reproduce": ("reproduce", "reproduce the papers' experiments as reports"),
}


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``only``, just that sub-command's module is imported."""
    parser = argparse.ArgumentParser(
        prog="ndcglab",
        description="Measure and optimise NDCG, with every convention stated.",
    )
    parser.add_argument("--version", action="version", version=f"ndcglab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if only is not None and name != only:
            sub.add_parser(name, help=help_text)
            continue
        try:
            mod = importlib.import_module(f"{__package__}.{module}")
        except ModuleNotFoundError as exc:
            if exc.name == f"{__package__}.{module}":
                continue  # sub-command not built yet
            raise
        mod.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(only=chosen if chosen in COMMANDS else "")
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
