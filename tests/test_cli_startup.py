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
from typing import Any

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
    # nor the standard modules it has no use for: shutil (bz2, lzma: argparse's help width),
    # threading (the kernels' pool lock), nor the parser's modules of other commands
    unused_std = {"shutil", "bz2", "lzma", "threading", "concurrent.futures", "logging"}
    assert modules.isdisjoint(unused_std), sorted(modules & unused_std)
    assert not {m for m in modules if m.startswith("ndcglab.cli.")} - {
        "ndcglab.cli.main",
        "ndcglab.cli._parser",
        "ndcglab.cli._common",
        "ndcglab.cli._help",
        "ndcglab.cli._dask",
        "ndcglab.cli.evaluate",
    }


#: the modules of evaluate's start-up whose dataclasses take their frozen methods from
#: ndcglab._compat.FrozenFields (no source compiled at import), and the one class among them
#: that keeps dataclass's generated methods (mutable, with __post_init__ conversions)
_FROZEN_FIELDS_MODULES = (
    "ndcglab._spec",
    "ndcglab._tables",
    "ndcglab._atomic",
    "ndcglab.data.dataset",
    "ndcglab.measures.gains",
    "ndcglab.measures.discounts",
    "ndcglab.measures.registry",
    "ndcglab.measures.presets",
    "ndcglab.measures.compute",
    "ndcglab.measures.evaluate",
)
_GENERATED_ALLOWED = {"ndcglab.data.dataset.RankingDataset"}


def test_evaluate_start_up_compiles_no_dataclass_methods_in_its_modules() -> None:
    """Each dataclass of these modules is declared ``init=False, repr=False, eq=False`` over
    :class:`~ndcglab._compat.FrozenFields`: a new one with generated methods costs every
    process about half a millisecond (tests/measures/test_frozen_values.py checks that the
    methods behave as the generated ones)."""
    import dataclasses
    import importlib

    compiled = set()
    for name in _FROZEN_FIELDS_MODULES:
        module = importlib.import_module(name)
        for obj in vars(module).values():
            if isinstance(obj, type) and obj.__module__ == name and dataclasses.is_dataclass(obj):
                params = obj.__dataclass_params__  # type: ignore[attr-defined]
                if params.init or params.repr or params.eq or params.frozen:
                    compiled.add(f"{name}.{obj.__qualname__}")
    assert compiled == _GENERATED_ALLOWED


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


def test_version_imports_only_ndcglab_light_modules() -> None:
    """``ndcglab --version`` loads, beyond what the interpreter itself loads, ndcglab's package,
    its errors and the command line's entry module: not typing, re, argparse or the parser."""
    code = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "from ndcglab.cli.main import main\n"
        "code = main(['--version'])\n"
        "print(json.dumps({'code': code, 'new': sorted(set(sys.modules) - before)}))\n"
    )
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["code"] == 0
    new = set(got["new"]) - {"__future__", "errno"}
    assert new == {"ndcglab", "ndcglab.errors", "ndcglab.cli", "ndcglab.cli.main"}, sorted(new)


_BLAS_CHILD = """
import contextlib, io, json, os, sys
from ndcglab.cli.main import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(sys.argv[1:])
from threadpoolctl import threadpool_info
threads = [p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"]
print(json.dumps({"code": code, "threads": threads,
                  "env": os.environ.get("OPENBLAS_NUM_THREADS")}))
"""

_PLAIN_CHILD = """
import json, numpy
from threadpoolctl import threadpool_info
print(json.dumps([p["num_threads"] for p in threadpool_info() if p["internal_api"] == "openblas"]))
"""


def _blas_run(code: str, *args: str, **env_vars: str) -> Any:
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARIABLES}
    env.update(env_vars, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


@pytest.fixture
def trec_pair(tmp_path: Path) -> tuple[str, str]:
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run.write_text("1 Q0 a 1 0.9 t\n1 Q0 b 2 0.5 t\n")
    return str(qrels), str(run)


def test_evaluate_loads_openblas_on_one_thread_and_leaves_the_environment(
    trec_pair: tuple[str, str],
) -> None:
    """``evaluate`` multiplies no matrices: NumPy's OpenBLAS is loaded with one thread (no idle
    threads spinning), and the variable that asked for it is gone afterwards (child processes
    and libraries loaded later keep their defaults)."""
    pytest.importorskip("threadpoolctl")
    qrels, run = trec_pair
    plain = _blas_run(_PLAIN_CHILD)
    if not plain:
        pytest.skip("NumPy is not linked to OpenBLAS here")
    if max(plain) == 1:
        pytest.skip("one core: OpenBLAS starts one thread anyway")
    got = _blas_run(_BLAS_CHILD, "evaluate", "--qrels", qrels, "--run", run)
    assert got == {"code": 0, "threads": [1] * len(plain), "env": None}


@pytest.mark.parametrize("variable", BLAS_VARIABLES)
def test_a_users_blas_threads_stand(trec_pair: tuple[str, str], variable: str) -> None:
    """A thread count the user set for OpenBLAS is kept, whichever variable sets it."""
    pytest.importorskip("threadpoolctl")
    qrels, run = trec_pair
    plain = _blas_run(_PLAIN_CHILD, **{variable: "2"})
    if not plain:
        pytest.skip("NumPy is not linked to OpenBLAS here")
    if max(plain) == 1:
        pytest.skip("one core: OpenBLAS caps the threads at 1 anyway")
    got = _blas_run(_BLAS_CHILD, "evaluate", "--qrels", qrels, "--run", run, **{variable: "2"})
    assert got["code"] == 0
    assert got["threads"] == plain


def test_commands_that_multiply_matrices_keep_openblas_threads() -> None:
    """Only commands without BLAS work get one thread: not training, predict or compare (whose
    permutation tests multiply matrices)."""
    from ndcglab.cli.main import COMMANDS, NO_BLAS_COMMANDS

    assert NO_BLAS_COMMANDS <= set(COMMANDS)
    assert NO_BLAS_COMMANDS.isdisjoint({"train", "predict", "cv", "compare", "export", "clicks"})


_GC_CHILD = """
import contextlib, gc, io, json, sys
from ndcglab.cli.main import main
before = gc.get_freeze_count()
if sys.argv[1] == "off":
    gc.disable()
with contextlib.redirect_stdout(io.StringIO()):
    if sys.argv[2] == "process":
        sys.argv[1:] = sys.argv[3:]
        code = main()
    else:
        code = main(sys.argv[3:])
print(json.dumps({"code": code, "enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
                  "before": before}))
"""


@pytest.mark.parametrize(
    ("collector", "how", "frozen"),
    [("on", "process", True), ("on", "call", False), ("off", "process", False)],
)
def test_start_up_objects_are_frozen_only_when_the_process_is_the_command(
    trec_pair: tuple[str, str], collector: str, how: str, frozen: bool
) -> None:
    """The console script (``main()`` reading ``sys.argv``) collects no garbage during its
    start-up and then moves the start-up's objects out of the collector's way
    (``gc.freeze``); ``main(ARGV)`` called from Python (a test, a script) leaves the collector
    as it found it, and so does a process that turned the collector off."""
    qrels, run = trec_pair
    src = str(Path(__file__).resolve().parents[1] / "src")
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    argv = ["evaluate", "--qrels", qrels, "--run", run]
    done = subprocess.run(
        [sys.executable, "-c", _GC_CHILD, collector, how, *argv],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["code"] == 0
    assert got["enabled"] == (collector == "on")
    assert (got["frozen"] > got["before"]) == frozen
