"""``ndcglab reproduce NAME [--data PATH] [--quick] [--seed N] [--normalize KIND] --out DIR
[--format json]``.

Runs one of the papers' experiments (or ``all``) and writes a report folder: ``index.html`` with
plots and tables, the tables as CSV/Markdown/LaTeX, and ``results.json`` (every number, dataset
hashes, seeds, package versions). The folder appears only when the run succeeds. The first run
on a machine takes longer than the next ones: Numba compiles the measure kernels and caches them.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._warn import terminal_safe
from ._common import add_format_argument, emit

_EPILOG = """experiments:
  cost-sensitive      Lu et al. 2010, Tables 1-6: CS-ListMLE@1/3/5/10 vs ListMLE, ListNet,
                      RankCosine, AdaRank, RankSVM; 5 folds; N@1/3/5/10, MAP; t-test on N@1
  consistency         Ravikumar et al. 2011, Fig. 1: cosine/squared/ListNet, original vs
                      NDCG-consistent (Z_1, Z_10, Z); NDCG@1..10; randomisation tests
  qnorm               Ravikumar et al. 2011, Fig. 2: normalised q-norm vs cosine vs ListNet
  distinguishability  Wang et al. 2013, Figures 1-4: mean NDCG vs list size n for RankSVM,
                      ListNet and a random ranker (log, r^-1/2, 2^-r, NDCG@n/5)
  limits              Wang et al. 2013, Theorems 1-13: limits of NDCG vs simulation
  linear-ndcg         Jin & Geng 2010: DCG^beta_ideal - DCG^beta_f = R(f) on every query
  consistency-audit   Ravikumar et al. 2011, Prop. 7 and Thms 8-9: numerical NDCG-consistency
                      verdict of the squared, cosine and ListNet losses and their Z-normalised
                      versions (no --data)
  all                 every experiment into sub-folders, with an index page

--data is a LETOR folder with Fold1..5 (e.g. LETOR 4.0's MQ2008) or a single LETOR file;
without it the embedded synthetic data are used. The page names the data by path, sizes and
hashes. --normalize sets the feature normalisation of every trained model, as in `cv` (default
zscore, the experiments' own; raw-feature collections need one). --quick runs fewer
folds/epochs/repetitions and smaller sizes, and says so in the report.
"""


def _epilog(names: tuple[str, ...]) -> str:
    """:data:`_EPILOG`, with a line for any registered experiment it does not describe."""
    described = {line.split()[0] for line in _EPILOG.splitlines() if line.startswith("  ")}
    missing = [n for n in names if n not in described]
    if not missing:
        return _EPILOG
    head, sep, tail = _EPILOG.partition("  all ")
    extra = "".join(f"  {n:<18}  see docs/reproduce.md\n" for n in missing)
    return head + extra + sep + tail


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    from ..reproduce import NAMES

    p = subparsers.add_parser(
        "reproduce",
        help="reproduce a paper's experiment and write an HTML/CSV/LaTeX/JSON report",
        description=(
            "Run one of the papers' experiments (or all) and write a report folder: index.html "
            "with plots and tables, the tables as CSV/Markdown/LaTeX, and results.json (every "
            "number, dataset hashes, seeds, package versions). The folder appears only when the "
            "run succeeds. The first run on a machine takes longer than the next ones: Numba "
            "compiles the measure kernels and caches them."
        ),
        epilog=_epilog(NAMES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("name", choices=NAMES, metavar="NAME", help="experiment: " + ", ".join(NAMES))
    p.add_argument(
        "--data",
        default=None,
        metavar="PATH",
        help="LETOR folder with Fold1..5, or one LETOR file (default: embedded synthetic data)",
    )
    p.add_argument(
        "--quick",
        action="store_true",
        help="reduced run: fewer folds, epochs, repetitions and smaller n",
    )
    p.add_argument("--seed", type=int, default=0, help="master seed (default 0)")
    from ..data.normalize import NORMALIZATIONS

    p.add_argument(
        "--normalize",
        default="zscore",
        choices=NORMALIZATIONS,
        help="feature normalisation of every trained model, as `cv --normalize` "
        "(default zscore, the experiments' own)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="DIR",
        help="report folder to write (created atomically; an earlier report there is replaced)",
    )
    p.add_argument(
        "--mode", choices=("full", "quick", "tiny"), default=None, help=argparse.SUPPRESS
    )
    p.add_argument("-q", "--quiet", action="store_true", help="no progress messages on stderr")
    add_format_argument(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..reproduce import run_experiment
    from ..reproduce.report.bundle import check_report_destination
    from ..reproduce.verdicts import DISAGREES, verdict_of

    check_report_destination(args.out)  # refuse a folder ndcglab did not write before the run

    def log(msg: str) -> None:
        if not args.quiet:
            print(f"ndcglab reproduce: {terminal_safe(msg)}", file=sys.stderr, flush=True)

    command = ["ndcglab", "reproduce", args.name]
    if args.data:
        command += ["--data", str(args.data)]
    if args.quick:
        command.append("--quick")
    command += ["--seed", str(args.seed)]
    if args.normalize != "zscore":
        command += ["--normalize", args.normalize]
    command += ["--out", str(args.out)]
    folder, report = run_experiment(
        args.name,
        args.out,
        data=args.data,
        quick=args.quick,
        seed=args.seed,
        mode=args.mode,
        command=command,
        log=log,
        normalize=args.normalize,
    )
    payload = {
        "experiment": args.name,
        "out": str(folder),
        "html": str(folder / "index.html"),
        "quick": report.quick,
        "seed": args.seed,
        "normalize": args.normalize,
        "elapsed_s": report.elapsed_s,
        "findings": report.findings,
        "mean": _means(report),
    }
    if args.name == "all":
        payload["experiments"] = report.results

    def text() -> str:
        lines = [f"report written to {folder}/index.html  ({report.elapsed_s:.1f} s)"]
        findings = report.findings
        if args.name == "all":
            findings = [
                dict(f, claim=f"[{sub}] {f['claim']}")
                for sub, r in report.results.items()
                for f in r["findings"]
            ]
        if findings:
            lines.append("")
            lines.append("comparison with the papers' claims:")
        for f in findings:
            verdict = verdict_of(f)
            verdict = verdict.upper() if verdict == DISAGREES else verdict
            lines.append(f"  {verdict:<12} {f['claim']}")
            lines.append(f"  {'':<12}   {f.get('reason') or f['observed']}")
        return "\n".join(lines)

    emit(args, payload, text)
    return 0


def _means(report: Any) -> dict[str, Any]:
    """The report's headline numbers (``results["mean"]`` when the experiment sets it)."""
    res = getattr(report, "results", {})
    return res.get("mean", {}) if isinstance(res, dict) else {}
