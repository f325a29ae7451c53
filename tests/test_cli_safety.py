"""Every bad input through the command line, as a user runs it (a subprocess).

Each error case asserts: a non-zero exit status, exactly one stderr line starting
``ndcglab: error:`` (progress lines aside), no ``Traceback``, and the file, line, token or field
named where there is one. The file-safety cases also assert that the user's files are
byte-identical afterwards (nothing deleted, nothing overwritten).
"""

from __future__ import annotations

import gzip
import json
import os
import stat
import subprocess
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from .conftest import cli_argv, interrupt

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DATA = (
    "2 qid:1 1:0.9 2:0.1 3:0.5 #docid = a1\n"
    "0 qid:1 1:0.1 2:0.3 3:0.2 #docid = a2\n"
    "1 qid:1 1:0.5 2:0.2 3:0.1 #docid = a3\n"
    "1 qid:2 1:0.7 2:0.6 3:0.3 #docid = b1\n"
    "0 qid:2 1:0.2 2:0.9 3:0.4 #docid = b2\n"
    "0 qid:2 1:0.3 2:0.5 3:0.8 #docid = b3\n"
    "2 qid:3 1:0.8 2:0.4 3:0.6 #docid = c1\n"
    "1 qid:3 1:0.6 2:0.7 3:0.9 #docid = c2\n"
    "0 qid:3 1:0.4 2:0.8 3:0.7 #docid = c3\n"
)


# ============================================================================ helpers
def ndcglab(
    *args: str | os.PathLike[str],
    cwd: Path,
    env: dict[str, str] | None = None,
    fsize: int | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m ndcglab.cli.main ARGS`` in ``cwd``; ``fsize`` caps the size of any file
    it writes (``RLIMIT_FSIZE``, bytes): a write beyond it fails like a full disk."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    full_env.pop("NDCGLAB_DEBUG", None)

    return subprocess.run(
        cli_argv(*args, fsize=fsize),
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def error_line(res: subprocess.CompletedProcess[str], *where: str) -> str:
    """Check a failed run (see the module docstring) and return its error line."""
    out = res.stdout + res.stderr
    assert res.returncode != 0, out
    assert "Traceback" not in out, out
    errors = [ln for ln in res.stderr.splitlines() if ln.startswith("ndcglab: error:")]
    assert len(errors) == 1, res.stderr
    others = [
        ln
        for ln in res.stderr.splitlines()
        if ln.strip()
        and not ln.startswith(("ndcglab: error:", "ndcglab: warning:"))
        and not ln.startswith("ndcglab ")  # progress lines ("ndcglab reproduce: ...")
    ]
    assert not others, res.stderr
    for w in where:
        assert w in errors[0], (w, errors[0])
    return errors[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (relative name -> bytes)."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def rewrite_zip(
    src: Path,
    dst: Path,
    meta: Callable[[dict], None] | None = None,
    members: dict[str, bytes] | None = None,
) -> Path:
    """Copy a model file with its metadata edited by ``meta`` and members replaced."""
    with zipfile.ZipFile(src) as zf:
        content = {n: zf.read(n) for n in zf.namelist()}
    if meta is not None:
        m = json.loads(content["metadata.json"])
        meta(m)
        content["metadata.json"] = json.dumps(m).encode()
    content.update(members or {})
    with zipfile.ZipFile(dst, "w", compression=zipfile.ZIP_STORED) as zf:
        for n, b in content.items():
            zf.writestr(n, b)
    return dst


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    """A folder with ``data.txt`` and a trained linear model ``m.ndcg`` (z-score)."""
    d = tmp_path_factory.mktemp("safety")
    (d / "data.txt").write_text(DATA)
    res = ndcglab(
        "train", "data.txt", "--out", "m.ndcg", "--model", "linear", "--epochs", "2",
        "--normalize", "zscore", "-q", cwd=d,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    return d


@pytest.fixture()
def case(work, tmp_path) -> Path:
    """A fresh folder holding a copy of ``data.txt`` and ``m.ndcg``."""
    for name in ("data.txt", "m.ndcg"):
        (tmp_path / name).write_bytes((work / name).read_bytes())
    return tmp_path


# ============================================================================ files kept safe
def test_reproduce_refuses_a_folder_it_did_not_write(case):
    p = case / "p"
    p.mkdir()
    (p / "results.json").write_text("{}")
    (p / "thesis.tex").write_text("x")
    before = snapshot(case)
    res = ndcglab("reproduce", "limits", "--quick", "-q", "--out", "p", cwd=case)
    error_line(res, "--out", "not written by ndcglab")
    assert snapshot(case) == before


def test_predict_refuses_to_overwrite_its_input(case):
    before = snapshot(case)
    error_line(ndcglab("predict", "m.ndcg", "data.txt", "--out", "data.txt", cwd=case),
               "--out", "data.txt")  # fmt: skip
    error_line(ndcglab("predict", "m.ndcg", "data.txt", "--out", "./m.ndcg", cwd=case),
               "--out", "m.ndcg")  # fmt: skip
    assert snapshot(case) == before


def test_evaluate_refuses_to_overwrite_its_input(case):
    before = snapshot(case)
    res = ndcglab("evaluate", "data.txt", "--feature", "1", "--per-query", "data.txt", cwd=case)
    error_line(res, "--per-query", "data.txt")
    assert snapshot(case) == before


def test_atomic_write_keeps_permissions(case):
    out = case / "secret.txt"
    out.write_text("old\n")
    out.chmod(0o600)
    res = ndcglab("generate", "small", "--out", "secret.txt", cwd=case)
    assert res.returncode == 0, res.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_text() != "old\n"


def _dead_pid() -> int:
    pid = 4_000_000
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        except PermissionError:
            pass
        pid += 1


def test_stale_temporary_files_are_removed_on_the_next_run(case):
    old = time.time() - 7200
    stale = case / f".g.txt.{_dead_pid()}.abcd1234.ndcglab-tmp"
    legacy = case / ".g.txt.abcd1234.tmp"  # the naming of older versions
    fresh = case / f".g.txt.{os.getpid()}.abcd1234.ndcglab-tmp"  # a live process's: kept
    other = case / ".g.txt.notes"  # not ndcglab's naming: kept
    for p in (stale, legacy, fresh, other):
        p.write_bytes(b"x" * 1000)
        os.utime(p, (old, old))
    res = ndcglab("generate", "small", "--out", "g.txt", cwd=case)
    assert res.returncode == 0, res.stderr
    assert not stale.exists() and not legacy.exists()
    assert fresh.exists() and other.exists()


@pytest.mark.parametrize(
    "argv, target, fsize",
    [
        (["predict", "m.ndcg", "data.txt", "--out", "scores.txt"], "scores.txt", 64),
        (["generate", "small", "--out", "g.txt"], "g.txt", 4096),
        (["reproduce", "limits", "--quick", "-q", "--out", "rep"], "rep", 20_000),
    ],
    ids=["predict", "generate", "reproduce"],
)
def test_disk_full_is_one_line_and_the_old_output_survives(case, argv, target, fsize):
    if target == "rep":
        from ndcglab.reproduce.report.bundle import MARKER_NAME, MARKER_TEXT

        (case / "rep").mkdir()
        (case / "rep" / MARKER_NAME).write_text(MARKER_TEXT)
        (case / "rep" / "index.html").write_text("old report")
    else:
        # one run without the limit first, so that a cold Numba cache (whose own writes the
        # limit would stop) is filled before the limited run
        warm = [a if a != target else "warm-" + target for a in argv]
        assert ndcglab(*warm, cwd=case).returncode == 0
        (case / ("warm-" + target)).unlink()
        (case / target).write_text("old\n")
    before = snapshot(case)
    res = ndcglab(*argv, cwd=case, fsize=fsize)
    line = error_line(res, target)
    assert "Fix:" in line
    assert snapshot(case) == before  # the old output survives; no temporary file is left


def test_a_failed_write_removes_the_folders_it_created(case):
    """Missing folders of an output are created; a write that fails removes them again."""
    assert ndcglab("generate", "small", "--out", "warm.txt", cwd=case).returncode == 0
    (case / "warm.txt").unlink()  # (fills a cold Numba cache before the limited run)
    before = snapshot(case)
    res = ndcglab("generate", "small", "--out", "new/deeper/g.txt", cwd=case, fsize=4096)
    error_line(res, "g.txt")
    assert snapshot(case) == before
    assert not (case / "new").exists()
    ok = ndcglab("generate", "small", "--out", "new/deeper/g.txt", cwd=case)
    assert ok.returncode == 0, ok.stderr
    assert (case / "new" / "deeper" / "g.txt").stat().st_size > 0


def test_ctrl_c_in_generate_leaves_nothing(case):
    proc = subprocess.Popen(
        cli_argv("generate", "default", "--queries", "3000", "--out", "big.txt.gz"),
        cwd=case, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    # generate announces the expected size just before it starts writing: interrupt then, so
    # the signal lands inside the write (seconds long for 3,000 queries), never after it
    assert proc.stderr is not None
    first = proc.stderr.readline()
    assert "writing about" in first, first
    time.sleep(0.2)
    assert proc.poll() is None, "generate ended before it could be interrupted"
    out, err = interrupt(proc)
    res = subprocess.CompletedProcess(proc.args, proc.returncode, out, first + err)
    assert res.returncode == 130
    error_line(res, "interrupted", "big.txt.gz", "was not created")
    assert sorted(p.name for p in case.iterdir()) == ["data.txt", "m.ndcg"]


def test_an_operating_system_error_is_one_line(case):
    (case / "afile").write_text("x")
    before = snapshot(case)
    res = ndcglab("generate", "small", "--out", "afile/g.txt", cwd=case)
    assert res.returncode == 1
    error_line(res, "afile", "Fix:")
    assert snapshot(case) == before


# ============================================================================ data files
@pytest.mark.parametrize("token", ["1:inf", "1:-Infinity", "1:1e999", "1:1e39", "1:-3.5e38"])
@pytest.mark.parametrize("command", ["describe", "evaluate"])
def test_non_finite_or_out_of_range_features_are_refused(case, token, command):
    lines = DATA.splitlines(keepends=True)
    lines[4] = lines[4].replace("1:0.2", token)
    (case / "bad.txt").write_text("".join(lines))
    argv = ["describe", "bad.txt"] if command == "describe" else ["evaluate", "bad.txt",
                                                                  "--feature", "1"]  # fmt: skip
    error_line(ndcglab(*argv, cwd=case), "bad.txt:5", token)


def test_float32_max_is_read(case):
    (case / "edge.txt").write_text("1 qid:1 1:3.4028234e38 2:-3.4028234e38\n0 qid:1 1:0 2:0\n")
    res = ndcglab("describe", "edge.txt", "--format", "json", cwd=case)
    assert res.returncode == 0, res.stderr


def test_cr_only_line_endings_are_refused(case):
    (case / "cr.txt").write_bytes(DATA.replace("\n", "\r").encode())
    error_line(ndcglab("describe", "cr.txt", cwd=case), "cr.txt:1", "carriage return")
    (case / "crlf.txt").write_bytes(DATA.replace("\n", "\r\n").encode())
    assert ndcglab("describe", "crlf.txt", cwd=case).returncode == 0


def test_a_query_file_beside_the_data_that_disagrees_is_never_silent(case):
    (case / "data.txt.query").write_text("4\n5\n")
    res = ndcglab("describe", "data.txt", cwd=case)
    assert res.returncode == 0, res.stderr
    warned = [ln for ln in res.stderr.splitlines() if ln.startswith("ndcglab: warning:")]
    assert len(warned) == 1 and "data.txt.query" in warned[0], res.stderr
    # the same file given explicitly is an error
    res = ndcglab("describe", "data.txt", "--query-file", "data.txt.query", cwd=case)
    error_line(res, "data.txt.query")


@pytest.mark.parametrize("line", [1, 3])
def test_a_huge_feature_index_names_its_line(case, line):
    lines = DATA.splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].replace("3:", "999999999:")
    (case / "big.txt").write_text("".join(lines))
    error_line(ndcglab("describe", "big.txt", cwd=case), f"big.txt:{line}", "999999999:")


def test_the_feature_cap_is_documented_and_overridable(case):
    (case / "wide.txt").write_text("1 qid:1 1:1 200000:1\n0 qid:1 1:0\n")
    error_line(ndcglab("describe", "wide.txt", cwd=case), "wide.txt:1", "200000:1",
               "NDCGLAB_MAX_FEATURES")  # fmt: skip
    res = ndcglab("describe", "wide.txt", cwd=case, env={"NDCGLAB_MAX_FEATURES": "300000"})
    assert res.returncode == 0, res.stderr
    res = ndcglab("describe", "wide.txt", cwd=case, env={"NDCGLAB_MAX_FEATURES": "zero"})
    error_line(res, "NDCGLAB_MAX_FEATURES")


def test_truncated_and_corrupt_gzip_are_refused(case):
    blob = gzip.compress(DATA.encode() * 50, mtime=0)
    (case / "t.txt.gz").write_bytes(blob[: len(blob) // 2])
    error_line(ndcglab("describe", "t.txt.gz", cwd=case), "t.txt.gz", "truncated")
    bad = bytearray(blob)
    for k in range(40, 60):
        bad[k] ^= 0xFF
    (case / "c.txt.gz").write_bytes(bytes(bad))
    error_line(ndcglab("describe", "c.txt.gz", cwd=case), "c.txt.gz")


def test_the_binary_cache_hashes_the_query_file_and_rebuilds_a_corrupt_entry(tmp_path):
    import warnings

    from ndcglab.data import read_letor

    data = "".join(ln.split(" ", 2)[0] + " " + ln.split(" ", 2)[2] for ln in DATA.splitlines(True))
    (tmp_path / "d.txt").write_text(data)
    q = tmp_path / "d.txt.query"
    q.write_text("3\n6\n")
    cache = tmp_path / "cache"
    assert read_letor(tmp_path / "d.txt", cache=cache).n_queries == 2
    st = q.stat()
    q.write_text("6\n3\n")  # same size, same modification time, other content
    os.utime(q, ns=(st.st_atime_ns, st.st_mtime_ns))
    ds = read_letor(tmp_path / "d.txt", cache=cache)
    assert ds.boundaries.tolist() == [0, 6, 9]
    (entry,) = cache.glob("*.npz")
    entry.write_bytes(entry.read_bytes()[:200])  # a truncated entry
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = read_letor(tmp_path / "d.txt", cache=cache)
    assert ds.boundaries.tolist() == [0, 6, 9]
    assert len(caught) == 1 and "rebuilding" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_letor(tmp_path / "d.txt", cache=cache)  # rebuilt: no second warning


# ============================================================================ model files
def _flip(src: Path, dst: Path, at: float) -> Path:
    b = bytearray(src.read_bytes())
    k = int(len(b) * at)
    for i in range(k, k + 8):
        b[i] ^= 0x5A
    dst.write_bytes(bytes(b))
    return dst


@pytest.mark.parametrize(
    "make, where",
    [
        (lambda d: _flip(d / "m.ndcg", d / "x.ndcg", 0.5), ["x.ndcg"]),
        (lambda d: _flip(d / "m.ndcg", d / "x.ndcg", 0.05), ["x.ndcg"]),
        (lambda d: _flip(d / "m.ndcg", d / "x.ndcg", 0.97), ["x.ndcg"]),
        (lambda d: (d / "x.ndcg").write_bytes(b"PK\x03\x04garbage"), ["x.ndcg"]),
        (lambda d: rewrite_zip(d / "m.ndcg", d / "x.ndcg", members={"weights.pt": b"\x80\x04junk"}),
         ["x.ndcg", "weights.pt"]),
        (lambda d: rewrite_zip(d / "m.ndcg", d / "x.ndcg",
                               meta=lambda m: m["normalization"].update(mean=[0.0, 1.0])),
         ["x.ndcg", "normalization.mean"]),
        (lambda d: rewrite_zip(d / "m.ndcg", d / "x.ndcg",
                               meta=lambda m: m["model"].update(colour="red")),
         ["x.ndcg", "model.colour"]),
        (lambda d: rewrite_zip(d / "m.ndcg", d / "x.ndcg",
                               meta=lambda m: m["model"].update(kind="mlp", bias=None,
                                                                init=None, hidden=[200_000_000])),
         ["x.ndcg", "model."]),
        (lambda d: rewrite_zip(d / "m.ndcg", d / "x.ndcg",
                               meta=lambda m: m.update(n_features="3")),
         ["x.ndcg", "n_features"]),
        (lambda d: rewrite_zip(d / "m.ndcg", d / "x.ndcg",
                               meta=lambda m: m.update(feature_names=["a"])),
         ["x.ndcg", "feature_names"]),
    ],
    ids=["flip-middle", "flip-start", "flip-end", "not-a-zip", "garbage-weights",
         "wrong-length-vector", "unknown-key", "huge-hidden-layer", "n-features-type",
         "feature-names-length"],
)  # fmt: skip
def test_damaged_model_files_are_refused_before_anything_is_built(case, make, where):
    make(case)
    before = snapshot(case)
    res = ndcglab("predict", "x.ndcg", "data.txt", "--out", "s.txt", cwd=case)
    error_line(res, *where)
    assert snapshot(case) == before


def test_the_huge_layer_is_refused_without_allocating(case):
    def huge(m: dict) -> None:
        m["model"] = {"kind": "mlp", "n_features": 3, "hidden": [200_000_000]}

    rewrite_zip(case / "m.ndcg", case / "x.ndcg", meta=huge)
    t0 = time.time()
    res = ndcglab("predict", "x.ndcg", "data.txt", "--out", "s.txt", cwd=case)
    error_line(res, "x.ndcg", "model.hidden")
    assert time.time() - t0 < 60


@pytest.mark.parametrize(
    "text", [b"tree\nversion=v3\nnum_class=1\ngarbage\n", b"tree\n", b"tree\n\x00\xff"]
)
def test_garbage_lightgbm_model_text_is_refused(case, text):
    from ndcglab.models.file_format import file_header

    header = {**file_header(["lightgbm"]), "model": {"kind": "gbdt"}, "n_features": 3}
    with zipfile.ZipFile(case / "g.ndcg", "w") as zf:
        zf.writestr("metadata.json", json.dumps(header))
        zf.writestr("lightgbm.txt", text)
    (case / "g.txt").write_bytes(text)
    res = ndcglab("predict", "g.ndcg", "data.txt", "--out", "s.txt", cwd=case)
    assert "lightgbm" in error_line(res, "g.ndcg").lower()
    res = ndcglab("predict", "g.txt", "data.txt", "--out", "s.txt", cwd=case)
    error_line(res, "g.txt", "not an ndcglab model file")
    pytest.importorskip("lightgbm")
    from ndcglab.errors import DataFormatError
    from ndcglab.gbdt import load_gbdt

    # the text's structure is checked before LightGBM parses it (gbdt/model_text.py)
    with pytest.raises(DataFormatError, match=r"LightGBM cannot read|model text is damaged"):
        load_gbdt(case / "g.txt")


def test_a_corrupt_checkpoint_says_how_to_restart(case):
    (case / "ck").mkdir()
    (case / "ck" / "checkpoint.pt").write_bytes(b"PK\x03\x04" + os.urandom(300))
    res = ndcglab("train", "data.txt", "--out", "t.ndcg", "--checkpoint", "ck", "--resume",
                  "--epochs", "2", "-q", cwd=case)  # fmt: skip
    line = error_line(res, "checkpoint.pt", "unreadable", "restart")
    assert "weights_only" not in res.stderr + res.stdout
    assert "Fix:" in line


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_threads_must_be_positive(case, value):
    res = ndcglab("train", "data.txt", "--out", "t.ndcg", "--threads", value, cwd=case)
    assert res.returncode == 2
    error_line(res, "--threads", value)
    assert not (case / "t.ndcg").exists()


# ============================================================================ exports
def test_compare_export_escapes_markdown_html_and_csv_formulas(case):
    rng = np.random.default_rng(0)
    for name in ("a.txt", "b.txt"):
        (case / name).write_text("".join(f"{x:.4f}\n" for x in rng.random(9)))
    evil = "<img src=x onerror=alert(1)>"
    formula = '=HYPERLINK("http://x","y")'
    res = ndcglab("compare", "data.txt", "--scores", "a.txt", "--name", evil, "--scores",
                  "b.txt", "--name", formula, "--export", "t.md", "--export", "t.csv",
                  "--export", "t.tex", cwd=case)  # fmt: skip
    assert res.returncode == 0, res.stderr
    md = (case / "t.md").read_text()
    assert "<img" not in md and "&lt;img" in md
    csv_text = (case / "t.csv").read_text()
    assert "'=HYPERLINK" in csv_text
    assert not any(
        cell.lstrip('"').startswith(("=", "@", "+"))
        for line in csv_text.splitlines()
        for cell in line.split(",")
    )


def test_python_dash_m_ndcglab_is_the_command_line(tmp_path: Path) -> None:
    """``python -m ndcglab`` runs the same command line: its version, and an error as one line
    with exit status 2."""
    ok = subprocess.run(
        [sys.executable, "-m", "ndcglab", "--version"], capture_output=True, text=True, timeout=60
    )
    assert ok.returncode == 0 and ok.stdout.startswith("ndcglab "), ok.stdout + ok.stderr
    bad = subprocess.run(
        [sys.executable, "-m", "ndcglab", "evaluate", "--qrels", str(tmp_path / "none.txt")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.count("\n") == 1 and bad.stderr.startswith("ndcglab: error:"), bad.stderr


def test_a_missing_file_gets_the_fix_of_its_kind(tmp_path: Path) -> None:
    """A missing LETOR file points to the Fold1..Fold5 layout; a missing TREC file or scores
    file gets a plain "check the path" (no LETOR hint where it does not apply)."""
    run = tmp_path / "run.txt"
    run.write_text("1 Q0 d1 1 0.5 t\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n")
    letor = tmp_path / "data.txt"
    letor.write_text(DATA)
    trec = error_line(
        ndcglab("evaluate", "--qrels", tmp_path / "none.txt", "--run", run, cwd=tmp_path),
        "none.txt",
        "file not found",
        "check the path",
    )
    assert "Fold" not in trec
    error_line(
        ndcglab("evaluate", "--qrels", qrels, "--run", tmp_path / "gone.txt", cwd=tmp_path),
        "gone.txt",
        "check the path",
    )
    scores = error_line(
        ndcglab("evaluate", letor, "--scores", tmp_path / "s.txt", cwd=tmp_path), "s.txt"
    )
    assert "Fold" not in scores
    error_line(
        ndcglab("describe", tmp_path / "missing.txt", cwd=tmp_path),
        "missing.txt",
        "LETOR folds live in Fold1..Fold5",
    )
    folder = error_line(
        ndcglab("evaluate", "--qrels", tmp_path, "--run", run, cwd=tmp_path),
        "is a directory",
    )
    assert "load_letor_folder" not in folder
    # LETOR distributions ship train.txt.gz: a missing train.txt beside one points to it
    with gzip.open(tmp_path / "train.txt.gz", "wt") as f:
        f.write(DATA)
    error_line(
        ndcglab("describe", tmp_path / "train.txt", cwd=tmp_path),
        "train.txt",
        "file not found",
        f"did you mean {tmp_path / 'train.txt.gz'}?",
    )


@pytest.mark.parametrize("label", ["1100", "1023"])
def test_a_gain_that_overflows_is_one_line_and_no_warning(case: Path, label: str) -> None:
    """Labels whose exp2 gain (label 1100), or whose DCG (four labels 1023), overflows double
    precision: one error line naming the query or label, and no NumPy overflow warning before
    it (the sums are checked after they are taken)."""
    (case / "q.txt").write_text("".join(f"q1 0 d{i} {label}\n" for i in range(1, 5)))
    (case / "r.txt").write_text("".join(f"q1 Q0 d{i} {i} {1 - i / 10} x\n" for i in range(1, 5)))
    res = ndcglab(
        "evaluate", "--qrels", "q.txt", "--run", "r.txt", "--measure", "ndcg",
        "--preset", "standard", cwd=case,
    )  # fmt: skip
    error_line(res, "overflows", "Fix:")
    assert "warning" not in res.stderr, res.stderr


def test_a_score_beyond_single_precision_names_query_and_document(case: Path) -> None:
    """trec_eval's presets compare scores as C floats: a score beyond float32's range is one
    error line naming the score, its document and its query, with no NumPy warning; the
    float64 precision the fix names reads the same file."""
    (case / "q.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\n")
    (case / "r.txt").write_text("q1 Q0 d1 1 1 x\nq1 Q0 d2 2 0 x\nq2 Q0 d3 1 -1e308 x\n")
    res = ndcglab("evaluate", "--qrels", "q.txt", "--run", "r.txt", cwd=case)
    error_line(res, "-1e+308", "'d3'", "'q2'", "float64")
    assert "warning" not in res.stderr, res.stderr
    ok = ndcglab(
        "evaluate", "--qrels", "q.txt", "--run", "r.txt", "--score-precision", "float64",
        cwd=case,
    )  # fmt: skip
    assert ok.returncode == 0, ok.stderr
