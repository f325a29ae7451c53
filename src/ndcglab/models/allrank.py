"""Reading allRank's models: :func:`read_allrank` turns an allRank run's ``config.json`` and
``model.pkl`` (the ``state_dict`` its training writes) into an :class:`AttentionModel` that
scores the same documents with the same numbers.

allRank (Pobrotyn et al., "Context-Aware Learning to Rank with Self-Attention", SIGIR eCom 2020)
builds ``LTRModel(input_layer, encoder, output_layer)`` from the config's ``model`` entry:

* ``fc_model`` (``sizes``, ``input_norm``, ``activation``, ``dropout``): torch's layer
  normalisation of the input when ``input_norm``, then ``Linear`` layers each followed by
  ``activation`` (a class name of ``torch.nn``, e.g. ``"ReLU"``; null = none) and dropout — the
  :class:`AttentionModel`'s input projection (``hidden = sizes``);
* ``transformer`` (``N``, ``d_ff``, ``h``, ``dropout``, ``positional_encoding``) or null: ``N``
  pre-norm encoder blocks with allRank's own layer normalisation (``norm_style="allrank"``) and a
  final normalisation; a positional encoding makes the scores depend on the documents' input
  order, which :class:`AttentionModel` does not model, so such a model is refused;
* ``post_model`` (``d_output``, ``output_activation``): ``Linear(d, d_output)`` and the
  activation; only ``d_output = 1`` (one score per document) is read.

A model without ``transformer`` is allRank's fully connected scorer (``FCModel``): it reads as
an :class:`AttentionModel` with ``blocks=0``, a per-document network. allRank feeds its model the
features as stored (no normalisation of its own), so the result has normalisation ``none``.
Parameter names map one to one (``input_layer.layers.<i>`` → ``projection.<i>``,
``encoder.layers.<b>.self_attn.linears.<0..3>`` → ``encoder.<b>.attention.query|key|value|out``,
``feed_forward.w_1|w_2`` → ``feed_forward.inner|outer``, ``sublayer.<0|1>.norm.a_2|b_2`` →
``norm_attention|norm_feed_forward.weight|bias``, ``encoder.norm`` → ``final_norm``,
``output_layer.w_1`` → ``output``); a weight of an unexpected name or shape is an error naming it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from ..data.normalize import Normalizer
from ..errors import DataFormatError
from .attention import AttentionModel
from .base import torch

__all__ = ["read_allrank"]

_FIX = "give the config.json and model.pkl of one allRank run (allrank/main.py writes both)"
_RENAMES = (
    (r"input_layer\.input_norm\.", "in_norm."),
    (r"input_layer\.layers\.(\d+)\.", r"projection.\1."),
    (r"encoder\.layers\.(\d+)\.self_attn\.linears\.0\.", r"encoder.\1.attention.query."),
    (r"encoder\.layers\.(\d+)\.self_attn\.linears\.1\.", r"encoder.\1.attention.key."),
    (r"encoder\.layers\.(\d+)\.self_attn\.linears\.2\.", r"encoder.\1.attention.value."),
    (r"encoder\.layers\.(\d+)\.self_attn\.linears\.3\.", r"encoder.\1.attention.out."),
    (r"encoder\.layers\.(\d+)\.feed_forward\.w_1\.", r"encoder.\1.feed_forward.inner."),
    (r"encoder\.layers\.(\d+)\.feed_forward\.w_2\.", r"encoder.\1.feed_forward.outer."),
    (r"encoder\.layers\.(\d+)\.sublayer\.0\.norm\.", r"encoder.\1.norm_attention."),
    (r"encoder\.layers\.(\d+)\.sublayer\.1\.norm\.", r"encoder.\1.norm_feed_forward."),
    (r"encoder\.norm\.", "final_norm."),
    (r"output_layer\.w_1\.", "output."),
)


def _activation(name: Any, where: str, path: Any) -> str:
    if name is None:
        return "identity"
    low = str(name).lower()
    known = {"relu", "tanh", "gelu", "sigmoid", "elu"}
    if low not in known:
        raise DataFormatError(
            f"{where} {name!r} is not one ndcglab scores with (known: null, "
            f"{', '.join(sorted(known))}, as torch.nn class names)",
            path=path,
            fix="read a model trained with one of these activations",
        )
    return low


def _rename(key: str) -> str:
    key = key.removeprefix("module.")  # a model trained on several GPUs (DataParallel)
    for pattern, repl in _RENAMES:
        new, n = re.subn("^" + pattern, repl, key)
        if n:
            return re.sub(r"\.a_2$", ".weight", re.sub(r"\.b_2$", ".bias", new))
    return key


def read_allrank(
    config: str | os.PathLike[str] | dict[str, Any],
    weights: str | os.PathLike[str] | dict[str, Any],
) -> Any:
    """An allRank model as a :class:`~ndcglab.models.TrainedModel` (normalisation ``none``).

    ``config``: the run's ``config.json`` (a path, or the parsed dict; its ``model`` entry is
    read); ``weights``: its ``model.pkl`` (a path, read with ``weights_only=True``, or a state
    dict). The feature count is that of the first weight matrix. Raises
    :class:`~ndcglab.errors.DataFormatError` for what cannot be read (see the module docstring).
    """
    from .io import TrainedModel

    cfg_path = None if isinstance(config, dict) else Path(config)
    cfg = dict(config) if isinstance(config, dict) else json.loads(Path(config).read_text())
    model_cfg = cfg.get("model", cfg)
    if not isinstance(model_cfg, dict) or "post_model" not in model_cfg:
        raise DataFormatError(
            "no allRank model configuration (a 'model' entry with 'post_model')",
            path=cfg_path,
            fix=_FIX,
        )
    if isinstance(weights, dict):
        state = dict(weights)
    else:
        state = torch.load(Path(weights), map_location="cpu", weights_only=True)
    state = {_rename(k): v for k, v in state.items()}
    fc = model_cfg.get("fc_model") or None
    tr = model_cfg.get("transformer") or None
    post = model_cfg["post_model"] or {}
    if int(post.get("d_output", 1)) != 1:
        raise DataFormatError(
            f"post_model.d_output is {post.get('d_output')}: ndcglab reads models giving one "
            "score per document (d_output 1)",
            path=cfg_path,
            fix="read a model trained with d_output 1",
        )
    if tr is not None and tr.get("positional_encoding"):
        raise DataFormatError(
            "transformer.positional_encoding is set: its scores depend on the documents' input "
            "order, which ndcglab's permutation-equivariant attention model does not have",
            path=cfg_path,
            fix="read a model trained with positional_encoding null",
        )
    first = state.get("projection.0.weight")
    if fc is None or first is None:
        raise DataFormatError(
            "the model has no fc_model (input projection) weights: ndcglab reads allRank models "
            "with an fc_model",
            path=cfg_path,
            fix=_FIX,
        )
    options: dict[str, Any] = {
        "hidden": tuple(int(s) for s in fc["sizes"]),
        "activation": _activation(fc.get("activation"), "fc_model.activation", cfg_path),
        "input_norm": bool(fc.get("input_norm")),
        "output_activation": _activation(
            post.get("output_activation"), "post_model.output_activation", cfg_path
        ),
        "norm_style": "allrank",
        "layer_norm": "pre",
        "blocks": 0,
    }
    if tr is not None:
        options.update(
            blocks=int(tr["N"]),
            heads=int(tr["h"]),
            ff_width=int(tr["d_ff"]),
            dropout=float(tr.get("dropout") or 0.0),
        )
    else:
        options["heads"] = 1
    model = AttentionModel(int(first.shape[1]), **options)
    mine = model.state_dict()
    unknown = sorted(set(state) - set(mine))
    missing = sorted(set(mine) - set(state))
    if unknown or missing:
        raise DataFormatError(
            f"the weights do not match the configuration: unexpected {unknown[:3]}, missing "
            f"{missing[:3]}",
            path=None if isinstance(weights, dict) else Path(weights),
            fix=_FIX,
        )
    for key, value in state.items():
        if tuple(value.shape) != tuple(mine[key].shape):
            raise DataFormatError(
                f"weight {key} has shape {tuple(value.shape)}, the configuration gives "
                f"{tuple(mine[key].shape)}",
                path=None if isinstance(weights, dict) else Path(weights),
                fix=_FIX,
            )
    model.load_state_dict({k: v.to(mine[k].dtype) for k, v in state.items()})
    model.eval()
    meta = {"source": "allRank", "allrank_config": model_cfg}
    return TrainedModel(
        model=model, normalizer=Normalizer(n_features=model.n_features), metadata=meta
    )
