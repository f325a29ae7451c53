"""Exporting a trained linear, MLP or attention ranker to ONNX or TorchScript, with normalisation.

The exported model is one self-contained graph that takes **raw** features — a float32
``(N, F)`` matrix, as read from the data file — and returns ``(N,)`` scores (float32; float64
for a model trained in float64), the numbers :meth:`ndcglab.models.TrainedModel.predict` gives
(as float64). The feature normalisation the model was trained with is folded into the graph,
computed the way :class:`ndcglab.data.Normalizer` computes it:

* ``none`` — ``z = x``;
* ``zscore`` — ``z = float32(float64(x) − μ) · float32(1/σ)`` (the subtraction in double
  precision, the product in single, as the NumPy transform does);
* ``query_minmax`` — per query and feature, ``z = float32((x − min_q) · (1/(max_q − min_q)))``
  in double precision (0 where the feature is constant in the query), minimum and maximum over
  the query's documents ignoring NaN. It needs each document's query: the exported model then
  takes a **second input**, ``query`` — int64 ``(N,)``, any id per document, equal for the
  documents of one query (they need not be contiguous);
* ``log1p_zscore`` — ``z = float32(float64(sign(x)·ln(1 + |x|)) − μ) · float32(1/σ)``;
* then, under every method, entries of ``z`` that are NaN (missing) or ±inf become 0.

A list-aware model (``attention``, :attr:`~ndcglab.models.RankModel.listwise`) scores padded
lists: its inputs are ``features``, float32 ``(B, L, F)`` (``B`` lists padded to length ``L``;
both dynamic), and ``mask``, bool ``(B, L)`` (True = a real document), and it returns ``(B, L)``
scores, 0 at padded positions; padded positions never change a real document's score.

Metadata travel inside the file: ONNX ``metadata_props`` (strings as they are, other values as
JSON) and TorchScript's extra file ``ndcglab.json`` (one JSON object) hold the same keys —
``ndcglab_version``, ``torch_version``, ``n_features``, ``feature_names``, ``normalization``
(method and statistics, and that it is applied inside the graph), ``model`` (the
architecture), ``loss``, ``input``, ``query_input`` (null unless per query) and ``output``
(names, dtype, shape). The ONNX graph's input is named ``features`` (and ``query``) and its
output ``scores``, with a dynamic first dimension; the TorchScript module's
``forward(features)`` (``forward(features, query)``) returns the scores. Neither needs
ndcglab to run: ``onnxruntime.InferenceSession(path)`` or ``torch.jit.load(path)``.

ONNX export uses torch's TorchScript-based exporter (``torch.onnx.export(..., dynamo=False)``),
which needs the ``onnx`` package (the ``onnx`` extra) but no network and no ``onnxscript``.
"""

from __future__ import annotations

import copy
import io
import json
import os
import tempfile
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .._atomic import write_bytes_atomic
from .._compat import require
from .._versions import package_versions
from ..errors import SpecError
from .base import RankModel, torch

if TYPE_CHECKING:
    from .io import TrainedModel

__all__ = [
    "EXPORT_FORMATS",
    "INPUT_NAME",
    "MASK_NAME",
    "METADATA_FILE",
    "ONNX_OPSET",
    "OUTPUT_NAME",
    "QUERY_NAME",
    "export_metadata",
    "export_model",
    "exportable_module",
]

#: the formats :func:`export_model` writes
EXPORT_FORMATS = ("onnx", "torchscript")
#: the name of the ONNX graph's input (raw features, float32 ``(N, F)``)
INPUT_NAME = "features"
#: the name of the ONNX graph's output (scores, ``(N,)``, the model's dtype)
OUTPUT_NAME = "scores"
#: the TorchScript extra file holding the metadata JSON
METADATA_FILE = "ndcglab.json"
#: the name of the second input of a model normalised per query (int64 query ids, ``(N,)``)
QUERY_NAME = "query"
#: the name of the second input of a list-aware model (bool ``(B, L)``, True = a real document)
MASK_NAME = "mask"
#: the ONNX operator set written (18: ScatterElements with min/max, for per-query statistics)
ONNX_OPSET = 18


class _RawFeatureRanker(torch.nn.Module):
    """The trained model with its normalisation in front: raw features in, scores out."""

    def __init__(self, model: RankModel, method: str, mean: Any, scale: Any) -> None:
        super().__init__()
        self.model = model
        self.zscore = method in ("zscore", "log1p_zscore")
        self.log1p = method == "log1p_zscore"
        self.float64 = _model_dtype(model) == "float64"
        f = model.n_features
        mu = np.zeros(f) if mean is None else np.asarray(mean, dtype=np.float64)
        sd = np.ones(f) if scale is None else np.asarray(scale, dtype=np.float64)
        self.register_buffer("mean", torch.as_tensor(mu, dtype=torch.float64))
        self.register_buffer(
            "inv_scale", torch.as_tensor((1.0 / sd).astype(np.float32), dtype=torch.float32)
        )

    def normalised(self, features: Any) -> Any:
        """The elementwise normalisations (none, zscore, log1p_zscore), then 0 for non-finite."""
        x = features
        if self.zscore:
            x64 = x.to(torch.float64)
            if self.log1p:
                x64 = torch.sign(x64) * torch.log1p(torch.abs(x64))
            x = (x64 - self.mean).to(torch.float32) * self.inv_scale
        x = torch.where(torch.isfinite(x), x, torch.zeros_like(x))
        return x.to(torch.float64) if self.float64 else x

    def forward(self, features: Any) -> Any:
        return self.model(self.normalised(features))


class _ListRanker(_RawFeatureRanker):
    """A list-aware model: padded raw features ``(B, L, F)`` and the mask ``(B, L)`` in, scores
    ``(B, L)`` out (0 at padded positions)."""

    def forward(self, features: Any, mask: Any) -> Any:  # type: ignore[override]
        mask = mask.to(torch.bool)
        scores = self.model(self.normalised(features), mask)
        return torch.where(mask, scores, torch.zeros_like(scores))


class _QueryMinMaxRanker(_RawFeatureRanker):
    """``query_minmax`` inside the graph: raw features and query ids in, scores out."""

    def forward(self, features: Any, query: Any) -> Any:  # type: ignore[override]
        _, inverse = torch.unique(query, return_inverse=True)
        x = features.to(torch.float64)
        idx = inverse.reshape(-1, 1).expand_as(x)
        nan = torch.isnan(x)
        up = torch.full_like(x, float("inf"))
        down = torch.full_like(x, float("-inf"))
        # per query (rows 0..Q-1 of an (N, F) table): min and max, NaN ignored
        lo = up.scatter_reduce(0, idx, torch.where(nan, up, x), "amin", include_self=True)
        hi = down.scatter_reduce(0, idx, torch.where(nan, down, x), "amax", include_self=True)
        lo = lo.gather(0, idx)
        span = hi.gather(0, idx) - lo
        inv = torch.where(span > 0, 1.0 / span, torch.zeros_like(span))
        z = ((x - lo) * inv).to(torch.float32)
        z = torch.where(torch.isfinite(z), z, torch.zeros_like(z))
        if self.float64:
            z = z.to(torch.float64)
        return self.model(z)


def _model_dtype(model: RankModel) -> str:
    """``"float64"`` or ``"float32"``: the dtype of the model's parameters (its scores')."""
    p = next(model.parameters(), None)
    return "float64" if p is not None and p.dtype == torch.float64 else "float32"


def _as_trained(model: Any) -> TrainedModel:
    from .io import TrainedModel, load_model

    if isinstance(model, str | os.PathLike):
        return load_model(model)
    if isinstance(model, TrainedModel):
        return model
    if isinstance(model, RankModel):
        return TrainedModel(model=model)
    raise SpecError(
        f"cannot export a {type(model).__name__}: give a model file, a TrainedModel or a "
        "RankModel (boosted trees: ndcglab.gbdt.export_lightgbm)"
    )


def exportable_module(model: Any) -> Any:
    """The ``torch.nn.Module`` that is exported: ``model``'s normalisation, then the model.

    ``model`` is a model file path, a :class:`~ndcglab.models.TrainedModel` or a bare
    :class:`~ndcglab.models.RankModel` (no normalisation). The ``linear``, ``mlp``,
    ``attention`` and ``adarank`` kinds are exported; a ``query_minmax`` model also takes the
    query ids (see the module docstring)."""
    trained = _as_trained(model)
    kind = trained.model.kind
    if kind not in ("linear", "mlp", "attention", "adarank"):
        raise SpecError(
            f"cannot export a model of kind {kind!r}: ONNX and TorchScript export covers the "
            "linear, mlp, attention and adarank rankers. Fix: boosted trees export as their "
            "engine's model text (--format lightgbm or xgboost) or as ONNX through ndcglab export"
        )
    norm = trained.normalizer
    inner = copy.deepcopy(trained.model).cpu().requires_grad_(False)
    cls = _QueryMinMaxRanker if norm.method == "query_minmax" else _RawFeatureRanker
    if trained.model.listwise:
        if norm.method == "query_minmax":
            raise SpecError(
                "cannot export a list-aware model normalised per query (query_minmax) yet. Fix: "
                "train it with normalize='zscore' or 'log1p_zscore'"
            )
        cls = _ListRanker
    module = cls(inner, norm.method, norm.mean, norm.scale)
    module.eval()
    return module


def export_metadata(model: Any) -> dict[str, Any]:
    """The metadata written into an exported file (see the module docstring)."""
    trained = _as_trained(model)
    norm = trained.normalizer.to_dict()
    norm["applied"] = "inside the exported graph: give it raw features"
    listwise = trained.model.listwise
    lists = ["B", "L"] if listwise else ["N"]
    versions = package_versions(("ndcglab", "torch"))
    return {
        "ndcglab_version": versions["ndcglab"],
        "torch_version": versions["torch"],
        "n_features": trained.n_features,
        "feature_names": trained.feature_names,
        "normalization": norm,
        "model": trained.model.config(),
        "loss": trained.metadata.get("loss"),
        "input": {"name": INPUT_NAME, "dtype": "float32", "shape": [*lists, trained.n_features]},
        "mask_input": (
            {"name": MASK_NAME, "dtype": "bool", "shape": lists, "meaning": "a real document"}
            if listwise
            else None
        ),
        "query_input": (
            {"name": QUERY_NAME, "dtype": "int64", "shape": ["N"], "meaning": "query id"}
            if trained.normalizer.method == "query_minmax"
            else None
        ),
        "output": {"name": OUTPUT_NAME, "dtype": _model_dtype(trained.model), "shape": lists},
    }


def _example(meta: dict[str, Any]) -> tuple[Any, ...]:
    if meta.get("mask_input"):
        mask = torch.tensor([[True, True, True], [True, False, False]])
        return (torch.zeros((2, 3, meta["n_features"]), dtype=torch.float32), mask)
    x = torch.zeros((2, meta["n_features"]), dtype=torch.float32)
    if meta.get("query_input"):
        return (x, torch.tensor([0, 1], dtype=torch.int64))
    return (x,)


def _torchscript_bytes(module: Any, meta: dict[str, Any]) -> bytes:
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch announces TorchScript's successor, torch.export
        scripted = torch.jit.trace(module, _example(meta), check_trace=False)
        buf = io.BytesIO()
        torch.jit.save(scripted, buf, _extra_files={METADATA_FILE: json.dumps(meta)})
    return buf.getvalue()


def _onnx_bytes(module: Any, meta: dict[str, Any]) -> bytes:
    onnx = require("onnx")
    inputs = [INPUT_NAME, QUERY_NAME] if meta.get("query_input") else [INPUT_NAME]
    axes: dict[int, str] = {0: "n_documents"}
    if meta.get("mask_input"):
        inputs, axes = [INPUT_NAME, MASK_NAME], {0: "n_lists", 1: "list_length"}
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript-based exporter announces its successor
        graph = Path(tmp) / "model.onnx"
        torch.onnx.export(
            module,
            _example(meta),
            graph,
            dynamo=False,
            input_names=inputs,
            output_names=[OUTPUT_NAME],
            dynamic_axes={name: axes for name in [*inputs, OUTPUT_NAME]},
            opset_version=ONNX_OPSET,
        )
        proto = onnx.load_model_from_string(graph.read_bytes())
    # the tracer's shapes of intermediate values can be wrong for dynamic lengths (onnxruntime
    # warns about them); they are optional, and onnxruntime infers its own
    del proto.graph.value_info[:]
    del proto.metadata_props[:]
    for key, value in meta.items():
        entry = proto.metadata_props.add()
        entry.key = key
        entry.value = value if isinstance(value, str) else json.dumps(value)
    proto.producer_name = "ndcglab"
    proto.producer_version = str(meta["ndcglab_version"])
    proto.doc_string = (
        f"ndcglab {meta['model']['kind']} ranker: raw float32 features ({meta['n_features']} per "
        f"document) in, one float32 score per document out; normalisation "
        f"{meta['normalization']['method']} applied inside the graph"
    )
    onnx.checker.check_model(proto)
    return bytes(proto.SerializeToString())


def export_model(model: Any, out: str | os.PathLike[str], format: str = "onnx") -> Path:
    """Write ``model`` as an ONNX (``format="onnx"``) or TorchScript (``"torchscript"``) file.

    ``model`` is a model file written by ``ndcglab train`` / :func:`ndcglab.models.save_model`,
    a :class:`~ndcglab.models.TrainedModel` or a :class:`~ndcglab.models.RankModel`. The file
    takes raw features (normalisation inside) and carries the metadata of
    :func:`export_metadata`; it is written atomically. Returns the path written.
    """
    fmt = str(format).lower()
    if fmt not in EXPORT_FORMATS:
        raise SpecError(
            f"unknown export format {format!r}; known: {', '.join(EXPORT_FORMATS)} "
            "(boosted trees: lightgbm)"
        )
    trained = _as_trained(model)
    module = exportable_module(trained)
    meta = export_metadata(trained)
    data = _onnx_bytes(module, meta) if fmt == "onnx" else _torchscript_bytes(module, meta)
    return write_bytes_atomic(out, data)
