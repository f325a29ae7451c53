"""The :class:`RankModel` interface and the neural scoring models.

A ranking model here is *pointwise at scoring time*: it maps each document's feature vector to one
real score, ``(..., F) -> (...)``. Losses then compare the scores of a whole list. Every model is a
``torch.nn.Module`` with three extra duties:

* ``config()`` — a JSON-able dict from which :func:`build_model` rebuilds an identical (untrained)
  module; :func:`ndcglab.models.save_model` stores it beside the ``state_dict``;
* ``predict(features)`` — NumPy in, NumPy ``float64`` out, no gradient, evaluation mode;
* ``n_features`` — the feature count it was built for (checked against data before scoring).

Models:

* :class:`LinearModel` — ``f(x) = <w, x> + b``, the setting of Lu, Xie, Wang, Liu, Huang,
  "Cost-Sensitive Listwise Ranking Approach" (PAKDD 2010) and Ravikumar, Tewari, Yang, "On NDCG
  Consistency of Listwise Ranking Methods" (AISTATS 2011).
  Weights start at zero by default (``init="zeros"``), so plain gradient descent on a convex loss
  is fully reproducible; ``init="normal"`` draws N(0, 0.01²) from the seeded torch RNG.
* :class:`MLPModel` — a feed-forward network: ``hidden`` layer sizes, ``activation``
  (``relu``, ``tanh``, ``gelu``, ``sigmoid``, ``elu``) and ``dropout`` after each hidden layer.
* :class:`ndcglab.models.adarank.AdaRank` — a boosted linear combination of single features.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._compat import torch as _torch
from ..errors import ModelMismatchError, SpecError

if TYPE_CHECKING:  # the real module's types; at run time torch comes through _compat
    import torch
    from torch import nn
else:
    torch = _torch()
    nn = torch.nn

__all__ = ["LinearModel", "MLPModel", "RankModel", "build_model", "make_model"]

_ACTIVATIONS = {
    "relu": nn.ReLU,
    "tanh": nn.Tanh,
    "gelu": nn.GELU,
    "sigmoid": nn.Sigmoid,
    "elu": nn.ELU,
}


class RankModel(nn.Module):
    """Base class: a module scoring a ``(..., F)`` feature tensor into ``(...)`` scores."""

    #: short name of the model family, the ``kind`` key of :meth:`config`: the one place each
    #: family's name is written (the kinds table of :mod:`ndcglab.training.kinds` uses it)
    kind: str = "model"
    #: whether a document's score depends on the other documents of its list
    #: (:class:`~ndcglab.models.attention.AttentionModel`); such a model overrides
    #: :meth:`score_padded`, :meth:`score_lists` and :meth:`predict_chunks`
    listwise: bool = False

    def __init__(self, n_features: int) -> None:
        super().__init__()
        if int(n_features) < 1:
            raise SpecError(f"a model needs at least one feature, got n_features={n_features}")
        self.n_features = int(n_features)

    def config(self) -> dict[str, Any]:
        """A JSON-able description that :func:`build_model` turns back into this architecture."""
        return {"kind": self.kind, "n_features": self.n_features}

    def check_features(self, n_features: int, *, what: str = "the data") -> None:
        """Raise :class:`ModelMismatchError` unless ``n_features`` equals the model's count."""
        if int(n_features) != self.n_features:
            raise ModelMismatchError(
                f"the model expects {self.n_features} features but {what} has {n_features}. "
                "Fix: apply the model to data with the same feature set it was trained on "
                "(same collection and LETOR version), or train a new model on this data"
            )

    def score_padded(self, x: Any, pad_index: Any, mask: Any) -> Any:
        """The ``(B, M)`` scores of the lists whose rows of ``x`` ``(n, F)`` are ``pad_index``
        ``(B, M)`` (``mask``: True = a real document). Padded cells hold some score of no
        meaning. Here each row is scored alone, then gathered."""
        return self(x)[pad_index]

    def score_lists(self, x: Any, boundaries: Any = None) -> Any:
        """The flat ``(n,)`` scores of the rows of ``x``, the lists being ``boundaries`` (None:
        one list). Here each row is scored alone (``boundaries`` are not needed)."""
        return self(x)

    def predict_chunks(
        self, n_rows: int, boundaries: Any, batch_size: int
    ) -> Iterator[tuple[int, int, Any]]:
        """The ``(lo, hi, local boundaries or None)`` row ranges :meth:`predict` scores at once:
        here ranges of ``batch_size`` rows; a list-aware model cuts between whole lists."""
        for lo in range(0, n_rows, batch_size):
            yield lo, min(lo + batch_size, n_rows), None

    def linear_form(self) -> tuple[np.ndarray, float] | None:
        """``(w, b)`` (``(F,)`` float64, a float) when the model scores ``<w, x> + b``, else
        ``None``. A model that declares it is scored by its forward pass in cache-sized calls
        of 4,096 rows (:mod:`ndcglab.models.scoring`; its forward pass must then give each row
        the same number in any call whose row count is a multiple of 4, as torch's
        matrix-vector product does). A new kind whose scores are affine in the features may
        override this."""
        return None

    @torch.no_grad()
    def predict(
        self, features: Any, *, boundaries: Any = None, batch_size: int = 262144
    ) -> np.ndarray:
        """Score each row of ``features`` (``(N, F)`` array or tensor); returns ``(N,)`` float64.

        ``boundaries`` (``(Q + 1,)`` row offsets of the queries) matter to a :attr:`listwise`
        model only, which takes ``None`` to mean one list of all ``N`` rows. Runs in evaluation
        mode (no dropout) without gradients, in chunks of about ``batch_size`` rows (whole lists),
        on the device of the model's parameters. NaN features are *not* filled here: normalise
        first (see :class:`ndcglab.data.Normalizer`).
        """
        x = (
            features
            if isinstance(features, torch.Tensor)
            else torch.as_tensor(np.asarray(features))
        )
        if x.ndim != 2:
            raise SpecError(
                f"predict expects a 2-D (documents, features) array, got shape {tuple(x.shape)}"
            )
        self.check_features(x.shape[1])
        was_training = self.training
        self.eval()
        try:
            p: torch.Tensor | None = next(self.parameters(), None)
            if p is None:
                p = next(self.buffers())
            out = np.empty(x.shape[0], dtype=np.float64)
            for lo, hi, local in self.predict_chunks(x.shape[0], boundaries, batch_size):
                chunk = x[lo:hi].to(device=p.device, dtype=p.dtype)
                out[lo:hi] = self.score_lists(chunk, local).double().cpu().numpy()
            return out
        finally:
            self.train(was_training)


class LinearModel(RankModel):
    """``f(x) = <w, x> + b`` (``bias=False`` drops b; ranking is unchanged by b anyway).

    ``init="zeros"`` (default) starts from w = 0, b = 0; ``"normal"`` draws w ~ N(0, 0.01²).
    """

    kind = "linear"

    def __init__(self, n_features: int, *, bias: bool = True, init: str = "zeros") -> None:
        super().__init__(n_features)
        if init not in ("zeros", "normal"):
            raise SpecError(f"unknown init {init!r} for the linear model; known: zeros, normal")
        self.bias_enabled = bool(bias)
        self.init = init
        self.linear = nn.Linear(self.n_features, 1, bias=self.bias_enabled)
        with torch.no_grad():
            if init == "zeros":
                self.linear.weight.zero_()
            else:
                self.linear.weight.normal_(0.0, 0.01)
            if self.linear.bias is not None:
                self.linear.bias.zero_()

    def forward(self, x: Any) -> Any:
        # nn.Linear's own computation, without a second module call on every batch
        return nn.functional.linear(x, self.linear.weight, self.linear.bias).squeeze(-1)

    @property
    def weight(self) -> np.ndarray:
        """The weight vector w as a NumPy ``(F,)`` array (a copy)."""
        return self.linear.weight.detach().cpu().double().numpy()[0].copy()

    def linear_form(self) -> tuple[np.ndarray, float]:
        b = 0.0 if self.linear.bias is None else float(self.linear.bias.detach().cpu()[0])
        return self.weight, b

    def config(self) -> dict[str, Any]:
        return {**super().config(), "bias": self.bias_enabled, "init": self.init}


class MLPModel(RankModel):
    """A feed-forward scorer: ``F -> hidden[0] -> ... -> hidden[-1] -> 1``.

    Each hidden layer is ``Linear`` followed by ``activation`` and, if ``dropout > 0``, ``Dropout``.
    PyTorch's default (Kaiming-uniform) initialisation, drawn from the torch RNG (training seeds
    it).
    """

    kind = "mlp"

    def __init__(
        self,
        n_features: int,
        *,
        hidden: Sequence[int] = (64, 32),
        activation: str = "relu",
        dropout: float = 0.0,
    ) -> None:
        super().__init__(n_features)
        hidden = tuple(int(h) for h in hidden)
        if not hidden or any(h < 1 for h in hidden):
            raise SpecError(f"hidden layer sizes must be positive integers, got {hidden!r}")
        act = activation.lower()
        if act not in _ACTIVATIONS:
            raise SpecError(
                f"unknown activation {activation!r}; known: {', '.join(sorted(_ACTIVATIONS))}"
            )
        if not 0.0 <= float(dropout) < 1.0:
            raise SpecError(f"dropout must lie in [0, 1), got {dropout}")
        self.hidden = hidden
        self.activation = act
        self.dropout = float(dropout)
        layers: list[Any] = []
        width = self.n_features
        for h in hidden:
            layers.append(nn.Linear(width, h))
            layers.append(_ACTIVATIONS[act]())
            if self.dropout > 0:
                layers.append(nn.Dropout(self.dropout))
            width = h
        layers.append(nn.Linear(width, 1))
        self.net = nn.Sequential(*layers)

    def forward(self, x: Any) -> Any:
        return self.net(x).squeeze(-1)

    def config(self) -> dict[str, Any]:
        return {
            **super().config(),
            "hidden": list(self.hidden),
            "activation": self.activation,
            "dropout": self.dropout,
        }


def model_families() -> dict[str, type[RankModel]]:
    """The torch model families :func:`make_model` and :func:`build_model` know, by the
    :attr:`RankModel.kind` each class gives itself (in this order: linear, MLP, AdaRank,
    self-attention)."""
    from .adarank import AdaRank
    from .attention import AttentionModel

    return {cls.kind: cls for cls in (LinearModel, MLPModel, AdaRank, AttentionModel)}


def make_model(kind: str, n_features: int, **params: Any) -> RankModel:
    """Build an untrained model of family ``kind`` (a key of :func:`model_families`)."""
    reg = model_families()
    key = str(kind).lower()
    if key not in reg:
        raise SpecError(f"unknown model {kind!r}; known: {', '.join(reg)}")
    return reg[key](n_features, **params)


def build_model(config: Mapping[str, Any]) -> RankModel:
    """Rebuild an (untrained) model from :meth:`RankModel.config`'s output."""
    cfg = dict(config)
    if "ensemble" in cfg:  # models of several seeds (ndcglab.models.ensemble)
        from .ensemble import SeedEnsemble

        return SeedEnsemble([build_model(member) for member in cfg["ensemble"]])
    try:
        kind = cfg.pop("kind")
        n_features = cfg.pop("n_features")
    except KeyError as exc:
        raise ModelMismatchError(
            f"model configuration lacks {exc.args[0]!r}: {config!r}. Fix: save the model with "
            "ndcglab.models.save_model"
        ) from None
    return make_model(kind, n_features, **cfg)
