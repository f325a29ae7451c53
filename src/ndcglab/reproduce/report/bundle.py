"""Writing report folders: the files of one report, and the atomic folder of a report with its
sub-reports.

Everything goes into a temporary folder beside the destination, which is renamed into place only
when complete, so a run that fails leaves no half-written report behind.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import NdcglabError
from .table import check_name

if TYPE_CHECKING:
    from .document import Report

__all__ = ["write_bundle", "write_report_files"]


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


def write_bundle(
    out: str | os.PathLike[str],
    report: Report,
    children: Iterable[tuple[str, Report]] = (),
    *,
    overwrite: bool = True,
) -> Path:
    """Write ``report`` to ``out`` with each child report in ``out/<sub>/``, atomically.

    Everything is written into a temporary folder beside ``out`` and renamed into place at the end.
    An existing ``out`` is replaced only when it is empty or an earlier report (it holds a
    ``results.json``) and ``overwrite`` is true; any other existing folder is left alone and an
    error is raised.
    """
    dest = Path(out).resolve()
    if dest.exists():
        if not dest.is_dir():
            raise NdcglabError(f"--out {dest} exists and is not a folder. Fix: choose another path")
        if any(dest.iterdir()) and not ((dest / "results.json").exists() and overwrite):
            raise NdcglabError(
                f"--out {dest} exists and is not an earlier ndcglab report; refusing to replace "
                "it. "
                "Fix: choose a new or empty folder"
            )
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.tmp-", dir=dest.parent))
    try:
        for sub, child in children:
            check_name(sub, "sub-report")
            (tmp / sub).mkdir()
            child._write_files(tmp / sub)
        report._write_files(tmp)
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        if dest.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{dest.name}.old-", dir=dest.parent))
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
