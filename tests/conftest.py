"""Fixtures for the real LETOR data (MQ2008, OHSUMED); tests that use them skip without it.

The data are read in place, never copied into the repository: from the folder named by the
``NDCGLAB_SHARED_DATA`` environment variable, by default ``shared/data`` beside the clone.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("NDCGLAB_SHARED_DATA", ROOT.parent / "shared" / "data"))


#: what a child interpreter runs before the command line: its file-size limit (argv[1], bytes;
#: -1 for none) and Python's own SIGINT handler, set in the child itself rather than in a
#: ``preexec_fn`` (Python code run in a forked copy of the multithreaded test process)
_CHILD = """
import resource, runpy, signal, sys
fsize = int(sys.argv.pop(1))
if fsize >= 0:
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
signal.signal(signal.SIGINT, signal.default_int_handler)
runpy.run_module("ndcglab.cli.main", run_name="__main__", alter_sys=True)
"""


def cli_argv(*args: object, fsize: int | None = None) -> list[str]:
    """The argv of ``python -m ndcglab.cli.main ARGS`` in a child that a test may interrupt with
    SIGINT (Python turns SIGINT into KeyboardInterrupt only if its parent did not ignore the
    signal, and a test runner started in the background, ``cmd &`` or nohup, ignores it: the
    child restores Python's handler) and whose writes beyond ``fsize`` bytes fail like a full
    disk (``RLIMIT_FSIZE``)."""
    return [sys.executable, "-c", _CHILD, str(-1 if fsize is None else fsize), *map(str, args)]


def interrupt(proc: subprocess.Popen, timeout: float = 120) -> tuple[str, str]:
    """Send SIGINT (Ctrl-C) to ``proc`` (started with :func:`cli_argv`) and return
    its ``(stdout, stderr)``; a child still running after ``timeout`` s is killed, never left
    behind, and the timeout is raised."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


def shared_path(*parts: str) -> Path:
    """A path under the real-data folder; the calling test is skipped when it does not exist."""
    p = SHARED_DATA.joinpath(*parts)
    if not p.exists():
        pytest.skip(
            f"real data not available: {p}; set NDCGLAB_SHARED_DATA to a folder holding MQ2008/ "
            "and OHSUMED/ (LETOR 4.0 / 3.0)"
        )
    return p


@pytest.fixture
def mq2008() -> Path:
    """The MQ2008 folder (Fold1..5)."""
    return shared_path("MQ2008")


@pytest.fixture
def ohsumed() -> Path:
    """The OHSUMED QueryLevelNorm folder (Fold1..5)."""
    return shared_path("OHSUMED", "QueryLevelNorm")


@pytest.fixture
def ohsumed_null() -> Path:
    """The OHSUMED Feature-null folder (raw features with NULL)."""
    return shared_path("OHSUMED", "Feature-null")
