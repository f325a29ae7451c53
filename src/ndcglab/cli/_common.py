"""Helpers shared by the sub-command modules: output formats and progress bars.

Every command that prints results takes ``--format text|json``. In JSON it prints one object whose
key ``"mean"`` maps each measure's printed name to its mean, plus whatever else the command reports
(``"queries"``, ``"empty_queries"``, ``"convention"``, ``"std"``, ``"folds"`` ...).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def add_format_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--format text|json`` (default text)."""
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="output format: a readable table (text) or one JSON object (json)",
    )


def _jsonable(x: Any) -> Any:
    if isinstance(x, Mapping):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_jsonable(v) for v in x.tolist()]
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating | float):
        f = float(x)
        return None if math.isnan(f) or math.isinf(f) else f
    if isinstance(x, np.bool_):
        return bool(x)
    return x


def to_json(obj: Mapping[str, Any]) -> str:
    """Serialise a result object (NumPy values, NaN -> null) as indented JSON."""
    return json.dumps(_jsonable(obj), indent=2)


def emit(args: argparse.Namespace, payload: Mapping[str, Any], text: Callable[[], str]) -> None:
    """Print ``payload`` as JSON under ``--format json``, else the text from ``text()``."""
    if getattr(args, "format", "text") == "json":
        sys.stdout.write(to_json(payload) + "\n")
    else:
        sys.stdout.write(text().rstrip("\n") + "\n")


def progress(
    iterable: Iterable[T], *, desc: str, total: int | None = None, enable: bool = True
) -> Iterable[T]:
    """A tqdm progress bar on stderr, shown only when stderr is a terminal (and ``enable``)."""
    if not enable or not sys.stderr.isatty():
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, file=sys.stderr, leave=False)


def format_table(header: list[str], rows: list[list[Any]], floatfmt: str = ".4f") -> str:
    """A plain aligned text table."""
    cells = [[f"{c:{floatfmt}}" if isinstance(c, float) else str(c) for c in row] for row in rows]
    widths = [
        max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(header)
    ]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines.append("  ".join("-" * w for w in widths))
    for r in cells:
        lines.append(
            "  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths)))
        )
    return "\n".join(lines)
