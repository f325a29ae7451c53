"""Boosted-trees models as the boosting library's own model files, readable without ndcglab.

A tree ensemble trained with one of our objectives is an ordinary ensemble: the objective only
chose the gradients the trees were fitted to. Its trees score documents on their own, so the
model is written in the engine's own format, which the engine loads and predicts with, without
ndcglab or torch installed:

* **LightGBM** (:func:`export_lightgbm`): LightGBM's model text
  (``Booster.model_to_string``) holding the trees up to the model's best iteration (the trees
  ``ndcglab predict`` uses), so ``lightgbm.Booster(model_file=PATH).predict(X)`` gives the
  scores of ``ndcglab predict``. A booster trained with a custom objective has no
  ``objective=`` line and no initial score (LightGBM starts a custom objective from 0), so
  plain LightGBM returns the raw sum of the trees, which is the score; LightGBM's built-in
  ``lambdarank`` / ``rank_xendcg`` keep their line and also predict raw scores.
* **XGBoost** (:func:`export_xgboost`): XGBoost's JSON model (``Booster.save_raw("json")``) of
  the trees up to the best iteration, for ``xgboost.Booster(model_file=PATH)``; ndcglab trains
  XGBoost with ``base_score = 0``, which the file records, so ``predict(..., output_margin=True)``
  (or plain ``predict``: the objective's transform is the identity) gives the scores.

* **ONNX** (:func:`export_onnx`, either engine): one ``TreeEnsembleRegressor`` graph of the trees
  up to the best iteration, converted by onnxmltools' converters (the ``onnx`` extra), whose
  input ``features`` is the float32 ``(N, F)`` matrix of raw features (NaN = missing) and whose
  output ``scores`` is float32 ``(N,)``: ``onnxruntime.InferenceSession(PATH)`` gives the
  scores of ``ndcglab predict`` to float32 precision. The converters only know the engines'
  built-in objectives; a tree model's score is the raw sum of its trees whatever objective grew
  them (ndcglab's ranking objectives have no output transform and start from 0), so the trees
  are handed over labelled as a plain regression (``objective=regression``; XGBoost's
  ``reg:squarederror`` with ``base_score`` 0), which is converted as that raw sum. The graph's
  ``metadata_props`` hold ``ndcglab_version``, ``engine``, ``n_features``, ``feature_names``,
  ``loss``, ``num_trees`` (the trees kept), ``input`` and ``output``. LightGBM's linear trees
  (``linear_tree``) have no ONNX form and are refused.

All files are written atomically. :func:`export_boosted` picks the writer by the format asked
(by default the model's engine).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .._atomic import write_bytes_atomic
from ..errors import SpecError

__all__ = [
    "BOOSTED_EXPORT_FORMATS",
    "export_boosted",
    "export_lightgbm",
    "export_onnx",
    "export_xgboost",
    "model_engine",
]

#: the formats :func:`export_boosted` writes
BOOSTED_EXPORT_FORMATS = ("lightgbm", "xgboost", "onnx")
#: the names of the ONNX graph's input (raw features) and output (scores)
ONNX_INPUT, ONNX_OUTPUT = "features", "scores"
#: the standard operator set added when the converter's graph imports none (for the Reshape that
#: makes the ``(N, 1)`` output ``(N,)``)
_DEFAULT_OPSET = 13


def _load(model: Any) -> Any:
    if isinstance(model, str | os.PathLike):
        from .model import load_gbdt

        return load_gbdt(model)
    return model


def model_engine(model: Any) -> str:
    """``"lightgbm"`` or ``"xgboost"``: the library whose trees ``model`` holds."""
    return str(getattr(model, "engine", "lightgbm"))


def _refuse(engine: str, wanted: str) -> SpecError:
    return SpecError(
        f"the model's trees were grown by {engine}, so they export as {engine}'s own model, "
        f"not {wanted}. Fix: use --format {engine}"
    )


def export_lightgbm(model: Any, out: str | os.PathLike[str]) -> Path:
    """Write a LightGBM-engine model (a :class:`~ndcglab.gbdt.GBDTModel` or its file) as
    LightGBM's own model text at ``out``, with the trees up to its best iteration; returns the
    path written (see the module docstring)."""
    m = _load(model)
    if model_engine(m) != "lightgbm":
        raise _refuse(model_engine(m), "lightgbm")
    text = str(m.booster.model_to_string(num_iteration=int(m.best_iteration)))
    return write_bytes_atomic(out, text.encode("utf-8"))


def export_xgboost(model: Any, out: str | os.PathLike[str]) -> Path:
    """Write an XGBoost-engine model (:class:`~ndcglab.gbdt.xgboost_model.XGBoostModel` or its
    file) as XGBoost's JSON model at ``out``, the trees up to its best iteration."""
    m = _load(model)
    if model_engine(m) != "xgboost":
        raise _refuse(model_engine(m), "xgboost")
    booster = m.booster[: int(m.best_iteration)]
    return write_bytes_atomic(out, bytes(booster.save_raw(raw_format="json")))


def _regression_lightgbm(m: Any) -> Any:
    """A LightGBM booster of ``m``'s trees up to its best iteration, labelled
    ``objective=regression`` for the converter (module docstring)."""
    import re

    from .._compat import lightgbm as _lightgbm

    text = str(m.booster.model_to_string(num_iteration=int(m.best_iteration)))
    head, sep, trees = text.partition("\nTree=")
    if re.search(r"^is_linear=1$", trees, re.M):
        raise SpecError(
            "the model has LightGBM linear trees (linear_tree), which have no ONNX form. Fix: "
            "use --format lightgbm"
        )
    if re.search(r"^objective=", head, re.M):
        head = re.sub(r"^objective=.*$", "objective=regression", head, count=1, flags=re.M)
    else:
        head = head.replace("\nmax_feature_idx=", "\nobjective=regression\nmax_feature_idx=", 1)
    booster = _lightgbm().Booster(model_str=head + sep + trees)
    booster.params["objective"] = "regression"  # what the converter reads first
    return booster


def _regression_xgboost(m: Any) -> Any:
    """A copy of ``m``'s XGBoost trees up to its best iteration, as ``reg:squarederror`` with
    ``base_score`` 0 and no feature names (the converter reads features as ``f<i>``)."""
    booster = m.booster[: int(m.best_iteration)]
    booster.feature_names = None
    booster.feature_types = None
    booster.set_param({"objective": "reg:squarederror", "base_score": 0.0})
    return booster


def export_onnx(model: Any, out: str | os.PathLike[str]) -> Path:
    """Write a boosted-trees model of either engine as an ONNX graph at ``out`` (module
    docstring); returns the path written. Needs the ``onnx`` extra (onnx, onnxruntime,
    onnxmltools)."""
    import json
    import warnings

    from .._compat import require
    from .._versions import package_versions

    m = _load(model)
    onnx = require("onnx")
    onnxmltools = require("onnxmltools")
    types = require("onnxmltools.convert.common.data_types")
    inputs = [(ONNX_INPUT, types.FloatTensorType([None, int(m.n_features)]))]
    engine = model_engine(m)
    trees = _regression_xgboost(m) if engine == "xgboost" else _regression_lightgbm(m)
    convert = onnxmltools.convert_xgboost if engine == "xgboost" else onnxmltools.convert_lightgbm
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the converters' notes on opsets and versions
            proto = convert(trees, initial_types=inputs)
    except Exception as exc:  # the converter does not support something in these trees
        from ._boosted import exception_line

        raise SpecError(
            f"onnxmltools cannot convert these {engine} trees to ONNX ({exception_line(exc)}). "
            f"Fix: use --format {engine}"
        ) from None
    if not any(o.domain in ("", "ai.onnx") for o in proto.opset_import):
        proto.opset_import.append(onnx.helper.make_opsetid("", _DEFAULT_OPSET))
        proto.ir_version = max(int(proto.ir_version), 7)  # what opset 13 needs at least
    graph = proto.graph
    (raw,) = [o.name for o in graph.output]
    shape = onnx.helper.make_tensor("scores_shape", onnx.TensorProto.INT64, [1], [-1])
    graph.initializer.append(shape)
    graph.node.append(onnx.helper.make_node("Reshape", [raw, "scores_shape"], [ONNX_OUTPUT]))
    del graph.output[:]
    graph.output.append(
        onnx.helper.make_tensor_value_info(ONNX_OUTPUT, onnx.TensorProto.FLOAT, [None])
    )
    meta = {
        "ndcglab_version": package_versions(("ndcglab",)).get("ndcglab"),
        "engine": engine,
        "n_features": int(m.n_features),
        "feature_names": m.feature_names,
        "loss": m.loss,
        "num_trees": int(m.best_iteration),
        "input": {"name": ONNX_INPUT, "dtype": "float32", "shape": ["N", int(m.n_features)]},
        "output": {"name": ONNX_OUTPUT, "dtype": "float32", "shape": ["N"]},
    }
    del proto.metadata_props[:]
    for key, value in meta.items():
        entry = proto.metadata_props.add()
        entry.key = key
        entry.value = value if isinstance(value, str) else json.dumps(value)
    proto.producer_name = "ndcglab"
    onnx.checker.check_model(proto)
    return write_bytes_atomic(out, proto.SerializeToString())


def export_boosted(model: Any, out: str | os.PathLike[str], format: str | None = None) -> Path:
    """Write a boosted-trees model as ``format``: ``"lightgbm"`` or ``"xgboost"`` (the engine's
    own model file, for a model of that engine), or ``"onnx"`` (either engine); ``None``: the
    model's engine. Returns the path written."""
    m = _load(model)
    fmt = model_engine(m) if format is None else str(format).lower()
    if fmt == "lightgbm":
        return export_lightgbm(m, out)
    if fmt == "xgboost":
        return export_xgboost(m, out)
    if fmt == "onnx":
        return export_onnx(m, out)
    raise SpecError(
        f"a boosted-trees model exports as {model_engine(m)} model text or onnx, not "
        f"{format!r}. Fix: use --format {model_engine(m)} or --format onnx"
    )
