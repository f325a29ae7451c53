"""The tool presets against the libraries themselves, run now (each test skips cleanly when
its library is not installed): the same calls as ``regenerate.py`` on a few cases of the
suite, compared with the preset at the golden file's tolerance. Where the installed version
is the golden file's, the values must also equal the stored ones bit for bit — which is what
``regenerate.py --check`` verifies for the whole suite."""

from __future__ import annotations

import importlib
import math
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
LIVE_CASES = ("ties", "ties_float32", "empty", "short", "float_labels", "negative")

MODULES = {
    "xgboost": "xgboost",
    "catboost": "catboost",
    "torchmetrics": "torchmetrics",
    "rax": "rax",
    "ranx": "ranx",
    "gdeval": "ir_measures",
    "allrank": "allrank",
}


@pytest.mark.parametrize("tool", sorted(MODULES))
def test_live_library_equals_preset_and_golden(tool: str) -> None:
    pytest.importorskip(MODULES[tool])
    if tool == "gdeval":
        import shutil

        if shutil.which("perl") is None:
            pytest.skip("gdeval.pl needs perl")
    sys.path.insert(0, str(HERE))
    try:
        regenerate = importlib.import_module("regenerate")
    finally:
        sys.path.remove(str(HERE))
    from .test_conformance import load_golden, ndcglab_values

    cases = [c for c in regenerate.generate() if c["name"] in LIVE_CASES]
    fn, tol, _ = regenerate.TOOLS[tool]
    version, entries = fn(cases)
    gold = load_golden(tool)
    stored = {(e["case"], e["call"]): e for e in gold["entries"]}
    by_name = {c["name"]: c for c in cases}
    checked = 0
    for e in entries:
        if version == gold["version"]:
            assert e == stored[(e["case"], e["call"])], e
        if "error" in e:
            continue
        got, mean = ndcglab_values(by_name[e["case"]], e["preset"], e["measure"])
        for w, g in zip(e["per_query"], got):
            if w is None:
                assert math.isnan(g)
            else:
                assert abs(w - g) <= tol, (e, w, g)
        if e["mean"] is not None:
            assert abs(e["mean"] - mean) <= tol
        checked += 1
    assert checked > 0
