"""Helpers shared by the sub-command modules: output formats, progress bars, text tables
(:func:`format_table`, from :mod:`ndcglab._tables`) and the arguments of the commands that
compare several score files.

Every command that prints results takes ``--format text|json``. In JSON it prints one object whose
key ``"mean"`` maps each measure's printed name to its mean, plus whatever else the command reports
(``"queries"``, ``"empty_queries"``, ``"convention"``, ``"std"``, ``"folds"`` ...).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from .._tables import format_table

__all__ = [
    "INPUT_OPTIONS",
    "OUTPUT_OPTIONS",
    "add_cache_argument",
    "add_format_argument",
    "add_systems_arguments",
    "add_systems_parser",
    "check_outputs",
    "emit",
    "format_table",
    "positive_int",
    "progress",
    "read_options",
    "read_systems",
    "refuse_output_over_input",
    "system_names",
    "to_json",
]

T = TypeVar("T")

#: argument names (``args.<name>``) of the files a command writes, with their option
OUTPUT_OPTIONS = {
    "out": "--out",
    "per_query": "--per-query",
    "export": "--export",
    "plot": "--plot",
    "plot_stability": "--plot-stability",
}
#: outputs that are folders written as a whole (a report), per sub-command
OUTPUT_FOLDERS = {"reproduce": {"out"}}
#: argument names of the files a command reads, with how they are shown
INPUT_OPTIONS = {
    "data": "DATA",
    "model": "MODEL",
    "scores": "--scores",
    "qrels": "--qrels",
    "run": "--run",
    "validation": "--validation",
    "test": "--test",
    "query_file": "--query-file",
}


def positive_int(text: str) -> int:
    """An argparse ``type``: an integer of at least 1 (``--threads``, counts)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (1 or more), got {text!r}")
    return value


def _same_file(a: str, b: str) -> bool:
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        return False
    return os.path.realpath(a) == os.path.realpath(b)


def refuse_output_over_input(args: argparse.Namespace) -> None:
    """Raise :class:`~ndcglab.errors.NdcglabError` when a file the command would write
    (:data:`OUTPUT_OPTIONS`) is one of the files it reads (:data:`INPUT_OPTIONS`): the input
    would be overwritten. Names that are not files (``synthetic:...``) are ignored."""
    from ..errors import NdcglabError

    inputs: list[tuple[str, str]] = []
    for name, shown in INPUT_OPTIONS.items():
        value = getattr(args, name, None)
        for v in value if isinstance(value, list | tuple) else [value]:
            if isinstance(v, str | os.PathLike) and str(v) and not str(v).startswith("synthetic:"):
                inputs.append((shown, str(v)))
    for name, option in OUTPUT_OPTIONS.items():
        value = getattr(args, name, None)
        for out in value if isinstance(value, list | tuple) else [value]:
            if not isinstance(out, str | os.PathLike) or not str(out):
                continue
            for shown, path in inputs:
                if _same_file(str(out), path):
                    raise NdcglabError(
                        f"{option} {out} is the input {shown} {path}; writing it would overwrite "
                        f"the input (nothing was written). Fix: give {option} another file name"
                    )


def check_outputs(args: argparse.Namespace) -> None:
    """Before a command runs: raise the :class:`OSError` that writing any of its outputs
    (:data:`OUTPUT_OPTIONS`) would raise — a folder given for a file, a folder that cannot take
    the file, a FIFO or device not open for writing — so that a long job (``train``, ``cv``,
    ``reproduce``) fails at once rather than after its work (:func:`ndcglab._atomic.check_writable`;
    ``-`` is standard output)."""
    from .._atomic import check_writable

    folders = OUTPUT_FOLDERS.get(str(getattr(args, "command", "")), set())
    for name in OUTPUT_OPTIONS:
        value = getattr(args, name, None)
        for out in value if isinstance(value, list | tuple) else [value]:
            if isinstance(out, str | os.PathLike) and str(out):
                check_writable(out, folder=name in folders)


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


def add_cache_argument(parser: argparse.ArgumentParser) -> None:
    """``--cache``: keep a binary copy of every LETOR file the command reads, and read that copy
    instead while the file is unchanged (:func:`ndcglab.data.read_letor`'s ``cache=True``)."""
    parser.add_argument(
        "--cache",
        action="store_true",
        help="keep a binary copy of each LETOR file read (in $NDCGLAB_CACHE_DIR, default "
        "~/.cache/ndcglab) and read it instead next time, while the file's size, modification "
        "time and sha256 are unchanged",
    )


def read_options(args: argparse.Namespace, spec: Any) -> dict[str, Any]:
    """The read options for the dataset ``spec`` from the command line: ``cache=True`` with
    ``--cache`` for a file or folder (synthetic data is generated, never read: none)."""
    from ..data import is_synthetic_spec

    if not getattr(args, "cache", False) or is_synthetic_spec(str(spec)):
        return {}
    return {"cache": True}


def add_systems_parser(
    subparsers: Any,
    name: str,
    *,
    help_text: str,
    doc: str | None,
    noun: str,
    measure_help: str,
) -> argparse.ArgumentParser:
    """A sub-command that reads several systems' scores on one dataset (``compare``,
    ``distinguish``), described by the second paragraph of its module's ``doc``.

    It takes ``DATA``, ``--scores FILE`` (repeatable), ``--name NAME`` (one per ``--scores``;
    ``noun`` names what a score file is), ``--measure SPEC`` (repeatable, ``measure_help``) and
    ``--preset NAME``. The caller adds its own options."""
    description = doc.split("\n\n")[1] if doc else None
    p = subparsers.add_parser(name, help=help_text, description=description)
    add_systems_arguments(p, noun=noun)
    p.add_argument("--measure", action="append", default=None, metavar="SPEC", help=measure_help)
    p.add_argument("--preset", default=None, help="convention preset (default: standard)")
    return p


def add_systems_arguments(p: argparse.ArgumentParser, *, noun: str = "system") -> None:
    """``DATA``, ``--scores FILE`` (repeatable) and ``--name NAME`` (one per ``--scores``)."""
    p.add_argument("data", metavar="DATA", help="LETOR/SVMlight file or synthetic:NAME[:SEED]")
    p.add_argument(
        "--scores",
        action="append",
        required=True,
        metavar="FILE",
        help=f"score file (one score per document, in DATA's order); once per {noun}",
    )
    p.add_argument(
        "--name",
        action="append",
        default=None,
        metavar="NAME",
        help=f"{noun} name, once per --scores in the same order (default: the file names)",
    )
    add_cache_argument(p)


def system_names(files: list[str], names: list[str] | None) -> list[str]:
    """The names of the systems: ``--name`` values, else the score files' names (suffixes
    ``.gz``/``.txt``/``.scores``/``.score`` dropped while they stay distinct)."""
    from ..errors import ConventionError

    if names:
        if len(names) != len(files):
            raise ConventionError(
                f"{len(names)} --name for {len(files)} --scores. Fix: give one --name per --scores "
                "or none"
            )
        out = list(names)
    else:
        out = [Path(f).name for f in files]
        for suffix in (".gz", ".txt", ".scores", ".score"):
            stripped = [n[: -len(suffix)] if n.endswith(suffix) else n for n in out]
            if len(set(stripped)) == len(stripped) and all(stripped):
                out = stripped
        if len(set(out)) != len(out):
            out = [str(f) for f in files]
    if len(set(out)) != len(out):
        raise ConventionError(f"system names must differ, got {out}. Fix: pass --name")
    return out


def read_systems(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The dataset ``args.data`` and ``{name: scores}`` of every ``--scores`` file (each checked
    to hold one score per document)."""
    from ..data import load_dataset, read_scores

    ds = load_dataset(args.data, **read_options(args, args.data))
    names = system_names(args.scores, args.name)
    return ds, {n: read_scores(f, n_expected=ds.n_docs) for n, f in zip(names, args.scores)}
