"""The package layers of ndcglab, checked on the source text of every module.

The order (docs/DESIGN.md, "Layers"): imports point down, or sideways within one package.

    0  foundation: errors, _compat, _atomic, _spec, _versions, _tables, _warn, _byte_rows
    1  data
    2  measures, treceval (trec_eval's command line and rules)
    3  losses
    4  models
    5  gbdt, distributed, training
                            (inside layer 5: distributed may import gbdt, training may import
                            gbdt and distributed; gbdt and distributed read training.config, the
                            training options, and nothing else of training)
    6  estimator, analysis, clicks
    7  reproduce, compat
    8  cli
    9  __main__                (``python -m ndcglab``: calls the command line)

`ndcglab/__init__.py` imports `data` and `errors` only (it sits on layer 1); its metadata
(`from ndcglab import __version__`, a constant set before any import) may be read anywhere.
A private name (a module or attribute whose name starts with one underscore) is never reached
from another package; the foundation modules are the one exception, as modules (`ndcglab._spec`
is meant to be imported; a private name inside it is not). `argparse` is imported in
`ndcglab/cli/` only.

Every `import`/`from ... import` statement is read with `ast`, wherever it stands (module level,
inside functions, under `if TYPE_CHECKING:`), relative or absolute, plus
`importlib.import_module("ndcglab....")` with a literal name and attribute chains on imported
ndcglab modules (`compute._tie_key`). Nothing is imported, so a broken module cannot hide a
violation.
"""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE_DIR = ROOT / "src" / "ndcglab"

FOUNDATION = frozenset(
    {"errors", "_compat", "_atomic", "_spec", "_versions", "_tables", "_warn", "_byte_rows"}
)
LAYERS: dict[str, int] = {
    **{name: 0 for name in FOUNDATION},
    "data": 1,
    "measures": 2,
    "treceval": 2,
    "losses": 3,
    "models": 4,
    "training": 5,
    "gbdt": 5,
    "distributed": 5,
    "estimator": 6,
    "analysis": 6,
    "clicks": 6,
    "reproduce": 7,
    "compat": 7,
    "cli": 8,
    "__main__": 9,
}
#: (importer, imported) on the same layer
SIDEWAYS_ALLOWED = frozenset(
    {("distributed", "gbdt"), ("training", "gbdt"), ("training", "distributed")}
)
#: modules that the packages of their own layer may import whatever the order above: the
#: training options (TrainConfig, the defaults), read by the tree engines
SHARED_ON_LAYER = frozenset({"training.config"})
ROOT_MAY_IMPORT = frozenset({"data", "errors"})
ROOT_UNIT = ""  # ndcglab/__init__.py itself; it holds data + errors, so it sits on layer 1
ROOT_LAYER = 1
ARGPARSE_UNITS = frozenset({"cli", "__main__"})


# --------------------------------------------------------------------------- the checker


@dataclass(frozen=True)
class Violation:
    """One offending import: where it is, what it says and which rule it breaks."""

    path: str
    line: int
    statement: str
    rule: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.statement}  -- {self.rule}"


def _module_name(package_dir: Path, path: Path) -> tuple[str, bool]:
    """Dotted module name of a file under `package_dir`, and whether it is a package."""
    rel = path.relative_to(package_dir.parent).with_suffix("")
    parts = list(rel.parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _unit(dotted: str) -> str:
    """The package a module belongs to: the first component after the top package."""
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else ROOT_UNIT


def _layer(unit: str) -> int | None:
    return ROOT_LAYER if unit == ROOT_UNIT else LAYERS.get(unit)


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _is_private(name: str) -> bool:
    return name.startswith("_") and not _is_dunder(name)


def _layer_name(unit: str) -> str:
    return "ndcglab/__init__" if unit == ROOT_UNIT else unit


class _FileChecker:
    """Collects the violations of one module."""

    def __init__(self, package_dir: Path, path: Path, modules: frozenset[str]) -> None:
        self.top = package_dir.name
        self.modules = modules
        self.module, self.is_package = _module_name(package_dir, path)
        self.unit = _unit(self.module)
        self.display = path.relative_to(package_dir.parents[1]).as_posix()
        self.source = path.read_text(encoding="utf-8")
        self.tree = ast.parse(self.source, filename=str(path))
        self.violations: list[Violation] = []
        self.bound: dict[str, str] = {}  # local name -> ndcglab module it is bound to
        self.parents: dict[int, ast.AST] = {
            id(child): parent
            for parent in ast.walk(self.tree)
            for child in ast.iter_child_nodes(parent)
        }

    # -- resolving names ------------------------------------------------------------------

    def _relative_base(self, level: int) -> str:
        base = self.module.split(".") if self.is_package else self.module.split(".")[:-1]
        if level - 1 > len(base) - 1:
            return ""
        return ".".join(base[: len(base) - (level - 1)])

    def _split(self, dotted: str) -> tuple[str, str | None]:
        """(longest known module prefix, the first attribute after it or None)."""
        parts = dotted.split(".")
        for i in range(len(parts), 0, -1):
            prefix = ".".join(parts[:i])
            if prefix in self.modules:
                return prefix, parts[i] if i < len(parts) else None
        return dotted, None

    # -- the rules ------------------------------------------------------------------------

    def _add(self, node: ast.AST, rule: str) -> None:
        self.violations.append(
            Violation(self.display, node.lineno, _statement(node, self.source), rule)
        )

    def _check_target(self, node: ast.AST, module: str, attr: str | None) -> None:
        """Layer and privacy rules for reaching `module` (and `module.attr`) from this file."""
        if module != self.top and not module.startswith(self.top + "."):
            return
        target = _unit(module)
        if target == self.unit:
            return
        if target == ROOT_UNIT and module == self.top and attr is not None and _is_dunder(attr):
            return  # package metadata (`from ndcglab import __version__`): a constant, no code
        if self.unit == ROOT_UNIT:
            if target not in ROOT_MAY_IMPORT:
                self._add(
                    node,
                    f"ndcglab/__init__.py may import {', '.join(sorted(ROOT_MAY_IMPORT))} "
                    f"only, not {target}",
                )
        else:
            mine, theirs = _layer(self.unit), _layer(target)
            if theirs is None:
                self._add(node, f"imports {module}, which is not placed in the layer order")
            elif (
                mine is not None
                and not _points_down(self.unit, mine, target, theirs)
                and not (module.partition(".")[2] in SHARED_ON_LAYER and mine == theirs)
            ):
                self._add(
                    node,
                    f"{_layer_name(self.unit)} (layer {mine}) imports {_layer_name(target)} "
                    f"(layer {theirs}): imports must point down",
                )
        inner = module.split(".")[1:]
        if target in FOUNDATION:
            inner = inner[1:]  # the foundation modules themselves are meant to be imported
        private = [p for p in inner if _is_private(p)]
        if attr is not None and _is_private(attr):
            private.append(attr)
        if private:
            self._add(node, self._private_rule(private, target))

    def _private_rule(self, private: list[str], target: str) -> str:
        return (
            f"private name {', '.join(private)} of {_layer_name(target)} used from "
            f"{_layer_name(self.unit)}: make it public in its package or move the caller"
        )

    def run(self) -> list[Violation]:
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    self._import(node, alias)
            elif isinstance(node, ast.ImportFrom):
                self._import_from(node)
            elif isinstance(node, ast.Call):
                self._dynamic_import(node)
        # attribute chains need every binding first
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Attribute) and not isinstance(node.value, ast.Attribute):
                self._attribute(node)
        return self.violations

    def _import(self, node: ast.Import, alias: ast.alias) -> None:
        name = alias.name
        if name.split(".")[0] == "argparse":
            self._argparse(node)
        module, attr = self._split(name)
        self._check_target(node, module, attr)
        if name.split(".")[0] == self.top:
            if alias.asname:
                self.bound[alias.asname] = module
            else:
                self.bound[name.split(".")[0]] = self.top

    def _import_from(self, node: ast.ImportFrom) -> None:
        if node.level:
            base = self._relative_base(node.level)
            source = f"{base}.{node.module}" if node.module else base
        else:
            source = node.module or ""
        if source.split(".")[0] == "argparse":
            self._argparse(node)
        if source.split(".")[0] != self.top:
            return
        for alias in node.names:
            if alias.name == "*":
                module, attr = self._split(source)
                self._check_target(node, module, attr)
                continue
            candidate = f"{source}.{alias.name}"
            if candidate in self.modules:
                self._check_target(node, candidate, None)
                self.bound[alias.asname or alias.name] = candidate
            else:
                module, attr = self._split(source)
                self._check_target(node, module, attr if attr is not None else alias.name)

    def _dynamic_import(self, node: ast.Call) -> None:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in {"import_module", "__import__"} or not node.args:
            return
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            text = first.value
            if text.split(".")[0] == "argparse":
                self._argparse(node)
            if text.split(".")[0] == self.top:
                module, attr = self._split(text)
                self._check_target(node, module, attr)

    def _attribute(self, node: ast.Attribute) -> None:
        """`name.attr...` where `name` is a bound ndcglab module: the chain's privacy (and its
        layer, when the chain walks into another package than the one imported)."""
        if not isinstance(node.value, ast.Name) or node.value.id not in self.bound:
            return
        bound = self.bound[node.value.id]
        chain = [bound, node.attr]
        outer = self.parents.get(id(node))
        while isinstance(outer, ast.Attribute):
            chain.append(outer.attr)
            outer = self.parents.get(id(outer))
        module, attr = self._split(".".join(chain))
        if _unit(module) != _unit(bound):
            self._check_target(node, module, attr)
            return
        if _unit(module) == self.unit:
            return
        extra = module.split(".")[len(bound.split(".")) :]
        private = [p for p in extra if _is_private(p)]
        if attr is not None and _is_private(attr):
            private.append(attr)
        if private:
            self._add(node, self._private_rule(private, _unit(module)))

    def _argparse(self, node: ast.AST) -> None:
        if self.unit not in ARGPARSE_UNITS:
            self._add(node, "argparse below cli/: command-line parsing belongs in ndcglab/cli/")


def _points_down(unit: str, layer: int, target: str, target_layer: int) -> bool:
    if target_layer < layer:
        return True
    if layer == target_layer == 0:
        return True  # the foundation modules may use one another
    return (unit, target) in SIDEWAYS_ALLOWED


def _statement(node: ast.AST, source: str) -> str:
    text = ast.get_source_segment(source, node) or ast.unparse(node)
    text = " ".join(text.split())
    return text if len(text) <= 90 else text[:87] + "..."


def check_package(package_dir: Path) -> tuple[list[Violation], list[str]]:
    """Every violation under `package_dir`, and the files whose package has no layer."""
    files = sorted(p for p in package_dir.rglob("*.py") if "__pycache__" not in p.parts)
    modules = frozenset(_module_name(package_dir, p)[0] for p in files)
    violations: list[Violation] = []
    unplaced: list[str] = []
    for path in files:
        checker = _FileChecker(package_dir, path, modules)
        if _layer(checker.unit) is None:
            unplaced.append(checker.display)
        violations.extend(checker.run())
    return sorted(set(violations), key=lambda v: (v.path, v.line, v.rule)), unplaced


def _report(violations: list[Violation], what: str) -> str:
    lines = "\n".join(f"  {v}" for v in violations)
    return f"{len(violations)} {what}:\n{lines}"


# --------------------------------------------------------------------------- the project


@pytest.fixture(scope="module")
def project() -> tuple[list[Violation], list[str]]:
    if not PACKAGE_DIR.is_dir():
        pytest.skip(f"source tree not found at {PACKAGE_DIR}")
    return check_package(PACKAGE_DIR)


def test_every_module_has_a_layer(project: tuple[list[Violation], list[str]]) -> None:
    _, unplaced = project
    if unplaced:
        pytest.fail(
            "modules outside the layer order (place their package in LAYERS here and in "
            "docs/DESIGN.md):\n  " + "\n  ".join(unplaced),
            pytrace=False,
        )


def test_imports_point_down(project: tuple[list[Violation], list[str]]) -> None:
    bad = [v for v in project[0] if "layer" in v.rule or "may import" in v.rule]
    if bad:
        pytest.fail(_report(bad, "imports point up the layer order"), pytrace=False)


def test_no_private_names_across_packages(project: tuple[list[Violation], list[str]]) -> None:
    bad = [v for v in project[0] if v.rule.startswith("private name")]
    if bad:
        pytest.fail(_report(bad, "private names reached from another package"), pytrace=False)


def test_no_argparse_below_cli(project: tuple[list[Violation], list[str]]) -> None:
    bad = [v for v in project[0] if v.rule.startswith("argparse")]
    if bad:
        pytest.fail(_report(bad, "argparse imports outside ndcglab/cli/"), pytrace=False)


# --------------------------------------------------------------------------- the checker itself


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "src" / "ndcglab"
    for rel, text in files.items():
        path = package / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    for directory in [package, *[p for p in package.rglob("*") if p.is_dir()]]:
        init = directory / "__init__.py"
        if not init.exists():
            init.write_text("", encoding="utf-8")
    return package


def _rules(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    violations, _ = check_package(_tree(tmp_path, files))
    return [(v.path.split("ndcglab/", 1)[1], v.line, v.rule.split(":")[0]) for v in violations]


@pytest.mark.parametrize(
    "source",
    [
        "from ndcglab.cli import main\n",
        "import ndcglab.cli.main\n",
        "import ndcglab.cli.main as m\n",
        "from ..cli import main\n",
        "from ..cli.main import run\n",
        "from .. import cli\n",
        "def f():\n    from ..cli import main\n    return main\n",
        "import importlib\nm = importlib.import_module('ndcglab.cli.main')\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ndcglab.cli import main\n",
    ],
)
def test_checker_finds_an_import_up(tmp_path: Path, source: str) -> None:
    found = _rules(tmp_path, {"measures/compute.py": source, "cli/main.py": "run = 1\n"})
    assert [(p, r) for p, _, r in found] == [
        ("measures/compute.py", "measures (layer 2) imports cli (layer 8)")
    ], found


@pytest.mark.parametrize(
    "source",
    [
        "from . import gains\n",
        "from .gains import Gain\n",
        "from ..data import dataset\n",
        "from ndcglab.data.dataset import RankingDataset\n",
        "from .. import errors\nfrom .._spec import parse_spec\nfrom ndcglab import _compat\n",
        "import ndcglab.measures.gains\n",
        "from ._kernels import _fast\n",  # private, but inside its own package
        "from .. import __version__\n",  # the package's metadata
    ],
)
def test_checker_accepts_imports_down_and_sideways(tmp_path: Path, source: str) -> None:
    files = {
        "measures/compute.py": source,
        "measures/gains.py": "class Gain: ...\n",
        "measures/_kernels.py": "def _fast(): ...\n",
        "data/dataset.py": "class RankingDataset: ...\n",
        "__init__.py": "__version__ = '0'\n",
        "errors.py": "",
        "_spec.py": "def parse_spec(): ...\n",
        "_compat.py": "",
    }
    assert _rules(tmp_path, files) == []


def test_checker_same_layer_rules(tmp_path: Path) -> None:
    files = {
        "gbdt/train.py": "from ..training import batching\n",
        "gbdt/model.py": "from ..training.config import TrainConfig\n",
        "training/config.py": "",
        "distributed/train.py": "",
        "training/batching.py": "from ndcglab.gbdt import train\n",
        "gbdt/objective.py": "from ndcglab.distributed import train\n",
        "analysis/limits.py": "from ndcglab import estimator\n",
        "estimator.py": "",
    }
    found = _rules(tmp_path, files)
    assert ("gbdt/train.py", 1, "gbdt (layer 5) imports training (layer 5)") in found
    assert not [f for f in found if f[0] == "gbdt/model.py"]
    assert ("training/batching.py", 1, "training (layer 5) imports gbdt (layer 5)") not in found
    assert ("gbdt/objective.py", 1, "gbdt (layer 5) imports distributed (layer 5)") in found
    assert ("analysis/limits.py", 1, "analysis (layer 6) imports estimator (layer 6)") in found


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("from ndcglab.data._io import open_binary\n", 1),
        ("from ..data import _io\n", 1),
        ("from ..data.dataset import _segment_index\n", 1),
        ("import ndcglab.data._io\n", 1),
        ("from .._spec import _number\n", 1),
        ("from ..data import dataset\nx = dataset._segment_index\n", 2),
        ("import ndcglab.data.dataset\nx = ndcglab.data.dataset._segment_index(1)\n", 2),
    ],
)
def test_checker_finds_private_names(tmp_path: Path, source: str, line: int) -> None:
    files = {
        "training/batching.py": source,
        "data/_io.py": "def open_binary(): ...\n",
        "data/dataset.py": "def _segment_index(): ...\n",
        "_spec.py": "_number = 1\n",
    }
    found = _rules(tmp_path, files)
    assert [(p, n) for p, n, r in found if r.startswith("private name")] == [
        ("training/batching.py", line)
    ], found


def test_checker_root_argparse_and_unplaced(tmp_path: Path) -> None:
    files = {
        "__init__.py": "from .data import RankingDataset\nfrom .measures import evaluate\n",
        "data/__init__.py": "RankingDataset = 1\n",
        "measures/__init__.py": "evaluate = 1\n",
        "gbdt/cli_hooks.py": "import argparse\n",
        "cli/main.py": "import argparse\nfrom argparse import Namespace\n",
        "newthing/x.py": "",
    }
    found = _rules(tmp_path, files)
    assert ("__init__.py", 2, "ndcglab/__init__.py may import data, errors only, not measures") in (
        found
    )
    argparse_hits = [(p, n) for p, n, r in found if r.startswith("argparse")]
    assert argparse_hits == [("gbdt/cli_hooks.py", 1)]
    _, unplaced = check_package(tmp_path / "src" / "ndcglab")
    assert [u.split("ndcglab/", 1)[1] for u in unplaced] == [
        "newthing/__init__.py",
        "newthing/x.py",
    ]
