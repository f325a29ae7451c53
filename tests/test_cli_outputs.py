"""Outputs land where the user points (a subprocess, as a user runs the command line).

A regular file is replaced atomically; a symbolic link is written through to its target (the
link stays a link); a FIFO, a character device, ``-`` and ``/dev/stdout`` are streamed, never
replaced; a folder is refused with one line before anything is written. A long job checks its
outputs before it starts, and a checkpoint folder serves one training run at a time.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from .test_cli_safety import DATA, error_line, ndcglab, snapshot

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

SCORES = "0.9\n0.1\n0.5\n0.6\n0.2\n0.4\n0.3\n0.8\n0.1\n"


@pytest.fixture()
def case(tmp_path: Path) -> Path:
    (tmp_path / "data.txt").write_text(DATA)
    (tmp_path / "s.txt").write_text(SCORES)
    return tmp_path


def _reference_csv(folder: Path) -> bytes:
    """The per-query CSV written to a plain new file (the content every other target must get)."""
    res = ndcglab("evaluate", "data.txt", "--scores", "s.txt", "--per-query", "ref.csv", cwd=folder)
    assert res.returncode == 0, res.stderr
    data = (folder / "ref.csv").read_bytes()
    (folder / "ref.csv").unlink()
    assert data.startswith(b"query_id,") and data.count(b"\n") == 4
    return data


def _evaluate(folder: Path, target: str, **kw) -> subprocess.CompletedProcess[str]:
    return ndcglab(
        "evaluate", "data.txt", "--scores", "s.txt", "--per-query", target, cwd=folder, **kw
    )


def test_a_symlink_is_written_through_to_its_target(case: Path) -> None:
    expected = _reference_csv(case)
    (case / "target.csv").write_text("old content\n")
    os.symlink("target.csv", case / "link.csv")
    res = _evaluate(case, "link.csv")
    assert res.returncode == 0, res.stderr
    assert os.path.islink(case / "link.csv") and os.readlink(case / "link.csv") == "target.csv"
    assert (case / "target.csv").read_bytes() == expected
    # a link in another folder (relative to the link): the target there, atomically
    (case / "sub").mkdir()
    os.symlink("../target.csv", case / "sub" / "up.csv")
    (case / "target.csv").write_text("old again\n")
    res = _evaluate(case, "sub/up.csv")
    assert res.returncode == 0, res.stderr
    assert (case / "target.csv").read_bytes() == expected
    assert sorted(p.name for p in (case / "sub").iterdir()) == ["up.csv"]
    # a dangling link creates its target
    os.symlink("new.csv", case / "dangling.csv")
    assert _evaluate(case, "dangling.csv").returncode == 0
    assert os.path.islink(case / "dangling.csv") and (case / "new.csv").read_bytes() == expected


def test_per_query_dash_writes_to_standard_output(case: Path) -> None:
    expected = _reference_csv(case)
    before = snapshot(case)
    res = _evaluate(case, "-")
    assert res.returncode == 0, res.stderr
    assert expected.decode().replace("\r\n", "\n") in res.stdout  # text mode reads CRLF as \\n
    assert "ndcg@10" in res.stdout  # the table is printed too
    assert snapshot(case) == before  # no file named '-'
    assert not (case / "-").exists()


def test_dev_stdout_is_the_process_output_not_a_file(case: Path) -> None:
    """``--per-query /dev/stdout`` with standard output redirected to a file: the CSV lands in
    that file (appended to what the command printed), the file stays the same inode."""
    expected = _reference_csv(case)
    out = case / "captured.txt"
    with open(out, "wb") as fh:
        inode = os.fstat(fh.fileno()).st_ino
        res = subprocess.run(
            [sys.executable, "-m", "ndcglab", "evaluate", "data.txt", "--scores", "s.txt",
             "--per-query", "/dev/stdout"],
            cwd=case, stdout=fh, stderr=subprocess.PIPE, text=True, timeout=300,
        )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert os.stat(out).st_ino == inode
    text = out.read_bytes()
    assert expected in text and b"ndcg@10" in text


def test_a_fifo_is_streamed_to_its_reader(case: Path) -> None:
    expected = _reference_csv(case)
    fifo = case / "pipe.csv"
    try:
        os.mkfifo(fifo)
    except (OSError, AttributeError) as exc:
        pytest.skip(f"cannot make a FIFO here: {exc}")
    got: list[bytes] = []

    def reader() -> None:
        with open(fifo, "rb") as fh:  # blocks until the writer opens it
            got.append(fh.read())

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        res = _evaluate(case, "pipe.csv", timeout=120)
    finally:
        if t.is_alive() and not got:  # unblock a reader whose writer never came
            with open(fifo, "wb", buffering=0):
                pass
        t.join(timeout=30)
    assert not t.is_alive()
    assert res.returncode == 0, res.stderr
    assert got == [expected]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not replaced by a file


def test_a_character_device_is_written_not_replaced(case: Path) -> None:
    dev = case / "null"
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # the null device
    except (OSError, AttributeError) as exc:
        pytest.skip(f"cannot make a device node here: {exc}")
    for argv in (
        ("evaluate", "data.txt", "--scores", "s.txt", "--per-query", "null"),
        ("generate", "default", "--queries", "3", "--out", "null"),
    ):
        res = ndcglab(*argv, cwd=case)
        assert res.returncode == 0, res.stderr
        st = os.lstat(dev)
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)


@pytest.mark.parametrize(
    "argv",
    [
        ("evaluate", "data.txt", "--scores", "s.txt", "--per-query", "OUT"),
        ("generate", "default", "--queries", "3", "--out", "OUT"),
        ("train", "data.txt", "--out", "OUT", "--epochs", "1", "-q"),
    ],
)
def test_a_folder_as_output_is_refused_and_kept(case: Path, argv: tuple[str, ...]) -> None:
    (case / "OUT").mkdir()
    (case / "OUT" / "keep.txt").write_text("mine\n")
    before = snapshot(case)
    t0 = time.monotonic()
    res = ndcglab(*argv, cwd=case)
    line = error_line(res, "OUT", "folder")
    assert res.returncode == 1, line
    assert "Fix:" in line
    assert snapshot(case) == before
    assert sorted(os.listdir(case / "OUT")) == ["keep.txt"]
    assert not [p for p in os.listdir(case) if "ndcglab-tmp" in p]
    assert time.monotonic() - t0 < 60


def test_train_checks_its_output_before_training(case: Path) -> None:
    """``--out`` under a regular file (no folder can be made there): refused before the data is
    read — the progress line that follows reading is never printed."""
    (case / "model.ndcg").write_bytes(b"an older model\n")
    (case / "afile").write_text("x\n")
    before = snapshot(case)
    res = ndcglab(
        "train", "synthetic:default", "--out", "afile/model.ndcg", "--epochs", "500", cwd=case
    )
    line = error_line(res, "afile/model.ndcg")
    assert res.returncode == 1, line
    assert "training queries" not in res.stderr
    assert snapshot(case) == before


def test_reproduce_checks_its_report_folder_before_running(case: Path) -> None:
    (case / "afile").write_text("x\n")
    before = snapshot(case)
    res = ndcglab("reproduce", "cost-sensitive", "--quick", "--out", "afile/report", cwd=case)
    error_line(res, "afile")
    assert res.returncode == 1
    assert snapshot(case) == before


def test_a_second_training_run_on_a_checkpoint_folder_is_refused(case: Path) -> None:
    """This test holds the folder's lock as a first run would; ``train --checkpoint`` on it
    is then one error line, and the folder and the existing model are left as they were."""
    fcntl = pytest.importorskip("fcntl")
    ck = case / "ck"
    ck.mkdir()
    (case / "model.ndcg").write_bytes(b"an older model\n")
    fd = os.open(ck / ".ndcglab-lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        before = snapshot(case)
        res = ndcglab(
            "train", "data.txt", "--out", "model.ndcg", "--checkpoint", "ck", "--epochs", "2",
            "-q", cwd=case,
        )  # fmt: skip
        line = error_line(res, "ck", "another training run", "Fix:")
        assert res.returncode == 2, line
        assert snapshot(case) == before
    finally:
        os.close(fd)
    # released: the same command now trains, and a run after it (the lock freed at exit) too
    for _ in range(2):
        res = ndcglab(
            "train", "data.txt", "--out", "model.ndcg", "--checkpoint", "ck", "--epochs", "2",
            "-q", cwd=case,
        )  # fmt: skip
        assert res.returncode == 0, res.stderr
    assert (ck / "checkpoint.pt").exists()


def test_two_concurrent_training_processes_on_one_folder(case: Path) -> None:
    """Two real processes: the first holds the lock while it trains, the second is refused."""
    ck = case / "ck"
    first = subprocess.Popen(
        [sys.executable, "-m", "ndcglab", "train", "synthetic:default", "--out", "a.ndcg",
         "--checkpoint", "ck", "--epochs", "100000", "-q"],
        cwd=case, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (ck / "checkpoint.pt").exists():  # the first epoch is done: it trains
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.2)
        res = ndcglab(
            "train", "synthetic:default", "--out", "b.ndcg", "--checkpoint", "ck",
            "--epochs", "1", "-q", cwd=case,
        )  # fmt: skip
        error_line(res, "in use")
        assert res.returncode == 2
        assert not (case / "b.ndcg").exists()
    finally:
        first.kill()
        first.communicate(timeout=60)


def test_save_figure_refuses_an_unknown_image_type(tmp_path: Path) -> None:
    from ndcglab._atomic import save_figure
    from ndcglab.errors import NdcglabError

    plt = pytest.importorskip("matplotlib.pyplot")
    fig = plt.figure()
    try:
        with pytest.raises(NdcglabError, match=r"\.png"):
            save_figure(fig, tmp_path / "plot.xyz")
        assert not list(tmp_path.iterdir())
        os.symlink("real.svg", tmp_path / "link.svg")
        save_figure(fig, tmp_path / "link.svg")
        assert os.path.islink(tmp_path / "link.svg")
        assert (tmp_path / "real.svg").read_bytes().lstrip().startswith(b"<?xml")
    finally:
        plt.close(fig)


def test_generate_to_standard_output_keeps_the_data_clean(tmp_path: Path) -> None:
    """``generate --out -``: standard output holds exactly the LETOR text (the summary goes to
    standard error), and it reads back as the file a named output gets."""
    from ndcglab.data import read_letor

    res = ndcglab("generate", "small", "--queries", "3", "--out", "-", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    (tmp_path / "piped.txt").write_text(res.stdout)
    assert ndcglab("generate", "small", "--queries", "3", "--out", "f.txt", cwd=tmp_path)
    assert (tmp_path / "piped.txt").read_bytes() == (tmp_path / "f.txt").read_bytes()
    assert read_letor(tmp_path / "piped.txt").n_queries == 3
    assert "standard output" in res.stderr


def test_a_model_file_is_not_mixed_into_standard_output(tmp_path: Path) -> None:
    (tmp_path / "data.txt").write_text(DATA)
    res = ndcglab("train", "data.txt", "--out", "-", "--epochs", "1", cwd=tmp_path)
    error_line(res, "--out", "standard output", "Fix:")
    assert res.returncode == 2 and res.stdout == ""


def test_a_plot_name_that_is_no_image_type_is_refused_before_the_work(case: Path) -> None:
    (case / "s2.txt").write_text("".join(f"{i}\n" for i in range(9)))
    before = snapshot(case)
    res = ndcglab(
        "distinguish", "data.txt", "--scores", "s.txt", "--scores", "s2.txt",
        "--plot", "curves.xyz", cwd=case,
    )  # fmt: skip
    error_line(res, "--plot", ".xyz", "Fix:", ".png")
    assert res.returncode == 2
    assert snapshot(case) == before


def test_every_image_type_matplotlib_writes_is_accepted() -> None:
    plt = pytest.importorskip("matplotlib.pyplot")
    from ndcglab.cli._common import IMAGE_TYPES

    fig = plt.figure()
    try:
        assert set(fig.canvas.get_supported_filetypes()) <= IMAGE_TYPES
    finally:
        plt.close(fig)
