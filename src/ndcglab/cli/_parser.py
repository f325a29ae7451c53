"""The command line's argument parser (:func:`build_parser`), imported by :mod:`ndcglab.cli.main`
only when a command line is parsed: ``ndcglab --version`` needs neither argparse nor this module."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Any, NoReturn

from .. import __version__
from .main import COMMANDS

__all__ = ["build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse with errors as one line: ``ndcglab: error: ... Fix: see 'ndcglab CMD --help'``
    (exit status 2). Sub-command parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from ._common import strict_float, strict_int

        # every type=int / type=float option reads numbers as the file readers do
        self.register("type", int, strict_int)
        self.register("type", float, strict_float)

    def _get_value(self, action: argparse.Action, arg_string: str) -> Any:
        """Numbers of the numeric options (:data:`~ndcglab.cli._common.NUMBER_RANGES`) are
        written in ASCII without ``_`` separators, as the file readers take them, whatever the
        option's own ``type`` would accept."""
        from ._common import NUMBER_RANGES, number_range

        if action.dest in NUMBER_RANGES and len(arg_string) > 64:
            raise argparse.ArgumentError(
                action,
                f"a value of {len(arg_string)} characters ({arg_string[:20]}...) is out of "
                f"range. Fix: give a value {number_range(action.dest)}",
            )
        if action.dest in NUMBER_RANGES and (not arg_string.isascii() or "_" in arg_string):
            shown = arg_string if len(arg_string) <= 40 else arg_string[:37] + "..."
            raise argparse.ArgumentError(
                action,
                f"{shown!r} is not a number in ASCII digits. Fix: write it like 10, 0.01 or 64,32",
            )
        return super()._get_value(action, arg_string)

    def _get_formatter(self) -> argparse.HelpFormatter:
        """argparse's, with the width given: argparse's own reads it through ``shutil``, whose
        import (bz2, lzma) every command would pay for a help text it rarely prints."""
        cls = self.formatter_class
        if isinstance(cls, type) and issubclass(cls, argparse.HelpFormatter):
            return cls(prog=self.prog, width=_terminal_columns() - 2)
        return super()._get_formatter()  # pragma: no cover - ndcglab's parsers use classes

    def error(self, message: str) -> NoReturn:
        from .._warn import terminal_safe

        cmd = self.prog if self.prog.startswith("ndcglab") else "ndcglab"
        message = terminal_safe(" ".join(message.split()))
        if "Fix:" in message:
            self.exit(2, f"ndcglab: error: {message}\n")
        self.exit(2, f"ndcglab: error: {message}. Fix: see '{cmd} --help'\n")


def _terminal_columns() -> int:
    """The terminal's width as :func:`shutil.get_terminal_size` gives it: ``COLUMNS`` when it
    is a positive number, else the width of the terminal of ``sys.__stdout__``, else 80."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        columns = 0
    return columns or 80


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``only``, just that sub-command's module is imported (and,
    when ``only`` names a sub-command, the others are left out: argparse would only look them
    up for a help listing or an unknown name, which ``main`` builds the whole parser for)."""
    parser = _Parser(
        prog="ndcglab",
        description="Measure and optimise NDCG, with every convention stated.",
    )
    parser.add_argument("--version", action="version", version=f"ndcglab {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in COMMANDS.items():
        if only is not None and name != only:
            if only not in COMMANDS:
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
