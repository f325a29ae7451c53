"""Helpers shared by the sub-command modules: output formats, progress bars, text tables
(:func:`format_table`, from :mod:`ndcglab._tables`) and the arguments of the commands that
compare several score files.

Every command that prints results takes ``--format text|json``. In JSON it prints one object whose
key ``"mean"`` maps each measure's printed name to its mean, plus whatever else the command reports
(``"queries"``, ``"empty_queries"``, ``"convention"``, ``"std"``, ``"folds"`` ...).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from .._tables import format_table

__all__ = [
    "INPUT_OPTIONS",
    "OUTPUT_OPTIONS",
    "add_cache_argument",
    "add_format_argument",
    "add_model_parser",
    "add_systems_arguments",
    "add_systems_parser",
    "check_numbers",
    "check_outputs",
    "emit",
    "format_table",
    "number_range",
    "positive_int",
    "progress",
    "read_options",
    "read_systems",
    "refuse_output_over_input",
    "strict_float",
    "strict_int",
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
    "stats": "--stats",
}
#: outputs that are folders written as a whole (a report, a fold folder), per sub-command
OUTPUT_FOLDERS: dict[str, Callable[[argparse.Namespace], set[str]]] = {
    "reproduce": lambda args: {"out"},
    "generate": lambda args: {"out"} if getattr(args, "n_folds", None) else set(),
}
#: outputs that are images, and the image types matplotlib writes (checked before the work)
PLOT_OPTIONS = {"plot", "plot_stability"}
IMAGE_TYPES = {
    *("avif", "eps", "gif", "jpeg", "jpg", "pdf", "pgf", "png"),
    *("ps", "raw", "rgba", "svg", "svgz", "tif", "tiff", "webp"),
}
#: outputs that cannot be standard output: a binary file the command's own summary would follow
NOT_TO_STDOUT: dict[str, set[str]] = {"train": {"out"}}
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


def strict_int(text: str) -> int:
    """An argparse ``type`` for every ``type=int`` option (registered by the parser): a whole
    number in ASCII digits, as the file readers take them (no ``３``, ``1_000`` or 5,000 digits);
    each option's range is checked by :func:`check_numbers`."""
    from .._spec import parse_int

    try:
        return parse_int(
            text, what="value", lo=-(2**63), hi=2**63 - 1, fix="write a whole number in ASCII "
            "digits, e.g. 10"
        )  # fmt: skip
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def strict_float(text: str) -> float:
    """An argparse ``type`` for every ``type=float`` option: a finite decimal number in ASCII
    (no ``nan``, ``inf``, ``1_0``); each option's range is checked by :func:`check_numbers`."""
    from .._spec import parse_real

    try:
        return parse_real(
            text, what="value", fix="write a finite decimal number, e.g. 0.01 or 1e-3"
        )
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def positive_int(text: str) -> int:
    """An argparse ``type``: a whole number of at least 1 (``--threads``, counts), in ASCII."""
    from .._spec import parse_int

    try:
        return parse_int(text, what="value", lo=1, hi=2**63 - 1)
    except ValueError:
        shown = text if len(text) <= 40 else text[:20] + "..." + text[-10:]
        raise argparse.ArgumentTypeError(
            f"must be a positive integer (1 or more), got {shown!r}"
        ) from None


#: ``dest -> (option, lo, hi, what it is)``: the range of every numeric option, checked after
#: parsing by :func:`check_numbers` (``None``: no bound on that side). A value outside is one
#: error line naming the option, the value and the range, never an exception deeper down.
NUMBER_RANGES: dict[str, tuple[str, float | None, float | None, str]] = {
    "seed": ("--seed", 0, 2**31 - 1, "a seed"),
    "batch_size": ("--batch-size", 1, 1_000_000_000, "a number of queries per batch"),
    "threads": ("--threads", 1, 1024, "a number of threads"),
    "hidden": ("--hidden", 1, 65_536, "a hidden layer's width"),
    "queries": ("--queries", 1, 10_000_000, "a number of queries"),
    "epochs": ("--epochs", 1, 100_000_000, "a number of epochs"),
    "patience": ("--patience", 1, 100_000_000, "a number of epochs"),
    "rounds": ("--rounds", 1, 100_000_000, "a number of boosting rounds"),
    "num_leaves": ("--num-leaves", 2, 131_072, "a number of leaves (LightGBM's range)"),
    "min_data_in_leaf": ("--min-data-in-leaf", 0, 2**31 - 1, "a number of documents"),
    "feature": ("--feature", 1, 2**31 - 1, "a 1-based feature index"),
    "max_docs": ("--max-docs", 1, 2**31 - 1, "a number of documents"),
    "top": ("--top", 0, 2**31 - 1, "a number of queries"),
    "points": ("--points", 2, 100_000, "a number of list sizes"),
    "n_max": ("--n-max", 1, 2**31 - 1, "a list size"),
    "n_folds": ("--folds", 3, 1000, "a number of folds"),
    "repeats": ("--repeats", 0, 100_000, "a number of repetitions"),
    "resamples": ("--resamples", 1, 100_000_000, "a number of resamples"),
    "distributions": ("--distributions", 1, 10_000_000, "a number of distributions"),
    "restarts": ("--restarts", 1, 100_000, "a number of restarts"),
    "lr": ("--lr", 0.0, None, "a learning rate (> 0)"),
    "tol": ("--tol", 0.0, None, "a tolerance"),
    "gtol": ("--gtol", 0.0, None, "a tolerance"),
    "l2": ("--l2", 0.0, None, "an L2 penalty"),
    "C": ("--C", 0.0, None, "RankSVM's C (> 0)"),
    "dropout": ("--dropout", 0.0, 1.0, "a dropout rate in [0, 1)"),
    "heads": ("--heads", 1, 4096, "a number of attention heads"),
    "blocks": ("--blocks", 0, 1000, "a number of encoder blocks"),
    "ff_width": ("--ff-width", 1, 1_048_576, "a feed-forward width"),
    "noise": ("--noise", 0.0, None, "a noise standard deviation"),
    "ensemble": ("--ensemble", 1, 1000, "a number of seeds"),
    "margin": ("--margin", 0.0, None, "a margin"),
}
#: options whose lower bound is excluded (a learning rate of 0 learns nothing)
_OPEN_LOW = {"lr", "C"}
_OPEN_HIGH = {"dropout"}


def number_range(dest: str) -> str:
    """The range of the numeric option ``dest`` as text: ``in [1, 1024]``, ``> 0``."""
    from .._spec import format_number

    _, lo, hi, _ = NUMBER_RANGES[dest]
    a = "(" if dest in _OPEN_LOW else "["
    b = ")" if dest in _OPEN_HIGH else "]"
    if lo is not None and hi is not None:
        return f"in {a}{format_number(lo)}, {format_number(hi)}{b}"
    if lo is not None:
        return f"{'>' if dest in _OPEN_LOW else '>='} {format_number(lo)}"
    return f"<= {format_number(hi)}" if hi is not None else "finite"


def check_numbers(args: argparse.Namespace) -> None:
    """Raise :class:`~ndcglab.errors.NdcglabError` when a numeric option is outside its range
    (:data:`NUMBER_RANGES`): one line naming the option, the value, the range and the fix."""
    from .._spec import format_number
    from ..errors import NdcglabError

    for dest, (option, lo, hi, what) in NUMBER_RANGES.items():
        value = getattr(args, dest, None)
        values = value if isinstance(value, list | tuple) else [value]
        for v in values:
            if isinstance(v, bool) or not isinstance(v, int | float):
                continue
            low = lo is not None and (v < lo or (dest in _OPEN_LOW and v == lo))
            high = hi is not None and (v > hi or (dest in _OPEN_HIGH and v == hi))
            if low or high:
                where = number_range(dest)
                raise NdcglabError(
                    f"{option} {format_number(v)} is out of range: {what} must be {where}. "
                    f"Fix: give {option} a value {where}"
                )


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
    from ..errors import NdcglabError

    command = str(getattr(args, "command", ""))
    which = OUTPUT_FOLDERS.get(command)
    folders = which(args) if which is not None else set()
    for name, option in OUTPUT_OPTIONS.items():
        value = getattr(args, name, None)
        for out in value if isinstance(value, list | tuple) else [value]:
            if not (isinstance(out, str | os.PathLike) and str(out)):
                continue
            if name in NOT_TO_STDOUT.get(command, ()) and str(out) in ("-", "/dev/stdout"):
                raise NdcglabError(
                    f"{command} {option} {out}: the output would be mixed with the summary "
                    f"printed on standard output. Fix: give {option} a file name (or a FIFO)"
                )
            if name in PLOT_OPTIONS:
                suffix = Path(str(out)).suffix.lower().lstrip(".")
                if suffix and suffix not in IMAGE_TYPES:
                    raise NdcglabError(
                        f"{option} {out}: .{suffix} is not an image type (nothing was computed). "
                        f"Fix: end the file name in one of "
                        f"{', '.join('.' + t for t in sorted(IMAGE_TYPES))}"
                    )
            check_writable(out, folder=name in folders)


def add_format_argument(
    parser: argparse.ArgumentParser, extra: tuple[str, ...] = (), extra_help: str = ""
) -> None:
    """Add ``--format text|json`` (default text), plus the formats ``extra``."""
    parser.add_argument(
        "--format",
        choices=("text", "json", *extra),
        default="text",
        help="output format: a readable table (text) or one JSON object (json)" + extra_help,
    )


def _jsonable(x: Any) -> Any:
    import numpy as np  # here, not at the top: ``ndcglab --help`` needs no NumPy

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
    import json  # here: only --format json needs it

    return json.dumps(_jsonable(obj), indent=2)


def emit(args: argparse.Namespace, payload: Mapping[str, Any], text: Callable[[], str]) -> None:
    """Print ``payload`` as JSON under ``--format json``, else the text from ``text()``."""
    if getattr(args, "format", "text") == "json":
        sys.stdout.write(to_json(payload) + "\n")
    else:
        from .._warn import terminal_safe  # (a file name's control characters, escaped)

        sys.stdout.write(terminal_safe(text().rstrip("\n"), keep_layout=True) + "\n")


def progress(
    iterable: Iterable[T], *, desc: str, total: int | None = None, enable: bool = True
) -> Iterable[T]:
    """A tqdm progress bar on stderr, shown only when stderr is a terminal (and ``enable``)."""
    if not enable or not sys.stderr.isatty():
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, desc=desc, total=total, file=sys.stderr, leave=False)


def add_model_parser(
    subparsers: Any, name: str, help_text: str, doc: str | None
) -> argparse.ArgumentParser:
    """A sub-command that reads a model file (``predict``, ``export``), described by the second
    paragraph of its module's ``doc``: it takes ``MODEL``; the caller adds its own options."""
    from ._help import description

    p = subparsers.add_parser(name, help=help_text, description=description(doc))
    p.add_argument("model", metavar="MODEL", help="model file from ndcglab train --out")
    return p


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


def add_measure_arguments(
    p: argparse.ArgumentParser, *, preset_help: str, trec_group: str
) -> argparse._ArgumentGroup:
    """The measure options ``evaluate`` and ``compare`` share: ``-m/--measure``, ``--preset``
    and trec_eval's ``-c``, ``-M``, ``-J``, ``-l``, ``--score-precision`` (in a group titled
    ``trec_group``, returned so that a command can add its own to it)."""
    p.add_argument(
        "-m",
        "--measure",
        action="append",
        default=None,
        metavar="SPEC",
        help="measure, e.g. ndcg@10, 'ndcg(ties=average)@5', trec_eval's ndcg_cut.5,10 or "
        "ir_measures' nDCG@10; repeatable (default: the preset's usual set)",
    )
    p.add_argument("--preset", default=None, metavar="NAME", help=preset_help)
    t = p.add_argument_group(trec_group, "named as in trec_eval; -c, -M and -J apply to --qrels")
    t.add_argument(
        "-c",
        "--all-queries",
        action="store_true",
        help="average over every query of the qrels; a query a run misses scores 0 (trec_eval "
        "9; --preset trec_eval10: evaluated against one unjudged document, as trec_eval 10)",
    )
    t.add_argument(
        "-M",
        "--max-docs",
        type=int,
        default=None,
        metavar="N",
        help="only the first N documents of each ranking (by score, then docno descending)",
    )
    t.add_argument(
        "-J",
        "--judged-only",
        action="store_true",
        help="rank only the judged documents (unjudged ones are dropped from the run)",
    )
    t.add_argument(
        "-l",
        "--rel-level",
        default=None,
        metavar="N",
        help="relevance level: a label >= N counts as relevant (the preset option rel=N)",
    )
    t.add_argument(
        "--score-precision",
        default=None,
        metavar="P",
        help="precision at which scores are compared (ties): float32 = trec_eval9 = "
        "pytrec_eval (C float), float64 = trec_eval10 (C double); default: the preset's. Only "
        "the score precision: --preset trec_eval10 has every rule of trec_eval 10",
    )
    return t
