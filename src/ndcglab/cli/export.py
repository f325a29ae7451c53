"""``ndcglab export MODEL --format onnx|torchscript|lightgbm|xgboost --out FILE``.

Writes a model file of ``ndcglab train`` in a format that runs without ndcglab: linear and MLP
rankers as ONNX (``--format onnx``, needs the onnx extra) or TorchScript (``--format
torchscript``) that take the raw features of the data file (the normalisation is inside the
graph; a model normalised per query, query_minmax, also takes each document's query id) and
carry the feature count, normalisation and ndcglab version in their metadata; boosted trees as
their engine's own model file (``--format lightgbm``:
``lightgbm.Booster(model_file=FILE).predict(X)`` gives ``ndcglab predict``'s scores;
``--format xgboost`` for trees grown by XGBoost) or as ONNX (``--format onnx``, either engine).
The formats of each model kind are in the table of model kinds
(:data:`ndcglab.training.kinds.KINDS`).

In detail:

* ``onnx`` / ``torchscript`` — linear and MLP rankers, with the feature normalisation folded
  into the graph, so the exported model takes the raw features of the data file (float32
  ``(N, F)``) and returns one score per document; the feature count, the normalisation and the
  ndcglab version are in the file's metadata (ONNX ``metadata_props``; TorchScript's extra file
  ``ndcglab.json``). Run them with ``onnxruntime`` or ``torch.jit.load``. ONNX needs the
  ``onnx`` extra. A model normalised per query (``query_minmax``) takes a second input, the
  query id of each document (int64).
* ``lightgbm`` — boosted trees grown by LightGBM (with any ndcglab objective) as LightGBM's own
  model text: ``lightgbm.Booster(model_file=FILE).predict(X)`` gives ``ndcglab predict``'s
  scores.
* ``xgboost`` — boosted trees grown by XGBoost as XGBoost's JSON model.
* ``onnx`` for boosted trees (either engine) — one tree-ensemble graph (onnxmltools' converters,
  the ``onnx`` extra): input ``features`` (float32 ``(N, F)``, raw), output ``scores`` (float32
  ``(N,)``), the scores of ``ndcglab predict`` to float32 precision.

Prints what was written (``--json``: one JSON object).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import SpecError
from ..training.kinds import EXPORT_FORMATS, KINDS
from ._common import add_model_parser, format_table

__all__ = ["FORMATS", "add_parser", "run"]

#: every format the command writes (each model kind's are in the table of model kinds,
#: :data:`ndcglab.training.kinds.KINDS`, ``export_formats``)
FORMATS = EXPORT_FORMATS


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    help_text = "write a model as ONNX, TorchScript or the boosting library's own model file"
    p = add_model_parser(subparsers, "export", help_text, __doc__)
    p.add_argument(
        "--format",
        choices=FORMATS,
        required=True,
        help="; ".join(
            f"{k.name}: {', '.join(k.export_formats)}" for k in KINDS.values() if k.export_formats
        )
        + " (lightgbm or xgboost: the format of the engine that grew the trees)",
    )
    p.add_argument("--out", required=True, metavar="FILE", help="the file to write")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from ..models.file_format import model_kind, read_model_metadata
    from ..training.kinds import get_kind

    meta = read_model_metadata(args.model)
    kind = get_kind(str(model_kind(meta)))
    if args.format not in kind.export_formats:
        formats = " or ".join(kind.export_formats) or "nothing"
        raise SpecError(
            f"{args.model} holds a model of kind {kind.name}, which exports as {formats}, not "
            f"{args.format}. Fix: use --format {(kind.export_formats or ('onnx',))[0]}"
        )
    if kind.route == "trees":
        from ..gbdt.export import export_boosted

        path = export_boosted(args.model, args.out, args.format)
    else:
        from ..models.export import export_model

        path = export_model(args.model, args.out, args.format)
    payload = {
        "model": str(args.model),
        "kind": kind.name,
        "format": args.format,
        "out": str(path),
        "n_features": meta.get("n_features"),
        "normalization": (meta.get("normalization") or {}).get("method"),
    }
    if args.json:
        sys.stdout.write(json.dumps(payload) + "\n")
    else:
        rows = [[k, str(v)] for k, v in payload.items() if v is not None]
        sys.stdout.write(format_table(["", "value"], rows).rstrip("\n") + "\n")
    return 0
