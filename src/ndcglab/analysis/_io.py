"""Small file helpers of the analysis tools: atomic text writes."""

from __future__ import annotations

import os
import tempfile
from os import PathLike
from pathlib import Path

__all__ = ["write_text_atomic"]


def write_text_atomic(path: str | PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder and a
    rename, so that a reader never sees a half-written file. Returns the path."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return target
