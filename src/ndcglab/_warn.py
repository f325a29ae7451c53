"""Warnings attributed to the user's code: :func:`warn_user`.

A warning's file and line (what Python prints, and what ``-W`` / ``warnings.filterwarnings(...,
module=...)`` match) are those of the first caller outside the ndcglab package, however deep
inside ndcglab the warning arises: the same for ``read_letor``, ``load_dataset``, a cached read
or the command line.
"""

from __future__ import annotations

import os
import sys
import warnings

__all__ = ["warn_user"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_user(message: str | Warning, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` at the first frame whose file is not in ndcglab."""
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level + 1)
