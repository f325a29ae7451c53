"""trec_eval's command line, read as its ``getopt_long`` reads it (docs/trec_eval_cli.md).

Short options ``-hvqm:cl:nD:JN:M:R:T:oZ:`` (a value either attached, ``-M100``, ``-mP.5``, or as
the next word; flags may be grouped, ``-qc``), the long forms (``--measure=P.5``,
``--Max_retrieved_per_topic 100`` …, any unambiguous prefix), options and the two file names
in any order, ``--`` ending the options. Numbers are read with C's ``atol`` (``-l 1.5`` is
``-l 1``, ``-M x`` is ``-M 0``). ndcglab adds ``--trec-eval-version 9|10`` (default 9: trec_eval
9.0.8's rules; 10: trec_eval 10.0's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ._readers import TrecEvalError, atol
from ._run import Options

__all__ = ["CommandLine", "c_atol", "parse_command_line"]


def c_atol(text: str) -> int:
    """C's ``atol`` of an option's text: its leading integer (``1.5`` -> 1, ``x`` -> 0)."""
    return atol(text.encode("latin-1", "replace"))


_WITH_VALUE = set("mlDNMRTZ")
_FLAGS = set("hvqcnJo")
_LONG = {
    "help": "h",
    "version": "v",
    "query_eval_wanted": "q",
    "measure": "m",
    "complete_rel_info_wanted": "c",
    "level_for_rel": "l",
    "nosummary": "n",
    "Debug_level": "D",
    "Judged_docs_only": "J",
    "Number_docs_in_coll": "N",
    "Max_retrieved_per_topic": "M",
    "Rel_info_format": "R",
    "Results_format": "T",
    "Output_old_results_format": "o",
    "Zscore": "Z",
}
#: long options that take a value (trec_eval's table; -o's long form takes one too)
_LONG_VALUE = {"m", "l", "D", "N", "M", "R", "T", "Z", "o"}


@dataclass
class CommandLine:
    """A parsed command line: the options, the two files, and -h / -v."""

    options: Options
    files: list[str]
    help: bool
    version: bool


def _usage(what: str) -> TrecEvalError:
    return TrecEvalError(
        f"{what}. Fix: ndcglab trec_eval [-q] [-m measure[.params]]... [-c] [-l N] [-M N] [-J] "
        "[-n] [-N N] [-R qrels|prefs|qrels_prefs|qrels_jg] [-Z zscores] [--trec-eval-version "
        "9|10] QRELS RUN ('ndcglab trec_eval -h' explains each)",
        1,
    )


def _apply(o: Options, opt: str, value: str | None, flags: dict[str, bool]) -> None:
    if opt == "h":
        flags["help"] = True
    elif opt == "v":
        flags["version"] = True
    elif opt == "q":
        o.query_flag = True
    elif opt == "m":
        assert value is not None
        o.measures.append(value)
    elif opt == "c":
        o.average_complete = True
    elif opt == "l":
        o.relevance_level = atol(str(value).encode("latin-1"))
    elif opt == "n":
        o.summary = False
    elif opt == "D":
        level, dot, query = str(value).partition(".")
        o.debug_level = atol(level.encode("latin-1"))
        if dot:
            o.debug_query = query
    elif opt == "J":
        o.judged_only = True
    elif opt == "N":
        o.num_docs_in_coll = atol(str(value).encode("latin-1"))
    elif opt == "M":
        o.max_docs = atol(str(value).encode("latin-1"))
    elif opt == "R":
        o.rel_format = str(value)
    elif opt == "T":
        o.results_format = str(value)
    elif opt == "Z":
        o.zscores = str(value)
    # -o: obsolete, ignored (as trec_eval ignores it)


def parse_command_line(argv: Sequence[str]) -> CommandLine:
    """``argv`` (without the program name) as trec_eval reads it (module docstring)."""
    o = Options()
    flags = {"help": False, "version": False}
    files: list[str] = []
    args = list(argv)
    i = 0
    version_given = False
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            files += args[i:]
            break
        if a.startswith("--trec-eval-version") or a.startswith("--trec_eval_version"):
            _, eq, value = a.partition("=")
            if not eq:
                if i >= len(args):
                    raise _usage("--trec-eval-version needs a value (9 or 10)")
                value = args[i]
                i += 1
            if value not in ("9", "10", "9.0.8", "10.0"):
                raise _usage(f"--trec-eval-version {value}: give 9 (9.0.8) or 10 (10.0)")
            o.version = 10 if value.startswith("10") else 9
            version_given = True
            continue
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
            hits = [k for k in _LONG if k.startswith(name)] if name else []
            exact = [k for k in hits if k == name]
            if exact:
                hits = exact
            if len(hits) != 1:
                what = "ambiguous" if hits else "unknown"
                raise _usage(f"{what} option '{a}'")
            opt = _LONG[hits[0]]
            if opt in _LONG_VALUE:
                if not eq:
                    if i >= len(args):
                        raise _usage(f"option '--{hits[0]}' needs a value")
                    value = args[i]
                    i += 1
                _apply(o, opt, value, flags)
            else:
                if eq:
                    raise _usage(f"option '--{hits[0]}' takes no value")
                _apply(o, opt, None, flags)
            continue
        if a.startswith("-") and a != "-":
            k = 1
            while k < len(a):
                opt = a[k]
                k += 1
                if opt in _WITH_VALUE:
                    if k < len(a):
                        value = a[k:]
                    else:
                        if i >= len(args):
                            raise _usage(f"option '-{opt}' needs a value")
                        value = args[i]
                        i += 1
                    _apply(o, opt, value, flags)
                    break
                if opt in _FLAGS:
                    _apply(o, opt, None, flags)
                    continue
                raise _usage(f"unknown option '-{opt}'")
            continue
        files.append(a)
    del version_given
    return CommandLine(o, files, flags["help"], flags["version"])
