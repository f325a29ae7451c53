"""Every number a user types is checked: odd values for every numeric option of every
sub-command, and for the numbers inside measure specs, give one ``ndcglab: error:`` line with
its fix (exit status 2), never an internal error (exit 70) or a traceback.

The sweep reads the numeric options from the parser itself (every option whose argparse
``type`` converts numbers), so an option added later is swept too. It runs the command line's
``main`` in this process (thousands of runs); the cases the issue reported are also run as
subprocesses.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from ndcglab.cli import _common
from ndcglab.cli.main import GENERIC_FIX, build_parser, main

from .test_cli_safety import DATA, error_line

pytestmark = pytest.mark.filterwarnings("ignore")

#: values no numeric option takes: not numbers, non-ASCII digits, non-finite, beyond any range
ODD = [
    "",
    " ",
    "x",
    "nan",
    "inf",
    "-inf",
    "1e400",
    "1_0",
    "0x10",
    "３",
    "٣",
    "-1",
    "-0.5",
    "99999999999999999999",
    "9" * 5000,
    "-9223372036854775809",
    "2147483648",
]
#: values that no option reads as a number
NOT_NUMBERS = ["", " ", "x", "nan", "inf", "-inf", "1e400", "1_0", "0x10", "３", "٣", "9" * 5000]
#: values some options take and others refuse (each must be accepted or refused in one line)
EDGE = ["0", "-0", "1", "1.5", "1e-3"]

#: sub-command -> the argument list to which one numeric option is added
BASE = {
    "evaluate": ["data.txt", "--scores", "s.txt"],
    "explain": ["data.txt", "--scores", "s.txt", "--from", "standard", "--to", "trec_eval"],
    "describe": ["data.txt"],
    "generate": ["default", "--out", "g.txt", "--queries", "3"],
    "train": ["data.txt", "--out", "m.ndcg", "--epochs", "1", "-q"],
    "predict": ["m.ndcg", "data.txt"],
    "cv": ["folds", "--epochs", "1"],
    "compare": ["data.txt", "--scores", "s.txt", "--scores", "s2.txt"],
    "distinguish": ["data.txt", "--scores", "s.txt", "--scores", "s2.txt"],
    "reproduce": ["cost-sensitive", "--quick", "--out", "report"],
    "list": ["measures"],
    "audit-consistency": ["squared"],
}
#: commands whose accepted values would start minutes of work: their run is replaced by a stub
#: (the parse and the range checks, which come before it, are what is swept)
STUBBED = {"cv": "cv", "reproduce": "reproduce", "audit-consistency": "audit"}
NUMERIC_TYPES = {"strict_int", "strict_float", "positive_int", "_batch", "_hidden"}


def numeric_options() -> list[tuple[str, str]]:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for name, sp in sub.choices.items():
        for a in sp._actions:
            t = getattr(a.type, "__name__", "")
            if a.option_strings and (t in NUMERIC_TYPES or a.type in (int, float)):
                if a.dest.startswith("dask"):
                    continue  # the Dask options have their own tests (tests/gbdt/test_cli_dask.py)
                out.append((name, a.option_strings[-1]))
    return out


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("numbers")
    (d / "data.txt").write_text(DATA)
    (d / "s.txt").write_text("".join(f"{(i * 7) % 9}\n" for i in range(9)))
    (d / "s2.txt").write_text("".join(f"{i}\n" for i in range(9)))
    for part in ("train", "vali", "test"):
        (d / "folds" / "Fold1").mkdir(parents=True, exist_ok=True)
        (d / "folds" / "Fold1" / f"{part}.txt").write_text(DATA)
    assert main(["train", "data.txt", "--out", "m.ndcg", "--epochs", "1", "-q"]) == 0 or True
    return d


def _run(argv: list[str], capsys) -> tuple[int, str]:
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse's own exit (its error() or --help)
        rc = int(exc.code or 0)
    err = capsys.readouterr().err
    return rc, err


def test_the_sweep_finds_the_numeric_options():
    opts = set(numeric_options())
    for expected in [
        ("train", "--seed"),
        ("train", "--hidden"),
        ("train", "--threads"),
        ("generate", "--queries"),
        ("compare", "--resamples"),
        ("evaluate", "--feature"),
        ("cv", "--lr"),
    ]:
        assert expected in opts


@pytest.mark.parametrize("command,option", numeric_options())
def test_odd_values_of_every_numeric_option(command, option, folder, capsys, monkeypatch):
    monkeypatch.chdir(folder)
    if command in STUBBED:
        import importlib

        mod = importlib.import_module(f"ndcglab.cli.{STUBBED[command]}")
        monkeypatch.setattr(mod, "run", lambda args: 0)
    main(["train", "data.txt", "--out", "m.ndcg", "--epochs", "1", "-q"])
    capsys.readouterr()
    for value in ODD + EDGE:
        argv = [command, *BASE[command], f"{option}={value}"]
        rc, err = _run(argv, capsys)
        assert rc in (0, 1, 2), (argv[-1][:40], rc, err[-400:])
        assert "Traceback" not in err and "internal error" not in err, (argv[-1][:40], err[-400:])
        errors = [ln for ln in err.splitlines() if ln.startswith("ndcglab: error:")]
        if rc:
            assert len(errors) == 1, (argv[-1][:40], err[-400:])
            assert "Fix:" in errors[0], errors[0]
            assert len(errors[0]) < 600, errors[0][:200]
        if value in NOT_NUMBERS:
            assert rc == 2, (argv[-1][:40], rc, err[-400:])


SPECS = [
    "ndcg@{}",
    "ndcg@{}n",
    "ndcg(ties=random:{})@3",
    "map(rel={})",
    "rbp(p={})",
    "err(max_grade={})",
    "ndcg(discount=log:{})",
    "ndcg(discount=power:{})",
    "ndcg(gain=table:0={};1=1)",
]


@pytest.mark.parametrize("spec", SPECS)
def test_odd_numbers_inside_measure_specs(spec, folder, capsys, monkeypatch):
    monkeypatch.chdir(folder)
    for value in [v for v in ODD + EDGE if v.strip()]:
        argv = ["evaluate", "data.txt", "--scores", "s.txt", "--measure", spec.format(value)]
        rc, err = _run(argv, capsys)
        assert rc in (0, 2), (argv[-1][:80], rc, err[-400:])
        assert "Traceback" not in err and "internal error" not in err, (argv[-1][:80], err[-400:])
        if rc:
            errors = [ln for ln in err.splitlines() if ln.startswith("ndcglab: error:")]
            assert len(errors) == 1 and "Fix:" in errors[0], (argv[-1][:80], err[-400:])


@pytest.mark.parametrize(
    "argv,words",
    [
        (["evaluate", "data.txt", "--scores", "s.txt", "--measure", "ndcg@99999999999999999999"],
         ["cut-off", "out of range"]),
        (["evaluate", "data.txt", "--scores", "s.txt", "--measure", "ndcg@" + "9" * 5000],
         ["cut-off", "out of range"]),
        (["evaluate", "data.txt", "--scores", "s.txt", "--measure", "ndcg(ties=random:-1)"],
         ["tie seed", "'-1'"]),
        (["train", "data.txt", "--out", "m.ndcg", "--seed", "-1"], ["--seed -1"]),
        (["train", "data.txt", "--out", "m.ndcg", "--threads", "9" * 30], ["--threads"]),
        (["train", "data.txt", "--out", "m.ndcg", "--hidden", "99999999999"], ["--hidden"]),
        (["generate", "default", "--out", "g.txt", "--queries", "99999999999999"],
         ["--queries"]),
        (["train", "data.txt", "--out", "m.ndcg", "--lr", "nan"], ["--lr", "'nan'"]),
        (["train", "data.txt", "--out", "m.ndcg", "--seed", "３"], ["--seed"]),
    ],
)  # fmt: skip
def test_the_reported_values_as_a_user_types_them(argv, words, folder):
    before = sorted(p.name for p in folder.iterdir())
    res = subprocess.run(
        [sys.executable, "-m", "ndcglab", *argv],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    line = error_line(res, *words, "Fix:")
    assert res.returncode == 2, line
    assert len(line) < 400
    assert sorted(p.name for p in folder.iterdir()) == before


def test_number_ranges_name_real_options():
    """Every entry of the range table is an option some sub-command has."""
    dests = set()
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for sp in sub.choices.values():
        dests |= {a.dest for a in sp._actions}
    assert set(_common.NUMBER_RANGES) <= dests


LOSS_SPECS = [
    "listnet@{}",
    "approx_ndcg(alpha={})",
    "neural_ndcg(sinkhorn={})",
    "neural_ndcg(tau={})",
    "consistent_listnet(norm=z{})",
    "qnorm(q={})",
    "lambdaloss(mu={})@3",
    "gumbel_approx_ndcg(samples={})",
]


@pytest.mark.parametrize("spec", LOSS_SPECS)
def test_odd_numbers_inside_loss_specs(spec, folder, capsys, monkeypatch):
    monkeypatch.chdir(folder)
    for value in [v for v in ODD + EDGE if v.strip()]:
        argv = ["train", "data.txt", "--out", "m2.ndcg", "--epochs", "1", "-q",
                "--loss", spec.format(value)]  # fmt: skip
        rc, err = _run(argv, capsys)
        assert rc in (0, 2), (argv[-1][:80], rc, err[-400:])
        assert "Traceback" not in err and "internal error" not in err, (argv[-1][:80], err[-400:])
        if rc:
            errors = [ln for ln in err.splitlines() if ln.startswith("ndcglab: error:")]
            assert len(errors) == 1 and "Fix:" in errors[0], (argv[-1][:80], err[-400:])
            assert GENERIC_FIX not in errors[0], errors[0]
        if value in NOT_NUMBERS:
            assert rc == 2, (argv[-1][:80], rc, err[-400:])


@pytest.mark.parametrize("param", ["num_leaves=99999999999999999999", "learning_rate=-1"])
def test_lightgbm_parameter_checks_are_one_error_line(param, folder):
    """LightGBM's own parameter checks ("Check failed: ...") end as one error line with a fix,
    exit status 2, not an internal error (LightGBM itself may print its [Fatal] line first)."""
    pytest.importorskip("lightgbm")
    res = subprocess.run(
        [sys.executable, "-m", "ndcglab", "train", "data.txt", "--out", "g.ndcg", "--model",
         "gbdt", "--rounds", "2", "-q", "--gbdt-param", param],
        cwd=folder, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert res.returncode == 2, res.stderr
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("ndcglab: error:")]
    # the line names the option (checked before training, or LightGBM's refusal quoted)
    assert len(errors) == 1 and f"--gbdt-param {param}" in errors[0] and "Fix:" in errors[0]
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr
