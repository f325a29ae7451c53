"""``--dask`` addresses and timeouts checked before anything runs, and a connection whose whole
handshake is bounded by ``--dask-timeout`` (a peer that accepts TCP and says nothing is refused
in time). Each bad input is one ``ndcglab: error:`` line with its fix, exit status 2."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ndcglab.distributed.cluster import check_timeout, parse_address
from ndcglab.errors import NdcglabError


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", *argv], cwd=cwd, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip


def _one_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1, proc.stderr
    assert lines[0].startswith("ndcglab: error: ") and "Fix:" in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("dask_edges")
    proc = _cli("generate", "small", "--out", "data.txt", cwd=d)
    assert proc.returncode == 0, proc.stderr
    (d / "scores.txt").write_text("0\n" * 100)
    return d


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (["--dask", "foo://bar"], "unknown scheme 'foo'"),
        (["--dask", "http://127.0.0.1:8787"], "dashboard"),
        (["--dask", ""], "not a scheduler address"),
        (["--dask", "tcp://host"], "host and a port"),
        (["--dask", "local:2", "--dask-timeout", "-1"], "positive number of seconds"),
        # the command line's number check comes first: NaN is not a finite number
        (["--dask", "local:2", "--dask-timeout", "nan"], "is not a finite decimal number"),
        (["--dask", f"local:{(os.cpu_count() or 1) + 1}"], "cores"),
    ],
)
def test_bad_dask_values_are_one_error_line(data: Path, extra: list[str], needle: str) -> None:
    for command in (
        ["evaluate", "data.txt", "--scores", "scores.txt"],
        ["train", "data.txt", "--model", "gbdt", "--out", "m.zip"],
    ):
        line = _one_error(_cli(*command, *extra, cwd=data))
        assert needle in line, line
        assert not (data / "m.zip").exists()


def test_the_parser_against_hand_written_cases() -> None:
    assert parse_address("local:3", cores=4) == ("local", 3)
    assert parse_address("local", cores=4) == ("local", 2)
    assert parse_address(" tcp://10.0.0.1:8786 ") == ("tcp://10.0.0.1:8786", None)
    assert parse_address("host:8786") == ("host:8786", None)
    with pytest.raises(NdcglabError, match="local:4 or fewer"):
        parse_address("local:5", cores=4)
    assert check_timeout("2.5") == 2.5
    for bad in ("inf", "0", "-3", "x"):
        with pytest.raises(NdcglabError, match="positive number"):
            check_timeout(bad)


def test_a_silent_peer_is_refused_within_the_timeout(data: Path) -> None:
    """A server that accepts the connection and never writes: the command ends with one error
    line soon after --dask-timeout, not after a hang."""
    pytest.importorskip("distributed")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)  # keep it open, say nothing

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        t0 = time.monotonic()
        proc = _cli("evaluate", "data.txt", "--scores", "scores.txt", "--dask",
                    f"tcp://127.0.0.1:{port}", "--dask-timeout", "1.5", cwd=data)  # fmt: skip
        elapsed = time.monotonic() - t0
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in held:
            conn.close()
        server.close()
    line = _one_error(proc)
    assert "not a Dask scheduler" in line and "1.5 s" in line, line
    assert elapsed < 60, elapsed  # the interpreter's start-up included; never a hang


def test_a_peer_that_speaks_another_protocol_is_refused(data: Path) -> None:
    """A server that answers with text (an HTTP server, say): refused, not read as a frame."""
    pytest.importorskip("distributed")
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    port = server.getsockname()[1]

    def answer() -> None:
        server.settimeout(30)
        try:
            conn, _ = server.accept()
        except OSError:
            return
        conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        time.sleep(2)
        conn.close()

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    try:
        proc = _cli("evaluate", "data.txt", "--scores", "scores.txt", "--dask",
                    f"127.0.0.1:{port}", "--dask-timeout", "5", cwd=data)  # fmt: skip
    finally:
        thread.join(timeout=35)
        server.close()
    assert "not a Dask scheduler" in _one_error(proc)


# A worker's record of the shutdown race, as distributed 2025+ prints it (its traceback
# shortened to the lines that frame it), between two lines that must stay.
_HEARTBEAT_RACE = b"""\
before: a warning of Dask's own
2026-11-29 13:47:39,751 - distributed.worker - ERROR - Failed to communicate with scheduler during heartbeat.
Traceback (most recent call last):
  File "/venv/site-packages/distributed/comm/tcp.py", line 226, in read
    frames_nosplit_nbytes_bin = await stream.read_bytes(fmt_size)
tornado.iostream.StreamClosedError: Stream is closed

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/venv/site-packages/distributed/worker.py", line 1165, in heartbeat
    response = await retry_operation(
distributed.comm.core.CommClosedError: in <TCP (closed) ConnectionPool.heartbeat_worker local=tcp://127.0.0.1:33548 remote=tcp://127.0.0.1:46561>: Stream is closed
[LightGBM] [Info] Local rank: 0, total number of machines: 2
2026-11-29 13:47:40,002 - distributed.worker - ERROR - a real error that stays
after: the rest
"""  # noqa: E501


def test_the_heartbeat_traceback_of_a_shutdown_is_not_shown_and_the_rest_is() -> None:
    from ndcglab.distributed.cluster import _worker_lines

    lines = _HEARTBEAT_RACE.split(b"\n")
    want = [lines[0], lines[-3], lines[-2], b""]
    assert _worker_lines(lines, {}) == want
    # line by line, as the pipe may hand them over
    state: dict[str, bool] = {}
    assert [ln for line in lines for ln in _worker_lines([line], state)] == want
    # a traceback that does not end as expected stops at the next log record
    cut = [*lines[:5], lines[-3], lines[-2]]
    assert _worker_lines(cut, {}) == [lines[0], lines[-3], lines[-2]]
