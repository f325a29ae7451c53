"""Checks of a tree engine's own model before the engine reads it.

LightGBM parses its model text without checking it: a truncated or edited ``lightgbm.txt`` can
abort or crash the process inside the library (a failed ``CHECK`` is ``SIGABRT``, an index past
an array ``SIGSEGV``), which no ``try`` can catch. The loaders therefore check the engine's
member first, and only hand it to the engine when the checks pass:

* **checksum** — :func:`member_checksums` gives the SHA-256 of each member, which
  :meth:`~ndcglab.gbdt._boosted.BoostedTreesModel.save` records in the metadata
  (``model.sha256 = {member: hex digest}``); a member whose digest differs was damaged or edited
  after saving. Files written before the checksum existed have none and are checked by their
  structure alone.
* **structure of LightGBM's text** (:func:`check_lightgbm_text`) — the header (``tree``, a
  ``max_feature_idx`` and ``tree_sizes``), one ``Tree=i`` block per size in ``tree_sizes``
  numbered from 0, each block exactly as long as its size says, the ``end of trees`` marker; in
  every tree, the split arrays (``split_feature``, ``threshold``, ``decision_type``,
  ``left_child``, ``right_child``) hold ``num_leaves - 1`` numbers and ``leaf_value``
  ``num_leaves``, every split feature is at most ``max_feature_idx``, every child points at an
  existing node (``c >= 0``) or leaf (``~c`` for ``c < 0``), and categorical splits'
  ``cat_boundaries`` and ``cat_threshold`` have the lengths ``num_cat`` says. The number of
  trees must also be the metadata's ``model.num_trees`` when the file records it.
* **structure of XGBoost's JSON** (:func:`check_xgboost_json`) — valid JSON with a ``learner``
  whose booster is ``gbtree`` (a ``gblinear`` or ``dart`` booster is not a model ndcglab
  trains), as many trees as ``gbtree_model_param.num_trees`` says, and in every tree the node
  arrays as long as ``tree_param.num_nodes``, children inside the tree and split features below
  ``num_feature``.

Each failure is a :class:`~ndcglab.errors.DataFormatError` naming the member, the tree and the
line (LightGBM) where it was found.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataFormatError

__all__ = [
    "CHECKSUM_KEY",
    "check_checksum",
    "check_lightgbm_text",
    "check_xgboost_json",
    "member_checksums",
]

#: the key of the metadata's ``model`` object holding ``{member: SHA-256 hex digest}``
CHECKSUM_KEY = "sha256"
#: the arrays of a LightGBM tree with one entry per split, and those with one per leaf
_SPLIT_ARRAYS = ("split_feature", "threshold", "decision_type", "left_child", "right_child")
_LEAF_ARRAYS = ("leaf_value",)
_TREE_HEADER = re.compile(r"^Tree=(\d+)$")
_END_OF_TREES = "end of trees"


def member_checksums(members: Mapping[str, bytes]) -> dict[str, str]:
    """``{member: SHA-256 hex digest}`` of a model file's members."""
    return {name: hashlib.sha256(data).hexdigest() for name, data in members.items()}


def check_checksum(meta: Mapping[str, Any], member: str, data: bytes, path: Path, fix: str) -> None:
    """Raise :class:`~ndcglab.errors.DataFormatError` if the metadata records a checksum of
    ``member`` (``model.sha256``) that ``data`` does not match; no recorded checksum (a file
    written before it was recorded) passes."""
    sums = (meta.get("model") or {}).get(CHECKSUM_KEY) or {}
    want = sums.get(member) if isinstance(sums, Mapping) else None
    if want is None:
        return
    got = hashlib.sha256(data).hexdigest()
    if got != str(want):
        raise DataFormatError(
            f"the {member} member does not match the SHA-256 recorded when the model was saved "
            f"({got[:12]}… instead of {str(want)[:12]}…): the file was damaged or edited",
            path=path,
            fix=fix,
        )


class _Damaged(Exception):
    """A structural fault: what is wrong and the 1-based line of the member it was found on."""

    def __init__(self, what: str, line: int | None = None) -> None:
        super().__init__(what)
        self.what, self.line = what, line


def _ints(text: str, what: str, line: int) -> np.ndarray:
    try:
        return np.array(text.split(), dtype=np.int64)
    except (ValueError, OverflowError):
        raise _Damaged(f"{what} holds a value that is not an integer", line) from None


def _floats(text: str, what: str, line: int) -> np.ndarray:
    try:
        return np.array(text.split(), dtype=np.float64)
    except ValueError:
        raise _Damaged(f"{what} holds a value that is not a number", line) from None


def _check_tree(
    index: int, fields: dict[str, tuple[str, int]], start: int, max_feature: int
) -> None:
    """One ``Tree=`` block of LightGBM's text (``fields``: key → (value, line))."""
    where = f"tree {index}"
    if "num_leaves" not in fields:
        raise _Damaged(f"{where} has no num_leaves line", start)
    leaves_text, leaves_line = fields["num_leaves"]
    parsed = _ints(leaves_text, f"{where}'s num_leaves", leaves_line)
    leaves = int(parsed[0]) if parsed.size == 1 else 0
    if leaves < 1:
        raise _Damaged(f"{where} has num_leaves={leaves_text.strip()!r}", leaves_line)
    want = {**{k: leaves - 1 for k in _SPLIT_ARRAYS}, **{k: leaves for k in _LEAF_ARRAYS}}
    if leaves == 1:
        want = {k: 1 for k in _LEAF_ARRAYS}
    values: dict[str, np.ndarray] = {}
    for key, n in want.items():
        if key not in fields:
            raise _Damaged(f"{where} has no {key} line", start)
        text, line = fields[key]
        if key in ("threshold", "leaf_value"):
            values[key] = _floats(text, f"{where}'s {key}", line)
        else:
            values[key] = _ints(text, f"{where}'s {key}", line)
        if len(values[key]) != n:
            raise _Damaged(
                f"{where} has {len(values[key])} {key} values for {leaves} leaves (needs {n})",
                line,
            )
    if leaves == 1:
        return
    features = values["split_feature"]
    bad = features[(features < 0) | (features > max_feature)]
    if bad.size:
        raise _Damaged(
            f"{where} splits on feature {int(bad[0])}, beyond max_feature_idx={max_feature}",
            fields["split_feature"][1],
        )
    for key in ("left_child", "right_child"):
        children = values[key]
        # a child is a node 0..leaves-2 or, negative, the leaf ~c in 0..leaves-1
        wrong = children[(children >= leaves - 1) | (children < -leaves)]
        if wrong.size:
            raise _Damaged(
                f"{where} has {key} {int(wrong[0])}, not a node or leaf of the tree",
                fields[key][1],
            )
    cat_text, cat_line = fields.get("num_cat", ("0", start))
    cats = _ints(cat_text, f"{where}'s num_cat", cat_line)
    if cats.size != 1 or cats[0] < 0:
        raise _Damaged(f"{where} has num_cat={cat_text.strip()!r}", cat_line)
    n_cat = int(cats[0])
    if n_cat > 0:
        for key in ("cat_boundaries", "cat_threshold"):
            if key not in fields:
                raise _Damaged(f"{where} has num_cat={n_cat} but no {key} line", start)
        bounds = _ints(
            *fields["cat_boundaries"][:1], f"{where}'s cat_boundaries", fields["cat_boundaries"][1]
        )
        words = _ints(
            *fields["cat_threshold"][:1], f"{where}'s cat_threshold", fields["cat_threshold"][1]
        )
        if len(bounds) != n_cat + 1 or bounds[0] != 0 or bounds[-1] != len(words):
            raise _Damaged(
                f"{where}'s cat_boundaries do not match num_cat and cat_threshold",
                fields["cat_boundaries"][1],
            )


def _lightgbm_faults(text: str, num_trees: int | None) -> None:
    lines = text.split("\n")
    if not lines or lines[0].strip() != "tree":
        raise _Damaged("it does not start with LightGBM's 'tree' line", 1)
    header: dict[str, tuple[str, int]] = {}
    i = 1
    while i < len(lines) and not _TREE_HEADER.match(lines[i]):
        if lines[i].strip() == _END_OF_TREES:
            break
        key, eq, value = lines[i].partition("=")
        if eq:
            header[key.strip()] = (value, i + 1)
        i += 1
    if "max_feature_idx" not in header:
        raise _Damaged("its header has no max_feature_idx line")
    text_max, line_max = header["max_feature_idx"]
    parsed = _ints(text_max, "max_feature_idx", line_max)
    if parsed.size != 1 or parsed[0] < 0:
        raise _Damaged(f"max_feature_idx={text_max.strip()!r} is not a feature index", line_max)
    max_feature = int(parsed[0])
    sizes = None
    if "tree_sizes" in header:
        sizes = _ints(header["tree_sizes"][0], "tree_sizes", header["tree_sizes"][1])
    if _END_OF_TREES not in (line.strip() for line in lines[i:]):
        raise _Damaged(f"it has no '{_END_OF_TREES}' line (the text was cut short)")
    first_tree = i
    trees: list[tuple[int, dict[str, tuple[str, int]]]] = []
    while i < len(lines) and lines[i].strip() != _END_OF_TREES:
        m = _TREE_HEADER.match(lines[i])
        if m:
            if int(m.group(1)) != len(trees):
                raise _Damaged(f"tree {len(trees)} is numbered Tree={m.group(1)}", i + 1)
            trees.append((i + 1, {}))
        elif lines[i].strip():
            if not trees:
                raise _Damaged("a line before the first tree is not part of the header", i + 1)
            key, eq, value = lines[i].partition("=")
            if not eq:
                raise _Damaged(f"tree {len(trees) - 1} has a line that is not KEY=VALUE", i + 1)
            trees[-1][1][key.strip()] = (value, i + 1)
        i += 1
    if num_trees is not None and int(num_trees) != len(trees):
        raise _Damaged(f"it holds {len(trees)} trees, the metadata says {int(num_trees)}")
    for index, (start, fields) in enumerate(trees):
        _check_tree(index, fields, start, max_feature)
    if sizes is not None:
        if len(sizes) != len(trees):
            raise _Damaged(
                f"tree_sizes lists {len(sizes)} trees but the text holds {len(trees)}",
                header["tree_sizes"][1],
            )
        block = "\n".join(lines[first_tree:i])
        if trees and len(block.encode("utf-8")) + 1 != sum(sizes):
            raise _Damaged(
                f"the trees take {len(block.encode('utf-8')) + 1} bytes, tree_sizes says "
                f"{sum(sizes)}",
                header["tree_sizes"][1],
            )


def check_lightgbm_text(
    text: str, path: Path, *, member: str, fix: str, num_trees: int | None = None
) -> None:
    """Raise :class:`~ndcglab.errors.DataFormatError` unless ``text`` has the structure of
    LightGBM's model text (see the module docstring); ``num_trees``: the metadata's count."""
    try:
        _lightgbm_faults(text, num_trees)
    except _Damaged as exc:
        where = "" if exc.line is None else f" (line {exc.line})"
        raise DataFormatError(
            f"the {member} model text is damaged: {exc.what}{where}", path=path, fix=fix
        ) from None


def _xgboost_faults(data: bytes) -> None:
    try:
        doc = json.loads(data.decode("utf-8"))
        learner = doc["learner"]
        booster = learner["gradient_booster"]
        name = booster.get("name")
    except (UnicodeDecodeError, ValueError):
        raise _Damaged("it is not JSON (the text was cut short or edited)") from None
    except (KeyError, TypeError, AttributeError):
        raise _Damaged("it has no learner.gradient_booster object") from None
    if name != "gbtree":
        raise _Damaged(
            f"its booster is {name!r}, not gbtree: ndcglab's XGBoost models are tree ensembles"
        )
    try:
        model = booster["model"]
        trees = model["trees"]
        n_trees = int(model["gbtree_model_param"]["num_trees"])
        n_features = int(learner["learner_model_param"]["num_feature"])
    except (KeyError, TypeError, ValueError):
        raise _Damaged("it lacks gradient_booster.model's trees or their count") from None
    if len(trees) != n_trees:
        raise _Damaged(f"it holds {len(trees)} trees, gbtree_model_param says {n_trees}")
    for t, tree in enumerate(trees):
        try:
            n = int(tree["tree_param"]["num_nodes"])
            arrays = [
                tree[k]
                for k in (
                    "left_children",
                    "right_children",
                    "split_indices",
                    "split_conditions",
                    "base_weights",
                )
            ]
        except (KeyError, TypeError, ValueError):
            raise _Damaged(f"tree {t} lacks tree_param.num_nodes or a node array") from None
        if any(len(a) != n for a in arrays):
            raise _Damaged(f"tree {t} has node arrays of another length than num_nodes={n}")
        left, right, split = arrays[0], arrays[1], arrays[2]
        for j in range(n):
            leaf = left[j] == -1
            if not leaf and not (0 < left[j] < n and 0 < right[j] < n):
                raise _Damaged(f"tree {t} node {j} has children outside the tree")
            if not leaf and not 0 <= split[j] < max(n_features, 1):
                raise _Damaged(f"tree {t} node {j} splits on feature {split[j]} of {n_features}")


def check_xgboost_json(data: bytes, path: Path, *, member: str, fix: str) -> None:
    """Raise :class:`~ndcglab.errors.DataFormatError` unless ``data`` is XGBoost's JSON model
    of a tree ensemble with a consistent structure (see the module docstring)."""
    try:
        _xgboost_faults(data)
    except _Damaged as exc:
        raise DataFormatError(
            f"the {member} model is damaged: {exc.what}", path=path, fix=fix
        ) from None
