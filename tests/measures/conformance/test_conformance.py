"""Every tool preset against the real library's values stored in ``golden/`` (the conformance
suite): per query and mean, within the tolerance each golden file states (1e-12 for libraries
that compute in double precision, their float32 precision or printed digits otherwise). Where
the library refuses an input, the preset must refuse it too (an ndcglab error, never a
number). The golden files are written by ``regenerate.py`` from the libraries themselves."""

from __future__ import annotations

import json
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ndcglab.errors import NdcglabError
from ndcglab.measures import evaluate_arrays

GOLDEN = Path(__file__).resolve().parent / "golden"
TOOLS = sorted(p.stem for p in GOLDEN.glob("*.json") if p.stem != "cases")


def load_cases() -> dict[str, dict[str, Any]]:
    """The cases by name."""
    return {c["name"]: c for c in json.loads((GOLDEN / "cases.json").read_text())["cases"]}


def load_golden(tool: str) -> dict[str, Any]:
    """One tool's golden file."""
    return json.loads((GOLDEN / f"{tool}.json").read_text())


def ndcglab_values(case: dict[str, Any], preset: str, measure: str) -> tuple[np.ndarray, float]:
    """ndcglab's per-query values and mean of one golden entry's preset and measure."""
    b = np.concatenate([[0], np.cumsum(case["groups"])])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = evaluate_arrays(
            np.asarray(case["labels"]),
            np.asarray(case["scores"]),
            b,
            measure,
            preset=preset,
            doc_ids=np.asarray(case["doc_ids"], dtype=object),
        )
    name = res.names[0]
    return res.per_query[name], res.mean[name]


def mismatches(tool: str) -> tuple[list[str], float, int]:
    """Every entry of ``tool`` where the preset and the library disagree (text), the largest
    gap over the entries that agree within tolerance, and the number of entries."""
    cases = load_cases()
    gold = load_golden(tool)
    tol = gold["tolerance"]
    bad: list[str] = []
    worst = 0.0
    for e in gold["entries"]:
        where = f"{e['case']}: {e['call']} = {e['preset']}:{e['measure']}"
        try:
            got, mean = ndcglab_values(cases[e["case"]], e["preset"], e["measure"])
        except NdcglabError as exc:
            if "error" not in e:
                bad.append(f"{where}: ndcglab refused ({exc}) but the library gives {e['mean']}")
            continue
        if "error" in e:
            bad.append(f"{where}: the library refuses ({e['error']}) but ndcglab gives {mean}")
            continue
        want = [math.nan if v is None else v for v in e["per_query"]]
        for q, (w, g) in enumerate(zip(want, got)):
            if math.isnan(w) != math.isnan(g) or (not math.isnan(w) and abs(w - g) > tol):
                bad.append(f"{where}: query {q}: library {w!r}, ndcglab {g!r}")
            elif not math.isnan(w):
                worst = max(worst, abs(w - g))
        wm = math.nan if e["mean"] is None else e["mean"]
        if math.isnan(wm) != math.isnan(mean) or (not math.isnan(wm) and abs(wm - mean) > tol):
            bad.append(f"{where}: mean: library {wm!r}, ndcglab {mean!r}")
        elif not math.isnan(wm):
            worst = max(worst, abs(wm - mean))
    return bad, worst, len(gold["entries"])


@pytest.mark.parametrize("tool", TOOLS)
def test_preset_equals_library(tool: str) -> None:
    bad, _, n = mismatches(tool)
    assert not bad, f"{len(bad)} of {n} entries differ:\n" + "\n".join(bad[:25])


def test_every_tool_has_golden_values() -> None:
    assert {"xgboost", "catboost", "torchmetrics", "allrank", "rax", "ranx", "gdeval"} <= set(TOOLS)
    for tool in TOOLS:
        gold = load_golden(tool)
        assert gold["version"] and gold["entries"]
        assert any("error" not in e for e in gold["entries"])


@pytest.mark.parametrize("tool", TOOLS)
def test_preset_names_the_version_it_was_verified_against(tool: str) -> None:
    from ndcglab.measures import get_preset

    version = load_golden(tool)["version"].split(",")[0].split()[-1]
    assert version in get_preset(tool).verified


def test_xgboost_minus_names_read_as_empty_zero() -> None:
    from ndcglab.measures import parse_measure

    assert str(parse_measure("ndcg@10-")) == "ndcg(empty=zero)@10"
    assert str(parse_measure("map-")) == "map(empty=zero)"


def test_list_presets_shows_the_verified_versions() -> None:
    import json as _json
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "ndcglab", "list", "presets", "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    items = {it["name"]: it for it in _json.loads(r.stdout)["items"]}
    for tool in TOOLS:
        version = load_golden(tool)["version"].split(",")[0].split()[-1]
        assert version in items[tool]["verified"]
    assert items["catboost"]["options"] == {
        "type": "base, exp",
        "denominator": "logposition, position",
    }
    text = subprocess.run(
        [sys.executable, "-m", "ndcglab", "list", "presets"], capture_output=True, text=True
    ).stdout
    assert "verified against: xgboost 3.2.0" in text
