"""The model kinds: the one table that says how each kind of model is trained and read back.

Every other place that names a model kind reads :data:`KINDS`: :class:`TrainConfig`'s check of
``model`` and its default loss, :func:`ndcglab.training.fit` (which route trains it),
:func:`ndcglab.training.load_trained` (which reader opens its model file), the choices of
``ndcglab train/cv --model``, :class:`~ndcglab.estimator.NDCGRanker` and ``ndcglab reproduce``.
A torch model's class writes its kind's name once, as :attr:`ndcglab.models.RankModel.kind`
(:mod:`ndcglab.models` cannot import this package): ``models.MODEL_KINDS``, the model families
and the model-file schemas are keyed by that attribute, and the tests check that the torch
kinds here are exactly those classes. The gradient loop builds a model with the
:class:`TrainConfig` fields its row names (``model_options``), never by testing the kind's name.

A kind is trained by one of three *routes* (:mod:`ndcglab.training.fitting`):

* ``"gradient"`` — the gradient loop of :mod:`ndcglab.training.loop` (``linear``, ``mlp``,
  ``attention``);
* ``"boosting"`` — AdaRank's boosting over single features (:mod:`ndcglab.training.adarank_fit`);
* ``"trees"`` — boosted trees grown by a tree engine of :mod:`ndcglab.gbdt`
  (``TreeOptions.engine``), on one machine, or on a Dask cluster when
  :func:`~ndcglab.training.fit` is given a client.

Adding a kind is one entry here (and its route, if it needs a new one). Importing this module
imports nothing heavy.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import SpecError

__all__ = ["EXPORT_FORMATS", "KINDS", "MODEL_KINDS", "ModelKind", "get_kind", "kind_for_loss"]


@dataclass(frozen=True)
class ModelKind:
    """One model kind and how it is trained.

    ``route``: ``"gradient"``, ``"boosting"`` or ``"trees"`` (module docstring);
    ``default_loss``: the loss of ``TrainConfig(loss=None)``; ``loss_kinds``: the
    :attr:`ndcglab.losses.Loss.kind` values it trains with (``"differentiable"``, ``"boosting"``);
    ``unit``: what one step of training is called in results (``epoch`` or ``round``);
    ``tunable``: has gradient hyper-parameters for :func:`ndcglab.training.tune`;
    ``checkpoints``: writes per-epoch checkpoints and resumes from them;
    ``distributed``: can be trained on a Dask client; ``torch``: a torch model read by
    :func:`ndcglab.models.load_model` (else its route's reader opens the file);
    ``summary``: one line for help texts; ``model_options``: the :class:`TrainConfig` fields
    the gradient loop passes, by the same names, to the model's constructor
    (:func:`ndcglab.models.make_model`); ``export_formats``: the formats ``ndcglab export``
    writes a model of this kind in (none: not exportable), the first being the usual one.
    """

    name: str
    route: str
    default_loss: str
    loss_kinds: tuple[str, ...]
    unit: str
    tunable: bool
    checkpoints: bool
    distributed: bool
    torch: bool
    summary: str
    model_options: tuple[str, ...] = ()
    export_formats: tuple[str, ...] = ()


_DIFF, _BOOST = ("differentiable",), ("boosting",)
#: what ``ndcglab export`` writes: a torch model's graph, or the trees' engine file or graph
_TORCH_FORMATS = ("onnx", "torchscript")
_TREE_FORMATS = ("lightgbm", "xgboost", "onnx")
_LISTNET = "listnet"  # the default loss of every kind trained with a differentiable loss
# fmt: off
#: every model kind, by name (the order is the order of the choices offered)
KINDS: dict[str, ModelKind] = {k.name: k for k in (
    #         name       route       default    losses           unit     tune   ckpt   dask   torch
    ModelKind("linear", "gradient", _LISTNET, _DIFF + _BOOST, "epoch", True, True, False, True,
              "a linear scoring function (gradient loop; AdaRank's boosting with its loss)",
              model_options=("init",), export_formats=_TORCH_FORMATS),
    ModelKind("mlp", "gradient", _LISTNET, _DIFF, "epoch", True, True, False, True,
              "a multilayer perceptron trained by the gradient loop",
              model_options=("hidden", "activation", "dropout"), export_formats=_TORCH_FORMATS),
    ModelKind("adarank", "boosting", "adarank", _BOOST, "epoch", False, False, False, True,
              "AdaRank: boosting over single features, the round chosen on validation",
              export_formats=_TORCH_FORMATS),
    ModelKind("gbdt", "trees", _LISTNET, _DIFF, "round", False, False, True, False,
              "boosted trees (LightGBM or XGBoost) with the loss as custom objective",
              export_formats=_TREE_FORMATS),
    ModelKind("attention", "gradient", _LISTNET, _DIFF, "epoch", True, True, False, True,
              "a self-attention encoder over each query's documents (allRank's model)",
              model_options=("hidden", "activation", "dropout", "heads", "blocks", "ff_width",
                             "layer_norm", "input_norm"), export_formats=_TORCH_FORMATS),
)}
# fmt: on
#: the kinds' names, in order
MODEL_KINDS: tuple[str, ...] = tuple(KINDS)
#: every format some kind exports to (``ndcglab export --format``), in the table's order
EXPORT_FORMATS: tuple[str, ...] = tuple(
    dict.fromkeys(f for k in KINDS.values() for f in k.export_formats)
)
#: the kind a loss trains when no model is named, by :attr:`ndcglab.losses.Loss.kind`
_KIND_FOR_LOSS = {_DIFF[0]: MODEL_KINDS[0], _BOOST[0]: KINDS["adarank"].name}


def get_kind(name: str) -> ModelKind:
    """The :class:`ModelKind` named ``name`` (case-insensitive); an unknown name is a
    :class:`~ndcglab.errors.SpecError` listing the known ones."""
    kind = KINDS.get(str(name).strip().lower())
    if kind is None:
        raise SpecError(f"unknown model {name!r}; known: {', '.join(MODEL_KINDS)}")
    return kind


def kind_for_loss(loss_kind: str) -> str:
    """The model kind that a loss of :attr:`ndcglab.losses.Loss.kind` ``loss_kind`` trains when
    no model is named: ``adarank`` for a boosting loss, ``linear`` otherwise."""
    return _KIND_FOR_LOSS.get(str(loss_kind), MODEL_KINDS[0])
