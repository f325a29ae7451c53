"""``ndcglab`` command line: a thin layer over the library, one module per sub-command.

Each sub-command module in :mod:`ndcglab.cli` defines ``add_parser(subparsers)`` (which registers
its parser and sets ``func``) and a ``run(args) -> int``.

What the user sees on failure is always **one line** on stderr, never a traceback:

* a library error (:class:`NdcglabError`) or a bad command line: ``ndcglab: error: what — where —
  the fix``, exit status 2 (the same for argparse's own errors, and ``--threads 0``);
* an operating-system error (disk full, a write limit, permission denied, a missing folder):
  ``ndcglab: error: cannot ... PATH: reason. Fix: ...``, exit status 1; writes are atomic, so a
  file being replaced keeps its old content;
* Ctrl-C: ``ndcglab: error: interrupted ...``, exit status 130;
* anything else (a bug): ``ndcglab: error: internal error (...)`` with exit status 70 and a
  request to report it; ``NDCGLAB_DEBUG=1`` shows the traceback.

Warnings are printed as one line each, ``ndcglab: warning: ...``. Before a command runs, an
output path that is one of its inputs (``predict M data.txt --out data.txt``) is refused, and
every output is checked to be writable (:func:`ndcglab.cli._common.check_outputs`).
"""

from __future__ import annotations

import errno
import os
import sys

from .. import __version__
from ..errors import NdcglabError

# Imported here only for the type checker: ``ndcglab --version`` (the console script imports
# this module) loads neither typing nor re nor argparse; the functions import what they need.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    import re
    from collections.abc import Container, Sequence
    from typing import Any

#: sub-command name -> (module in ndcglab.cli, one-line help). Modules are imported only when
#: their command runs (or for ``--help`` of that command), so ``ndcglab --help`` stays fast and
#: measuring never imports torch.
COMMANDS: dict[str, tuple[str, str]] = {
    "evaluate": ("evaluate", "evaluate scores against a LETOR file or a TREC run"),
    "explain": ("explain", "why two conventions give different means, option by option"),
    "describe": ("describe", "describe a dataset: queries, documents, labels, list lengths"),
    "generate": ("generate", "write a seeded synthetic LETOR dataset"),
    "train": ("train", "train a ranker with a registered loss"),
    "predict": ("predict", "score a dataset with a saved model"),
    "export": ("export", "write a model as ONNX, TorchScript or LightGBM/XGBoost model text"),
    "cv": ("cv", "cross-validate losses over LETOR folds"),
    "compare": ("compare", "compare rankers with significance tests"),
    "distinguish": ("distinguish", "mean NDCG against list size: distinguishability curves"),
    "reproduce": ("reproduce", "reproduce the papers' experiments as reports"),
    "list": ("list", "list the measures, losses, presets or experiments with their parameters"),
    "audit-consistency": ("audit", "is a loss NDCG-consistent? numerical audit, counter-examples"),
    "clicks": ("clicks", "simulate click logs, fit click models, evaluate rankers from clicks"),
    "trec_eval": ("trec_eval", "trec_eval's command line and output, byte for byte"),
}

#: the commands that multiply no matrices: NumPy is imported for them with OpenBLAS on one thread
#: (:func:`ndcglab._compat.import_numpy_one_blas_thread`), unless the user chose the threads
NO_BLAS_COMMANDS = frozenset({"evaluate", "trec_eval", "list"})


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The argument parser; with ``only``, just that sub-command's module is imported (and,
    when ``only`` names a sub-command, the others are left out: argparse would only look them
    up for a help listing or an unknown name, which ``main`` builds the whole parser for).
    Defined in :mod:`ndcglab.cli._parser`, which imports argparse."""
    from ._parser import build_parser as build

    return build(only)


#: the name of one of ndcglab's temporary files (:mod:`ndcglab._atomic`): its target's is group 1
_TEMP_NAME = r"^\.(.+)\.\d+\.[A-Za-z0-9_]+\.ndcglab-tmp$"


def _shown_path(name: Any) -> str:
    """A path for messages: the target of one of ndcglab's temporary files, else itself; with
    its control characters escaped (:func:`ndcglab._warn.terminal_safe`)."""
    from .._warn import terminal_safe

    if name is None:
        return ""
    text = os.fsdecode(name) if isinstance(name, bytes | os.PathLike) else str(name)
    head, tail = os.path.split(text)
    import re

    m = re.match(_TEMP_NAME, tail)
    return terminal_safe(os.path.join(head, m.group(1)) if m else text)


def os_error_message(exc: OSError) -> str:
    """One line for an operating-system error: what, where, and the fix."""
    where = _shown_path(exc.filename)
    if exc.filename2 is not None:
        where += f" -> {_shown_path(exc.filename2)}"
    reason = exc.strerror or str(exc) or type(exc).__name__
    code = exc.errno
    if code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        fix = (
            "free disk space (or raise the file-size limit) or write elsewhere; a file being "
            "replaced keeps its old content"
        )
    elif code in (errno.EACCES, errno.EPERM, errno.EROFS):
        fix = "check the permissions of the file and its folder, or write elsewhere"
    elif code == errno.ENOENT:
        fix = "check the path (does the folder exist?)"
    elif code in (errno.EISDIR, errno.ENOTDIR):
        fix = "give a file where a file is expected and a folder where a folder is"
    else:
        fix = "check the path and the disk, then run the command again"
    where_txt = f" ({where})" if where else ""
    return f"ndcglab: error: {reason}{where_txt}. Fix: {fix}"


def _one_line_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    line: str | None = None,
) -> str:
    from .._warn import terminal_safe

    text = terminal_safe(" ".join(str(message).split()))
    return f"ndcglab: warning: {text}\n"


#: the Python parameter -> the command-line option, for library errors that name a parameter to
#: change (:attr:`NdcglabError.parameters <ndcglab.errors.NdcglabError.parameters>`)
OPTION_OF: dict[str, str] = {
    "checkpoint": "--checkpoint",
    "l2": "--l2",
    "lr": "--lr",
    "measure": "--measure",
    "normalize": "--normalize",
    "resume": "--resume",
    "validation": "--validation",
    # clicks evaluate / train --clicks
    "empty": "--empty",
    "estimator": "--estimator",
    "examination": "--examination",
    "level": "--level",
    "normaliser": "--normaliser",
    "tau": "--tau",
    "trust_offset": "--trust-offset",
}


#: Python parameters that only some commands have as an option: parameter -> (the words with
#: the option, the words of a command without it); they replace ``[pass ]name=``
OPTION_OF_SOME: dict[str, tuple[str, str]] = {
    "query_file": ("pass --query-file FILE", "put beside the data a file named DATA.query"),
}


def error_text(exc: NdcglabError, options: Container[str] | None = None) -> str:
    """The message of a library error as the command line shows it: each Python parameter that
    the error names (``name=`` or ``name=value``, :class:`~ndcglab.errors.NdcglabError`) becomes
    its option (``--name``, ``--name value`` with the value quoted for the shell where needed;
    ``=True`` the bare flag). A parameter of :data:`OPTION_OF_SOME` becomes its option when the
    running command has it (``options``: the command's argument names; None: assume it does),
    else the words that say what to do without it — never the Python keyword."""
    import re

    text = str(exc)
    for name in getattr(exc, "parameters", ()):
        if name in OPTION_OF_SOME:
            has = options is None or name in options
            flag_or_words = OPTION_OF_SOME[name][0 if has else 1]
            pattern = rf"(?:pass )?(?<![\w.,-]){re.escape(name)}=(?![\w'\"])"
            text = re.sub(pattern, flag_or_words, text)
            continue
        flag = OPTION_OF.get(name)
        if flag is None:
            continue

        def option(m: re.Match[str], flag: str = flag) -> str:
            value = m.group(1)
            if value in ("", "True"):
                return flag
            if value[0] in "'\"":
                value = value[1:-1]
            import shlex  # here: only an error message that names an option needs it

            return f"{flag} {shlex.quote(value)}"

        # not a key inside a spec: ``ndcg(lr=1)``, ``(a=1,lr=2)``
        pattern = rf"(?<![\w.,-])(?<!\w\(){re.escape(name)}=('[^']*'|\"[^\"]*\"|[^\s,;)]*)"
        text = re.sub(pattern, option, text)
    return text


#: the fix of an error message that names none (every error line says what to do next)
GENERIC_FIX = "Fix: check the value this message names against the command's help"
#: the sub-command being run, named in :data:`GENERIC_FIX`'s pointer to its help
_running = {"command": ""}


def _error(text: str) -> None:
    """Print one error line; one without its own fix gets :data:`GENERIC_FIX`, with the
    running command's help named (``ndcglab train --help``). Control characters (in a file
    name) are escaped: :func:`ndcglab._warn.terminal_safe`."""
    from .._warn import terminal_safe

    line = terminal_safe(" ".join(text.split()))
    if "Fix:" not in line:
        where = " ".join(("ndcglab", _running["command"], "--help")).replace("  ", " ")
        line = f"{line.rstrip('.')}. {GENERIC_FIX} ('{where}')"
    print(line, file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ndcglab ARGV``; returns the exit status (see the module docstring)."""
    if (sys.argv[1:] if argv is None else list(argv)) == ["--version"]:
        print(f"ndcglab {__version__}")  # before any parser is built: nothing to import
        return 0
    import warnings

    saved_format = warnings.formatwarning
    warnings.formatwarning = _one_line_warning
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print(
            "ndcglab: error: interrupted (Ctrl-C); a file being written keeps its old content. "
            "Fix: run the command again",
            file=sys.stderr,
        )
        return 130
    except Exception as exc:  # a bug outside a command (a sub-command that fails to import)
        return _internal_error(exc)
    finally:
        warnings.formatwarning = saved_format


def _internal_error(exc: Exception) -> int:
    """One line for a bug (exit status 70); ``NDCGLAB_DEBUG=1`` re-raises for the traceback."""
    if os.environ.get("NDCGLAB_DEBUG"):
        raise exc
    _error(
        f"ndcglab: error: internal error ({type(exc).__name__}: {exc}). Fix: please report "
        "it with the command line; NDCGLAB_DEBUG=1 shows the traceback"
    )
    return 70


def _main(argv: Sequence[str] | None) -> int:
    whole_process = argv is None  # the console script: this process is the command
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = next((a for a in argv if not a.startswith("-")), None)
    _running["command"] = chosen if chosen in COMMANDS else ""
    import gc

    # Start-up (NumPy, the command's modules, its parser) creates tens of thousands of objects
    # that live as long as the process, and no cyclic garbage: the cycle collector, which
    # would scan them again and again while they are created, waits until the command runs.
    collecting = gc.isenabled()
    gc.disable()
    try:
        if chosen in NO_BLAS_COMMANDS:
            from .._compat import import_numpy_one_blas_thread

            import_numpy_one_blas_thread()
        parser = build_parser(only=chosen if chosen in COMMANDS else "")
        args = parser.parse_args(argv)
    except NdcglabError as exc:
        _error(f"ndcglab: error: {error_text(exc)}")
        return 2
    finally:
        if collecting:
            if whole_process:  # the start-up's objects stay: no collection need scan them again
                gc.freeze()
            gc.enable()
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        from ._common import check_numbers, check_outputs, refuse_output_over_input

        check_numbers(args)
        refuse_output_over_input(args)
        check_outputs(args)
        return int(args.func(args) or 0)
    except NdcglabError as exc:
        _error(f"ndcglab: error: {error_text(exc, vars(args))}")
        return 2
    except BrokenPipeError:  # pragma: no cover - e.g. `ndcglab ... | head`
        return 0
    except OSError as exc:
        _error(os_error_message(exc))
        return 1
    except MemoryError:
        _error(
            "ndcglab: error: out of memory. Fix: use a smaller input, fewer features or a "
            "smaller model, or a machine with more memory"
        )
        return 1
    except Exception as exc:
        if type(exc).__name__ == "LightGBMError" and "Check failed" in str(exc):
            # LightGBM's own parameter checks (num_leaves <= 131072, learning_rate > 0, ...)
            what = str(exc).split(" at ")[0].strip()
            _error(
                f"ndcglab: error: LightGBM refused a boosting parameter ({what}). Fix: give "
                "--gbdt-param, --num-leaves and --min-data-in-leaf values LightGBM accepts"
            )
            return 2
        return _internal_error(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
