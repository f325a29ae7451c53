"""Issue 44, item 12: control characters in file names are escaped in every error and warning
line (one helper, :func:`ndcglab._warn.terminal_safe`), through the command line.

A terminal acts on ESC (colours, ``ESC ] 0 ; title BEL`` sets the window title), BEL, CR, and
the C1 controls; none of them may reach standard error raw."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ndcglab._warn import terminal_safe

RED = "\x1b[31mred.txt"
TITLE = "q\x1b]0;pwned\x07rels"
#: every character a terminal may act on that a file name can hold (not NUL or "/")
CONTROLS = [chr(c) for c in range(1, 32)] + ["\x7f", "\x9b", "\x9d", "\u202e"]


def _cli(*argv: str, cwd) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ndcglab", *argv],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
    )


def _clean(err: str) -> None:
    assert "Traceback" not in err
    for ch in CONTROLS:
        if ch != "\n":
            assert ch not in err, (repr(ch), err)


@pytest.mark.parametrize("char", CONTROLS)
def test_terminal_safe_escapes_every_control(char: str) -> None:
    shown = terminal_safe(f"a{char}b")
    assert shown.startswith("a\\") and shown.endswith("b") and char not in shown
    assert terminal_safe("é 日本 ok.txt") == "é 日本 ok.txt"  # printable text is kept


def test_error_lines_escape_control_characters(tmp_path) -> None:
    # a missing LETOR file, a missing qrels file (a title-setting sequence in its name)
    out = _cli("evaluate", RED, "--feature", "1", cwd=tmp_path)
    assert out.returncode != 0
    _clean(out.stderr)
    assert "\\e[31mred.txt" in out.stderr, out.stderr
    run = tmp_path / "run"
    run.write_text("q1 Q0 d1 1 1.0 r\n")
    out = _cli("evaluate", "--qrels", TITLE, "--run", "run", cwd=tmp_path)
    assert out.returncode != 0
    _clean(out.stderr)
    assert "q\\e]0;pwned\\x07rels" in out.stderr, out.stderr
    # a file that exists but cannot be read as LETOR: the reader's PATH:LINE
    (tmp_path / RED).write_text("x qid:1 1:1\n")
    out = _cli("evaluate", RED, "--feature", "1", cwd=tmp_path)
    assert out.returncode == 2
    _clean(out.stderr)
    assert out.stderr.startswith("ndcglab: error: \\e[31mred.txt:1: ")
    # an operating-system error on an output (a file where a folder is needed)
    (tmp_path / "f").write_text("")
    (tmp_path / "qrels").write_text("q1 0 d1 1\n")
    out = _cli("evaluate", "--qrels", "qrels", "--run", "run", "--per-query",
               f"f/{RED}.csv", cwd=tmp_path)  # fmt: skip
    assert out.returncode != 0
    _clean(out.stderr)
    # an unknown option
    out = _cli("evaluate", f"--{RED}", cwd=tmp_path)
    assert out.returncode == 2
    _clean(out.stderr)


def test_warning_lines_escape_control_characters(tmp_path) -> None:
    runs = tmp_path / "runs"
    runs.mkdir()
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 1\nq2 0 d2 0\n")
    for name, s in (("a.run", 1.0), ("b.run", 2.0)):
        (runs / name).write_text(f"q1 Q0 d1 1 {s} x\nq1 Q0 d2 2 0.5 x\nq2 Q0 d1 1 1 x\n")
    (runs / TITLE).symlink_to(tmp_path / "missing")  # a dangling link: named in a warning
    out = _cli("compare", "--qrels", "qrels", "runs", "-m", "map", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    _clean(out.stderr)
    assert "q\\e]0;pwned\\x07rels is a symbolic link" in out.stderr, out.stderr
    # a run named after its file: the name in the table is escaped too
    (runs / TITLE).unlink()
    (runs / RED).write_text("q1 Q0 d1 1 3.0 x\nq1 Q0 d2 2 0.5 x\nq2 Q0 d1 1 1 x\n")
    out = _cli("compare", "--qrels", "qrels", "runs", "-m", "map", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    _clean(out.stdout + out.stderr)
    assert "\\e[31mred" in out.stdout, out.stdout


def test_status_lines_and_tables_escape_control_characters(tmp_path) -> None:
    """The lines that report success (generate's size notice and "wrote", train's status and
    result table) show a file name's control characters escaped, keeping the table's layout."""
    out = _cli("generate", "small", "--out", RED, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    _clean(out.stderr)
    _clean(out.stdout)
    assert "\\e[31mred.txt" in out.stderr and "wrote \\e[31mred.txt" in out.stdout
    model = "m" + TITLE + ".ndcg"
    out = _cli("train", RED, "--epochs", "1", "--out", model, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    _clean(out.stderr)
    _clean(out.stdout)
    assert "mq\\e]0;pwned\\x07rels.ndcg" in out.stdout
    assert len(out.stdout.splitlines()) > 3  # the table keeps its lines
    assert (tmp_path / model).is_file()  # the file itself has the name given
    assert terminal_safe("a\tb\nc\x1b", keep_layout=True) == "a\tb\nc\\e"
