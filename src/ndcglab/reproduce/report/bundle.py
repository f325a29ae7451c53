"""Writing report folders: the files of one report, and the atomic folder of a report with its
sub-reports.

Everything goes into a temporary folder beside the destination, which is renamed into place only
when complete, so a run that fails leaves no half-written report behind.

**Which folders may be replaced.** Every report folder carries a marker file,
:data:`MARKER_NAME` (``.ndcglab-report``), with a fixed first line. An existing destination is
replaced only when it is empty or carries that marker; any other folder (even one holding a
``results.json``) is left alone and an error is raised, so a user's files are never deleted.
Temporary folders of an interrupted run (``.NAME.PID.tmp-*``, ``.NAME.PID.old-*``) are removed
by the next run once their process is gone.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..._atomic import remove_stale_temporaries, temporary_prefix
from ...errors import NdcglabError
from .table import check_name

if TYPE_CHECKING:
    from .document import Report

__all__ = [
    "MARKER_NAME",
    "check_report_destination",
    "is_report_folder",
    "write_bundle",
    "write_report_files",
]

#: the file that marks a folder as written by ndcglab (and so replaceable by a later run)
MARKER_NAME = ".ndcglab-report"
MARKER_TEXT = (
    "ndcglab report folder\n"
    "A later `ndcglab reproduce --out` to this folder replaces it whole while this file is here.\n"
)


def is_report_folder(folder: Path) -> bool:
    """True when ``folder`` carries ndcglab's marker file (see the module docstring)."""
    try:
        with open(folder / MARKER_NAME, encoding="utf-8") as f:
            return f.readline() == MARKER_TEXT.splitlines(keepends=True)[0]
    except (OSError, UnicodeDecodeError):
        return False


def write_report_files(report: Report, folder: Path) -> None:
    """Write every file of ``report`` into ``folder`` (which must exist; not atomic): each table
    as ``tables/NAME.csv|md|tex``, each figure as ``plots/NAME.png``, the extra files,
    ``results.json`` and ``index.html``."""
    if report.tables:
        (folder / "tables").mkdir(exist_ok=True)
    if report.figures:
        (folder / "plots").mkdir(exist_ok=True)
    for name, t in report.tables.items():
        for ext, text in (
            ("csv", t.to_csv()),
            ("md", t.to_markdown(report.legend)),
            ("tex", t.to_latex(report.legend)),
        ):
            (folder / "tables" / f"{name}.{ext}").write_text(text, encoding="utf-8")
    for name, f in report.figures.items():
        (folder / "plots" / f"{name}.png").write_bytes(f.png)
    for rel, content in report.files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(content, encoding="utf-8")
    (folder / "results.json").write_text(
        json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8"
    )
    (folder / "index.html").write_text(report.to_html(), encoding="utf-8")


def check_report_destination(out: str | os.PathLike[str], *, overwrite: bool = True) -> Path:
    """The resolved ``out`` when a report may be written there (absent, an empty folder, or a
    folder carrying ndcglab's marker with ``overwrite``); else :class:`NdcglabError`, and
    nothing is touched. Callers may check before a long run; :func:`write_bundle` checks again.
    """
    dest = Path(out).resolve()
    if dest.exists() or dest.is_symlink():
        if dest.is_symlink() or not dest.is_dir():
            raise NdcglabError(
                f"--out {dest} exists and is not a folder; refusing to replace it. "
                "Fix: choose another path"
            )
        if any(dest.iterdir()) and not (overwrite and is_report_folder(dest)):
            why = (
                "it was not written by ndcglab (it has no " + MARKER_NAME + " marker file)"
                if overwrite
                else "overwrite=False"
            )
            raise NdcglabError(
                f"--out {dest} exists and is not empty, and {why}; refusing to replace it. "
                "Fix: choose a new or empty folder (nothing in this one was changed)"
            )
    return dest


def write_bundle(
    out: str | os.PathLike[str],
    report: Report,
    children: Iterable[tuple[str, Report]] = (),
    *,
    overwrite: bool = True,
) -> Path:
    """Write ``report`` to ``out`` with each child report in ``out/<sub>/``, atomically.

    Everything is written into a temporary folder beside ``out`` and renamed into place at the end.
    An existing ``out`` is replaced only when it is empty, or carries ndcglab's marker file
    (:data:`MARKER_NAME`, written into every report folder) and ``overwrite`` is true; any other
    existing folder is left alone and an error is raised.
    """
    dest = check_report_destination(out, overwrite=overwrite)
    dest.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(dest.parent, dest.name)
    prefix = temporary_prefix(dest.name)
    tmp = Path(tempfile.mkdtemp(prefix=prefix + "tmp-", dir=dest.parent))
    try:
        for sub, child in children:
            check_name(sub, "sub-report")
            (tmp / sub).mkdir()
            child._write_files(tmp / sub)
        report._write_files(tmp)
        (tmp / MARKER_NAME).write_text(MARKER_TEXT, encoding="utf-8")
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        if dest.exists():
            old = Path(tempfile.mkdtemp(prefix=prefix + "old-", dir=dest.parent))
            old.rmdir()
            dest.rename(old)
            tmp.rename(dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            tmp.rename(dest)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dest
