"""``ndcglab trec_eval [trec_eval's options] QRELS RUN``: trec_eval, byte for byte.

The command line is trec_eval's (``-q``, ``-m measure[.params]``, ``-c``, ``-l``, ``-n``, ``-D``,
``-J``, ``-N``, ``-M``, ``-R``, ``-T``, ``-Z``, ``-o``, ``-h``, ``-v``, their long forms), plus
``--trec-eval-version 9|10`` (default 9: trec_eval 9.0.8; 10: trec_eval 10.0). The output on
stdout is trec_eval's; an input trec_eval refuses is one ``ndcglab: error:`` line on stderr and
trec_eval's exit status (1: the command line, 2: a file or a measure's parameters, 4: a topic
that cannot be evaluated, 7: no topic in common). The rules: docs/trec_eval_cli.md.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

__all__ = ["add_parser", "help_text", "run"]


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "trec_eval",
        help="trec_eval's command line and output, byte for byte (9.0.8 or 10.0)",
        add_help=False,
        prefix_chars="\x00",
    )
    p.add_argument("argv", nargs="*")
    p.set_defaults(func=run)
    return p


def help_text(version: int) -> str:
    """What ``-h`` prints: the options and trec_eval's measures with their parameters."""
    from ..treceval import measure_sets, measure_table

    lines = [
        "ndcglab trec_eval [-h] [-q] [-m measure[.params]] [-c] [-n] [-l N] [-D debug[.query]]",
        "                  [-J] [-N N] [-M N] [-R rel_format] [-T results_format] [-Z file]",
        "                  [--trec-eval-version 9|10] QRELS RUN",
        "",
        "trec_eval's rules and output, byte for byte (default: trec_eval 9.0.8).",
        "  -q   also print each topic's values      -c   average over every judged topic",
        "  -m   a measure or set, with parameters after a dot: P.5,10  ndcg.1=3,2=9",
        "  -l N relevance level (default 1)         -M N keep the first N documents",
        "  -J   rank judged documents only          -n   no 'all' lines",
        "  -N N documents in the collection (utility)",
        "  -R   qrels | prefs | qrels_prefs | qrels_jg    -Z  z-score file (topic measure mean sd)",
        "",
        f"measures of trec_eval {'10.0' if version >= 10 else '9.0.8'} (table order):",
    ]
    table = measure_table(version)
    names = [m.name + (" (params)" if m.default is not None else "") for m in table]
    for k in range(0, len(names), 4):
        lines.append("  " + "  ".join(f"{n:<26s}" for n in names[k : k + 4]).rstrip())
    lines.append("sets: " + ", ".join(measure_sets(version)))
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    from .._warn import warn_user
    from ..treceval import TrecEvalError, parse_command_line, run_trec_eval

    argv = list(args.argv)
    try:
        cl = parse_command_line(argv)
        if cl.help:
            sys.stdout.write(help_text(cl.options.version))
            return 0
        if cl.version:
            v = "10.0" if cl.options.version >= 10 else "9.0.8"
            sys.stderr.write(f"trec_eval version {v} (ndcglab trec_eval)\n")
            return 0
        text = run_trec_eval(argv, warn=warn_user)
    except TrecEvalError as exc:
        if exc.output:  # what trec_eval prints before it stops
            sys.stdout.buffer.write(exc.output.encode("latin-1"))
            sys.stdout.flush()
        message = " ".join(str(exc).split())
        if "Fix:" not in message:
            message += ". Fix: see 'ndcglab trec_eval -h'"
        print(f"ndcglab: error: {message}", file=sys.stderr)
        return exc.status
    sys.stdout.buffer.write(text.encode("latin-1"))
    sys.stdout.flush()
    return 0
