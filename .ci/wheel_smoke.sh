#!/usr/bin/env bash
# Build the sdist and the wheel, install the WHEEL (not the source tree, not editable) into a fresh
# virtual environment, and use it from a folder outside the source tree:
#   1. core install (numpy, scipy, numba, tqdm): the version, generate + evaluate, every public
#      package imports without torch, a loss or an experiment without torch says which extra to
#      install, and the package's types (py.typed) are seen by a type checker;
#   2. the same environment with the `torch` and `plot` extras: a loss computes, and
#      `ndcglab reproduce linear-ndcg --quick` writes its report.
# Needs `build` in the calling Python (the `dev` extra has it). Run from anywhere:
#   bash .ci/wheel_smoke.sh
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PY=${PYTHON:-python}

TMP=$(mktemp -d "${TMPDIR:-/tmp}/ndcglab-wheel.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
say() { printf 'wheel-smoke: %s\n' "$*"; }
fail() { printf 'wheel-smoke: FAILED: %s\n' "$*" >&2; exit 1; }

# ---------------------------------------------------------------- build
rm -rf dist
if ! "$PY" -m build --outdir dist . >"$TMP/build.log" 2>&1; then
    tail -40 "$TMP/build.log" >&2
    fail "python -m build"
fi
shopt -s nullglob
wheels=(dist/ndcglab-*.whl)
sdists=(dist/ndcglab-*.tar.gz)
shopt -u nullglob
[[ ${#wheels[@]} -eq 1 && ${#sdists[@]} -eq 1 ]] || fail "expected one wheel and one sdist in dist/"
WHEEL=$ROOT/${wheels[0]}
SDIST=$ROOT/${sdists[0]}
VERSION=$(basename "$WHEEL" | cut -d- -f2)
say "built $(basename "$SDIST") and $(basename "$WHEEL")"

# What the archives must hold: every module of src/ and py.typed in the wheel, the licence in both,
# and in the sdist the tests and docs a packager runs and reads.
"$PY" - "$WHEEL" "$SDIST" "$VERSION" <<'EOF'
import sys, tarfile, zipfile
from pathlib import Path

wheel, sdist, version = sys.argv[1:4]
src = {p.relative_to("src").as_posix() for p in Path("src/ndcglab").rglob("*.py")}
src.add("ndcglab/py.typed")
names = set(zipfile.ZipFile(wheel).namelist())
missing = sorted(src - names)
assert not missing, f"the wheel lacks {missing}"
extra = sorted(n for n in names if not n.startswith(("ndcglab/", f"ndcglab-{version}.dist-info/")))
assert not extra, f"the wheel holds files outside the package: {extra[:10]}"
assert f"ndcglab-{version}.dist-info/licenses/LICENSE" in names, "the wheel lacks LICENSE"
top = f"ndcglab-{version}/"
held = {n[len(top):] for n in tarfile.open(sdist).getnames() if n.startswith(top)}
need = {"LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml", "constraints.txt",
        "src/ndcglab/py.typed", "tests/conftest.py", "docs/DESIGN.md"}
assert need <= held, f"the sdist lacks {sorted(need - held)}"
print(f"wheel-smoke: archives hold {len(src)} package files, py.typed and LICENSE")
EOF

# ---------------------------------------------------------------- 1. core install
VENV=$TMP/venv
"$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet -c "$ROOT/constraints.txt" "$WHEEL"
say "installed the wheel (core) into a fresh virtual environment"
mkdir "$TMP/work"
cd "$TMP/work"
export PYTHONPATH= PYTHONNOUSERSITE=1
BIN=$VENV/bin

got=$("$BIN/ndcglab" --version)
[[ $got == "ndcglab $VERSION" ]] || fail "ndcglab --version printed '$got', expected 'ndcglab $VERSION'"
say "$got"

"$BIN/ndcglab" generate small --seed 3 --out data.txt >/dev/null
"$BIN/ndcglab" evaluate data.txt --feature 1 --preset letor4 --format json >eval.json
"$BIN/python" - <<'EOF'
import json
res = json.load(open("eval.json"))
v = res["mean"]["ndcg@10"]
assert 0.0 <= v <= 1.0, v
print(f"wheel-smoke: generate + evaluate: NDCG@10 = {v:.4f} over {res['queries']} queries")
EOF

"$BIN/python" - "$VENV" <<'EOF'
import importlib, sys
from pathlib import Path

venv = Path(sys.argv[1]).resolve()
import ndcglab

where = Path(ndcglab.__file__).resolve()
assert venv in where.parents, f"ndcglab imported from {where}, not from the installed wheel"
# Packages of the core install: they import without any extra and import no heavy library.
core = ["ndcglab.errors", "ndcglab.data", "ndcglab.measures", "ndcglab.losses", "ndcglab.analysis",
        "ndcglab.cli.main"]
# Packages built on an extra: they import, or refuse with the extra to install.
extra = ["ndcglab.models", "ndcglab.training", "ndcglab.gbdt", "ndcglab.estimator",
         "ndcglab.reproduce"]
from ndcglab import MissingDependencyError

for name in core + extra:
    try:
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", ()):  # names a package loads lazily load here
            getattr(mod, attr)
    except MissingDependencyError as exc:
        assert name in extra and "pip install 'ndcglab[" in str(exc), (name, str(exc))
        print(f"wheel-smoke: {name} without its extra: {exc}")
        continue
    heavy = sorted({"torch", "lightgbm", "matplotlib", "dask"} & set(sys.modules))
    assert not heavy, f"importing {name} imported {heavy} (they must load only when used)"

import numpy as np
from ndcglab.losses import get_loss

loss = get_loss("listnet")
try:
    loss(np.zeros((1, 3)), np.zeros((1, 3)), np.ones((1, 3), bool))
except MissingDependencyError as exc:
    msg = str(exc)
    assert "pip install 'ndcglab[torch]'" in msg, msg
else:
    raise AssertionError("a loss computed without torch installed")
print(f"wheel-smoke: the core packages import without torch; a loss says: {msg}")
EOF

set +e
"$BIN/ndcglab" reproduce linear-ndcg --quick --out no-torch >no-torch.log 2>&1
rc=$?
set -e
if [[ $rc -eq 0 ]] || ! grep -q "pip install 'ndcglab\[torch\]'" no-torch.log; then
    cat no-torch.log >&2
    fail "reproduce without torch should stop and name the torch extra (exit $rc)"
fi
say "reproduce without torch stops (exit $rc) naming the extra: $(tail -1 no-torch.log)"

# The installed package's own annotations (py.typed) are what a user's type checker reads.
if command -v mypy >/dev/null 2>&1; then
    cat >consumer.py <<'EOF'
from ndcglab.data import make_synthetic
from ndcglab.measures import EvaluationResult, evaluate

ds = make_synthetic("small", seed=0)
res: EvaluationResult = evaluate(ds, ds.features[:, 0], ["ndcg@10"])
mean: dict[str, float] = res.mean
EOF
    if ! mypy --python-executable "$BIN/python" --no-incremental --strict consumer.py >mypy.log 2>&1; then
        cat mypy.log >&2
        fail "a type checker does not see the installed package's types"
    fi
    say "mypy --strict on a user's script reads the wheel's types: $(tail -1 mypy.log)"
fi

# ---------------------------------------------------------------- 2. with the torch and plot extras
"$BIN/python" -m pip install --quiet -c "$ROOT/constraints.txt" "$WHEEL[torch,plot]"
say "installed the wheel's torch and plot extras"
"$BIN/python" - <<'EOF'
import math
import torch
from ndcglab.losses import get_loss

scores = torch.tensor([[0.3, 0.1, 0.2]], requires_grad=True)
labels = torch.tensor([[2.0, 0.0, 1.0]])
value = get_loss("consistent_listnet(norm=z10)")(scores, labels, torch.ones(1, 3, dtype=torch.bool))
total = float(value.sum().detach())
value.sum().backward()
assert math.isfinite(total) and scores.grad is not None
print(f"wheel-smoke: consistent_listnet(norm=z10) = {total:.6f}, gradient flows")
EOF
"$BIN/ndcglab" reproduce linear-ndcg --quick --out "$TMP/r" >reproduce.log 2>&1 ||
    { cat reproduce.log >&2; fail "ndcglab reproduce linear-ndcg --quick"; }
[[ -s $TMP/r/index.html && -s $TMP/r/results.json ]] || fail "the report folder lacks index.html"
say "reproduce linear-ndcg --quick wrote $(ls "$TMP/r" | tr '\n' ' ')"
say "ok"
