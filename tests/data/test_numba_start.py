"""The command line's shorter Numba start (:mod:`ndcglab.data._numba_start`): SciPy's BLAS
extension loaded alone, and Numba as able as before (BLAS found, ``np.dot`` compiled and equal to
NumPy's); the library's readers leave SciPy to Numba. Each case runs in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

_FILES = (
    "from pathlib import Path\n"
    "d = Path(sys.argv[1])\n"
    "(d / 'q').write_text('1 0 a 1\\n1 0 b 0\\n2 0 c 2\\n')\n"
    "(d / 'r').write_text('1 Q0 a 1 2.5 t\\n1 Q0 c 2 1 t\\n2 Q0 c 1 0.5 t\\n')\n"
    "from ndcglab.data import trec_columns as tc\n"
    "tc.COMPILED_MIN_LINES = 0  # the kernels (and Numba) for these short files\n"
)

_NUMBA_AS_BEFORE = (
    "from numba import njit\n"
    "from numba.np import arraymath\n"
    "assert arraymath._HAVE_BLAS\n"
    "import numpy as np\n"
    "x = np.arange(1.0, 300.0) / 7\n"
    "y = x[::-1].copy()\n"
    "assert njit(lambda a, b: np.dot(a, b))(x, y) == np.dot(x, y)\n"
    "from scipy.linalg import cython_blas\n"
    "assert cython_blas is sys.modules['scipy.linalg.cython_blas']\n"
)


def _run(tmp_path: Path, code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", "import sys\n" + code, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_command_line_loads_blas_without_scipy_linalg(tmp_path: Path) -> None:
    got = _run(
        tmp_path,
        _FILES + "from ndcglab.cli.main import main\n"
        "try:\n"
        "    main(['evaluate', '--qrels', str(d / 'q'), '--run', str(d / 'r'), '-m', 'map'])\n"
        "except SystemExit as e:\n"
        "    assert not e.code, e.code\n"
        "assert 'numba' in sys.modules and 'scipy.linalg' not in sys.modules\n" + _NUMBA_AS_BEFORE,
    )
    # map of query 1: a (relevant) at rank 1 -> 1.0; query 2: c at rank 1 -> 1.0
    assert any(line.split() == ["map", "1.0000"] for line in got.splitlines()), got


@pytest.mark.parametrize("quick", [True, False])
def test_the_readers_load_scipy_linalg_only_without_quick_start(
    tmp_path: Path, quick: bool
) -> None:
    _run(
        tmp_path,
        _FILES + f"pair = tc.read_trec_columns(d / 'q', d / 'r', quick_start={quick})\n"
        "assert pair is not None and pair[1].value.tolist() == [2.5, 1.0, 0.5]\n"
        f"assert ('scipy.linalg' in sys.modules) is {not quick}\n" + _NUMBA_AS_BEFORE,
    )


def test_nothing_is_done_once_numba_is_loaded() -> None:
    code = (
        "import sys\nimport numba\n"
        "from ndcglab.data._numba_start import preload_cython_blas\n"
        "assert preload_cython_blas() is False\n"
        "assert 'scipy.linalg.cython_blas' not in sys.modules\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
