"""A shorter start for Numba in a process of the command line: SciPy's BLAS extension loaded
by itself, before Numba's set-up asks for it.

Numba's first compiled call (even of a function loaded from its cache) imports
``numba.np.arraymath``, which checks that BLAS is there by importing
``scipy.linalg.cython_blas``. That import runs the whole ``scipy.linalg`` package first: about
0.2 s of CPU and 13 MiB, a tenth of the time ``ndcglab evaluate --qrels --run`` takes for a run
of 3.77M lines. The extension itself loads in about 10 ms. :func:`preload_cython_blas` loads
it under its own name, so that Numba's import finds it and checks what it checked before: BLAS
is there, and ``np.dot`` in a compiled function calls the same module's functions.

The one difference a process can see: ``scipy.linalg`` imported later has no attribute
``cython_blas`` (``sys.modules["scipy.linalg.cython_blas"]`` and ``from scipy.linalg import
cython_blas`` still give it). Hence only the command line asks for it
(:func:`ndcglab.data.trec_columns.read_trec_columns`'s ``quick_start``), never the library.
"""

from __future__ import annotations

import sys

__all__ = ["preload_cython_blas"]

_NAME = "scipy.linalg.cython_blas"


def preload_cython_blas() -> bool:
    """Load ``scipy.linalg.cython_blas`` without the ``scipy.linalg`` package; ``True`` when it
    is loaded now. Nothing is done (``False``) when Numba, ``scipy.linalg`` or the extension is
    already loaded, or the extension is not a single file next to SciPy; any failure leaves the
    usual import to Numba."""
    if _NAME in sys.modules or "scipy.linalg" in sys.modules or "numba" in sys.modules:
        return False
    try:
        import importlib.util
        import os

        import scipy

        folder = os.path.join(next(iter(scipy.__path__)), "linalg")
        found = [
            f
            for f in os.listdir(folder)
            if f.startswith("cython_blas.") and f.endswith((".so", ".pyd"))
        ]
        if len(found) != 1:
            return False
        spec = importlib.util.spec_from_file_location(_NAME, os.path.join(folder, found[0]))
        if spec is None or spec.loader is None:
            return False
        module = importlib.util.module_from_spec(spec)
        sys.modules[_NAME] = module
        spec.loader.exec_module(module)
    except Exception:  # left to Numba's own import
        sys.modules.pop(_NAME, None)
        return False
    return True
