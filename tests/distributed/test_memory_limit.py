"""Issue 44, item 13: ``--dask-memory-limit`` below what a worker needs is refused at once,
naming the minimum, instead of hanging (a worker paused or killed before its first task)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ndcglab.distributed.cluster import MIN_EVALUATE_MEMORY, MIN_WORKER_MEMORY, check_memory_limit
from ndcglab.errors import NdcglabError

pytest.importorskip("distributed")


def _cli(*argv: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", *argv],
        capture_output=True,
        text=True,
        timeout=60,  # the refusal comes before any cluster is started: no hang
        cwd=cwd,
    )


@pytest.mark.parametrize(
    ("argv", "minimum"),
    [
        (["evaluate", "d.txt", "--scores", "s", "--dask", "local:1"], "128 MiB"),
        (["train", "d.txt", "--model", "gbdt", "--out", "m.zip", "--dask", "local:1"], "512 MiB"),
        (["cv", "no-such-folder", "--model", "gbdt", "--dask", "local:1"], "512 MiB"),
    ],
)
def test_a_limit_below_what_a_worker_needs_is_refused(tmp_path, argv, minimum) -> None:
    (tmp_path / "d.txt").write_text("1 qid:1 1:1\n0 qid:1 1:2\n")
    (tmp_path / "s").write_text("1\n2\n")
    out = _cli(*argv, "--dask-memory-limit", "1KiB", cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    (line,) = [x for x in out.stderr.splitlines() if x.strip()]
    assert line.startswith("ndcglab: error: --dask-memory-limit 1KiB (1024 bytes) is below"), line
    assert f"at least {minimum} per worker" in line and "Fix:" in line, line
    assert not (tmp_path / "m.zip").exists()


def test_limits_read_as_dask_reads_them() -> None:
    assert check_memory_limit(None) is None and check_memory_limit("0") is None
    assert check_memory_limit("1GiB") == 2**30 and check_memory_limit("600MB") == 600_000_000
    assert check_memory_limit("128MiB", minimum=MIN_EVALUATE_MEMORY) == MIN_EVALUATE_MEMORY
    with pytest.raises(NdcglabError, match="at least 512 MiB"):
        check_memory_limit(str(MIN_WORKER_MEMORY - 1))
    with pytest.raises(NdcglabError, match="not a size"):
        check_memory_limit("lots")
