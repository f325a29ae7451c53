"""Start-up: what the command line imports before it does its work.

``ndcglab --version`` and ``ndcglab --help`` import nothing beyond the standard library and
ndcglab's own light modules (not even NumPy); a TREC evaluation (``evaluate --qrels --run``)
imports NumPy, which it computes with, but none of the heavy libraries (torch, SciPy, Numba,
pandas, matplotlib, tqdm, LightGBM, XGBoost, Dask, scikit-learn). Each case runs the console
script's own entry point (``ndcglab.cli.main:main``) in a fresh process and reads ``sys.modules``
afterwards, so an import moved back to the top of a module fails here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "torch",
    "scipy",
    "numba",
    "llvmlite",
    "pandas",
    "matplotlib",
    "tqdm",
    "lightgbm",
    "xgboost",
    "dask",
    "sklearn",
)

_CHILD = """
import contextlib, io, json, sys
from ndcglab.cli.main import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    try:
        code = main(sys.argv[1:])
    except SystemExit as exc:
        code = exc.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def _modules(*args: str) -> tuple[int, str, set[str]]:
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return int(got["code"] or 0), got["out"], set(got["modules"])


def _top(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules}


@pytest.mark.parametrize("args", [("--version",), ("--help",), ("predict", "--help")])
def test_version_and_help_import_nothing_heavy_not_even_numpy(args: tuple[str, ...]) -> None:
    code, out, modules = _modules(*args)
    assert code == 0
    assert out.strip()
    assert _top(modules).isdisjoint((*HEAVY, "numpy")), sorted(_top(modules) & {*HEAVY, "numpy"})


def test_version_prints_the_package_version() -> None:
    from ndcglab import __version__

    code, out, _ = _modules("--version")
    assert (code, out) == (0, f"ndcglab {__version__}\n")


def test_trec_evaluation_imports_numpy_but_nothing_heavy(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    run.write_text("1 Q0 a 1 0.9 t\n1 Q0 b 2 0.5 t\n2 Q0 c 1 0.3 t\n2 Q0 d 2 0.1 t\n")
    code, out, modules = _modules("evaluate", "--qrels", str(qrels), "--run", str(run))
    assert code == 0
    assert "ndcg" in out
    assert "numpy" in modules
    assert _top(modules).isdisjoint(HEAVY), sorted(_top(modules) & set(HEAVY))
    # nor ndcglab's own modules that only other paths use: the scorer of training, the tie
    # ranges (no --tie-range), NDCG^beta's Numba kernels, the treceval package, the LETOR reader
    unused = {
        "ndcglab.measures.scorer",
        "ndcglab.measures.tie_range",
        "ndcglab.measures.linear_ndcg",
        "ndcglab.measures._kernels",
        "ndcglab.treceval",
        "ndcglab.data._letor_numpy",
    }
    assert modules.isdisjoint(unused), sorted(modules & unused)


def test_measures_names_load_on_first_use_and_stay_the_same() -> None:
    """Every name of ``ndcglab.measures.__all__`` is importable; the lazily loaded ones are the
    objects of their modules, and ``evaluate`` is the function, not its sub-module."""
    import ndcglab.measures as measures
    from ndcglab.measures import linear_ndcg, scorer, tie_range

    for name in measures.__all__:
        assert getattr(measures, name) is not None
    assert measures.TieRange is tie_range.TieRange
    assert measures.MeasureScorer is scorer.MeasureScorer
    assert measures.linear_dcg is linear_ndcg.linear_dcg
    module = sys.modules["ndcglab.measures.evaluate"]
    assert measures.evaluate is module.evaluate and callable(measures.evaluate)
    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        measures.nothing_here  # noqa: B018


def test_the_package_is_light_and_its_dataset_class_still_there() -> None:
    """``import ndcglab`` loads no NumPy; ``ndcglab.RankingDataset`` is the data class."""
    code = (
        "import sys, ndcglab\n"
        "light = 'numpy' not in sys.modules\n"
        "from ndcglab.data import RankingDataset\n"
        "print(light, ndcglab.RankingDataset is RankingDataset)\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert done.stdout.split() == ["True", "True"]
    import ndcglab

    with pytest.raises(AttributeError, match="no attribute 'nothing_here'"):
        ndcglab.nothing_here  # noqa: B018
