"""Library errors name the Python parameter to change (``checkpoint=``, ``measure='ndcg'``); the
command line prints its own option in its place (``--checkpoint``, ``--measure ndcg``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ndcglab.cli.main import OPTION_OF, error_text
from ndcglab.errors import ConventionError, NdcglabError


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def test_python_callers_read_the_parameter(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from ndcglab.training.checkpoint import CheckpointError, load_checkpoint

    (tmp_path / "checkpoint.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(tmp_path, "fingerprint")
    text = str(info.value)
    assert "checkpoint= folder" in text and "resume=True" in text and "--" not in text
    assert info.value.parameters == ("checkpoint", "resume")


def test_the_audit_names_its_measure_parameter() -> None:
    from ndcglab.analysis.consistency_audit import audit_loss

    with pytest.raises(ConventionError) as info:
        audit_loss("listnet", "map")
    assert "measure='ndcg'" in str(info.value) and "--measure" not in str(info.value)


def test_the_command_line_shows_its_options(tmp_path: Path) -> None:
    run = _cli("audit-consistency", "listnet", "--measure", "map", cwd=tmp_path)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    line = run.stderr.strip()
    assert line.count("\n") == 0 and line.startswith("ndcglab: error: ")
    assert "Fix: e.g. --measure ndcg or --measure 'ndcg(gain=linear)@3'" in line
    assert "measure=" not in line


def test_the_translation_reads_only_the_named_parameters() -> None:
    err = NdcglabError(
        "Fix: lower the learning rate (lr=) or normalise (normalize='zscore'), with or without "
        "resume=True; the spec ndcg(lr=3) and x(a=1,lr=2) stay; l2= is not named"
    ).naming("lr", "normalize", "resume")
    assert error_text(err) == (
        "Fix: lower the learning rate (--lr) or normalise (--normalize zscore), with or without "
        "--resume; the spec ndcg(lr=3) and x(a=1,lr=2) stay; l2= is not named"
    )
    # each option is its parameter's name, argparse-style (``trust_offset`` -> ``--trust-offset``)
    assert set(OPTION_OF.values()) == {f"--{name.replace('_', '-')}" for name in OPTION_OF}
