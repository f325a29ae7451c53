"""Versions of Python and of the packages that can change a number: recorded in model files,
checkpoints and reports.

One function for every writer, read from the installed distributions' metadata so that nothing heavy
(torch, LightGBM) is imported just to learn its version.
"""

from __future__ import annotations

import platform
from collections.abc import Iterable
from importlib import metadata

__all__ = ["VERSIONED_PACKAGES", "package_versions"]

#: The packages whose versions every model file and report records (when installed).
VERSIONED_PACKAGES: tuple[str, ...] = (
    "ndcglab",
    "numpy",
    "scipy",
    "torch",
    "lightgbm",
    "matplotlib",
)


def package_versions(packages: Iterable[str] = VERSIONED_PACKAGES) -> dict[str, str | None]:
    """``{"python": ..., name: version or None}`` for each of ``packages`` (None: not installed).

    ``ndcglab`` falls back to ``ndcglab.__version__`` when it runs from a source tree without an
    installed distribution.
    """
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    if "ndcglab" in out and out["ndcglab"] is None:
        from . import __version__

        out["ndcglab"] = __version__
    return out
