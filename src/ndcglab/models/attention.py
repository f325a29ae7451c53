"""A self-attention ranker: :class:`AttentionModel`, a transformer encoder over a query's list.

Every other model scores a document from its own features. This one scores a document in the
context of the other documents of its list (Pobrotyn, Bartczak, Synowiec, Białobrzeski,
Bojarski, "Context-Aware Learning to Rank with Self-Attention", SIGIR eCom 2020 — the model of
allRank):

1. an optional layer normalisation of the input features (``input_norm``), then the *input
   projection*: the fully connected layers ``hidden`` (``Linear``, ``activation``, ``dropout``
   after each, the last one included); its last width is the model width ``d``;
2. ``blocks`` encoder blocks, each a multi-head self-attention sub-layer (``heads`` heads of width
   ``d / heads``, scaled dot products, a softmax over the list's documents) and a feed-forward
   sub-layer (``Linear(d, ff_width)``, ReLU, dropout, ``Linear(ff_width, d)``), each wrapped in a
   residual connection with dropout and a layer normalisation — before the sub-layer
   (``layer_norm="pre"``: ``x + drop(f(LN(x)))``, with one more LN after the last block) or after
   it (``"post"``: ``LN(x + drop(f(x)))``);
3. the output layer ``Linear(d, 1)`` (and ``output_activation``, if any): one score per document.

Conventions:

* **No positional encoding**: the documents are a set. Permuting a list's documents permutes its
  scores the same way (permutation equivariance), up to floating-point summation order.
* **Masking rule**: in a padded ``(B, L, F)`` batch with ``mask`` (``True`` = a real document),
  the attention logits towards padded documents are −∞, so they get weight exactly 0; nothing in
  the model normalises across documents or lists (layer normalisation is per document), so a
  list's scores do not depend on the batch it sits in or on how far it is padded. Scores of
  padded positions are meaningless. A list with no real document attends to all its positions
  (finite, ignored) instead of producing NaN.
* A plain 2-D ``(N, F)`` input is **one list** of ``N`` documents; :meth:`AttentionModel.predict`
  with ``boundaries`` scores many queries, each on its own.
* ``norm_style="layer"`` (default) is the usual layer normalisation ``(x − μ)/√(σ² + 1e-5)``
  (biased variance); ``"allrank"`` is allRank's ``(x − μ)/(s + 1e-6)`` with ``s`` the unbiased
  standard deviation — used when reading allRank's models (:mod:`ndcglab.models.allrank`).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..errors import SpecError
from .base import _ACTIVATIONS, RankModel, nn, torch

__all__ = ["AttentionModel"]

#: the activations of the input projection and the output: the MLP's, and ``identity``
_ACTS: dict[str, Any] = {**_ACTIVATIONS, "identity": nn.Identity}
_NORMS = ("pre", "post")
_NORM_STYLES = ("layer", "allrank")
#: attention weights per head (lists x longest list²) computed at once by
#: :meth:`AttentionModel.score_lists`: 16M, 64 MiB in float32
_PAIRS = 1 << 24


class _Norm(nn.Module):
    """Layer normalisation over the last axis (``style`` as in the module docstring)."""

    def __init__(self, width: int, style: str) -> None:
        super().__init__()
        self.style = style
        self.width = int(width)
        self.weight = nn.Parameter(torch.ones(width))
        self.bias = nn.Parameter(torch.zeros(width))

    def forward(self, x: Any) -> Any:
        if self.style == "layer":
            return nn.functional.layer_norm(x, (self.width,), self.weight, self.bias, 1e-5)
        mean = x.mean(-1, keepdim=True)
        std = x.std(-1, keepdim=True)
        return self.weight * (x - mean) / (std + 1e-6) + self.bias


class _SelfAttention(nn.Module):
    """Multi-head self-attention with a key mask (``keep``: ``(B, 1, 1, L)``, True = attend)."""

    def __init__(self, width: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.heads = heads
        self.head_width = width // heads
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)
        self.value = nn.Linear(width, width)
        self.out = nn.Linear(width, width)
        self.dropout = nn.Dropout(dropout)

    def _split(self, x: Any) -> Any:
        b, n = x.shape[0], x.shape[1]
        return x.reshape(b, n, self.heads, self.head_width).transpose(1, 2)

    def forward(self, x: Any, keep: Any) -> Any:
        q, k, v = self._split(self.query(x)), self._split(self.key(x)), self._split(self.value(x))
        logits = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_width)
        logits = logits.masked_fill(~keep, float("-inf"))
        weights = self.dropout(torch.softmax(logits, dim=-1))
        mixed = torch.matmul(weights, v).transpose(1, 2)
        return self.out(mixed.reshape(x.shape[0], x.shape[1], -1))


class _FeedForward(nn.Module):
    def __init__(self, width: int, ff_width: int, dropout: float) -> None:
        super().__init__()
        self.inner = nn.Linear(width, ff_width)
        self.outer = nn.Linear(ff_width, width)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Any) -> Any:
        return self.outer(self.dropout(torch.relu(self.inner(x))))


class _Block(nn.Module):
    """One encoder block: attention and feed-forward sub-layers with residuals and norms."""

    def __init__(
        self, width: int, heads: int, ff_width: int, dropout: float, pre: bool, style: str
    ) -> None:
        super().__init__()
        self.pre = pre
        self.attention = _SelfAttention(width, heads, dropout)
        self.feed_forward = _FeedForward(width, ff_width, dropout)
        self.norm_attention = _Norm(width, style)
        self.norm_feed_forward = _Norm(width, style)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Any, keep: Any) -> Any:
        if self.pre:
            x = x + self.dropout(self.attention(self.norm_attention(x), keep))
            return x + self.dropout(self.feed_forward(self.norm_feed_forward(x)))
        x = self.norm_attention(x + self.dropout(self.attention(x, keep)))
        return self.norm_feed_forward(x + self.dropout(self.feed_forward(x)))


class AttentionModel(RankModel):
    """The self-attention ranker (see the module docstring for the architecture and conventions).

    ``hidden``: widths of the input projection (the last is the model width, divisible by
    ``heads``); ``activation``: after each projection layer (an MLP activation or ``identity``);
    ``dropout``: in the projection, the attention weights, the feed-forward layer and the
    residuals; ``heads``, ``blocks`` (0: no encoder, a per-document network), ``ff_width``,
    ``layer_norm`` (``pre``/``post``), ``input_norm`` (a layer normalisation of the raw input,
    torch's, ε = 1e-5), ``norm_style`` (``layer``/``allrank``), ``output_activation``
    (``identity`` or an activation after the output layer).
    """

    kind = "attention"
    listwise = True

    def __init__(
        self,
        n_features: int,
        *,
        hidden: Sequence[int] = (64, 32),
        activation: str = "relu",
        dropout: float = 0.0,
        heads: int = 2,
        blocks: int = 2,
        ff_width: int = 128,
        layer_norm: str = "pre",
        input_norm: bool = False,
        norm_style: str = "layer",
        output_activation: str = "identity",
    ) -> None:
        super().__init__(n_features)
        hidden = tuple(int(h) for h in hidden)
        if not hidden or any(h < 1 for h in hidden):
            raise SpecError(f"hidden layer sizes must be positive integers, got {hidden!r}")
        act, out_act = str(activation).lower(), str(output_activation).lower()
        for name, value in (("activation", act), ("output_activation", out_act)):
            if value not in _ACTS:
                raise SpecError(f"unknown {name} {value!r}; known: {', '.join(sorted(_ACTS))}")
        if not 0.0 <= float(dropout) < 1.0:
            raise SpecError(f"dropout must lie in [0, 1), got {dropout}")
        width = hidden[-1]
        if int(heads) < 1 or width % int(heads):
            raise SpecError(
                f"heads must be a positive divisor of the model width (the last hidden size, "
                f"{width}), got {heads}. Fix: change heads or the last entry of hidden"
            )
        if int(blocks) < 0:
            raise SpecError(f"blocks must be a non-negative number of encoder blocks, got {blocks}")
        if int(ff_width) < 1:
            raise SpecError(f"ff_width must be a positive width, got {ff_width}")
        if layer_norm not in _NORMS:
            raise SpecError(f"unknown layer_norm {layer_norm!r}; known: {', '.join(_NORMS)}")
        if norm_style not in _NORM_STYLES:
            raise SpecError(f"unknown norm_style {norm_style!r}; known: {', '.join(_NORM_STYLES)}")
        self.hidden, self.activation, self.dropout = hidden, act, float(dropout)
        self.heads, self.blocks, self.ff_width = int(heads), int(blocks), int(ff_width)
        self.layer_norm, self.input_norm = layer_norm, bool(input_norm)
        self.norm_style, self.output_activation = norm_style, out_act
        self.in_norm = nn.LayerNorm(self.n_features) if self.input_norm else nn.Identity()
        sizes = [self.n_features, *hidden]
        self.projection = nn.ModuleList(nn.Linear(a, b) for a, b in itertools.pairwise(sizes))
        self.act = _ACTS[act]()
        self.drop = nn.Dropout(self.dropout)
        pre = layer_norm == "pre"
        self.encoder = nn.ModuleList(
            _Block(width, self.heads, self.ff_width, self.dropout, pre, norm_style)
            for _ in range(self.blocks)
        )
        self.final_norm = _Norm(width, norm_style) if pre and self.blocks else nn.Identity()
        self.output = nn.Linear(width, 1)
        self.out_act = _ACTS[out_act]()

    def forward(self, x: Any, mask: Any = None) -> Any:
        """Scores ``(B, L)`` of a padded batch ``x`` ``(B, L, F)`` (``mask`` ``(B, L)``, True =
        a real document; None = no padding), or ``(L,)`` of one list ``(L, F)``."""
        one = x.ndim == 2
        if one:
            x = x.unsqueeze(0)
            mask = None if mask is None else mask.unsqueeze(0)
        if mask is None:
            mask = torch.ones(x.shape[:2], dtype=torch.bool, device=x.device)
        # a list without any real document attends to all its (padded) positions: finite
        keep = (mask | ~mask.any(-1, keepdim=True))[:, None, None, :]
        h = self.in_norm(x)
        for layer in self.projection:
            h = self.drop(self.act(layer(h)))
        for block in self.encoder:
            h = block(h, keep)
        scores = self.out_act(self.output(self.final_norm(h)).squeeze(-1))
        return scores[0] if one else scores

    def score_padded(self, x: Any, pad_index: Any, mask: Any) -> Any:
        """The ``(B, M)`` scores of the lists laid out by ``pad_index`` over the rows of ``x``."""
        return self(x[pad_index], mask)

    def score_lists(self, x: Any, boundaries: Any = None) -> Any:
        """Flat scores of the lists ``boundaries`` (None: ``x`` is one list), padded in groups of
        whole lists with at most :data:`_PAIRS` attention weights per head (a longer list
        alone)."""
        if boundaries is None:
            return self(x)
        out = []
        for lo, hi, local in _list_chunks(np.asarray(boundaries, dtype=np.int64), _PAIRS):
            lengths = np.diff(local)
            width = int(lengths.max()) if len(lengths) else 0
            cols = np.arange(width)
            mask_np = cols[None, :] < lengths[:, None]
            index = np.where(mask_np, local[:-1, None] + cols[None, :], 0)
            mask = torch.as_tensor(mask_np, device=x.device)
            part = self(x[lo:hi][torch.as_tensor(index, device=x.device)], mask)
            out.append(part[mask])
        return torch.cat(out) if out else x.new_zeros(0)

    def predict_chunks(
        self, n_rows: int, boundaries: Any, batch_size: int
    ) -> Iterator[tuple[int, int, Any]]:
        """Whole lists, with at most ``64 · batch_size`` attention weights per head (the
        ``batch_size`` rows of lists of 64 documents)."""
        b = np.array([0, n_rows]) if boundaries is None else np.asarray(boundaries, np.int64)
        yield from _list_chunks(b, 64 * batch_size)

    def config(self) -> dict[str, Any]:
        return {
            **super().config(),
            "hidden": list(self.hidden),
            "activation": self.activation,
            "dropout": self.dropout,
            "heads": self.heads,
            "blocks": self.blocks,
            "ff_width": self.ff_width,
            "layer_norm": self.layer_norm,
            "input_norm": self.input_norm,
            "norm_style": self.norm_style,
            "output_activation": self.output_activation,
        }


def _list_chunks(b: np.ndarray, pairs: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """Runs of whole lists ``(lo, hi, local boundaries)`` of boundaries ``b`` whose padded
    attention (lists x longest list²) stays within ``pairs`` (a longer list forms a run alone)."""
    lengths = np.diff(b)
    q, n_q = 0, len(lengths)
    while q < n_q:
        end, longest = q + 1, int(lengths[q])
        while end < n_q and max(longest, int(lengths[end])) ** 2 * (end + 1 - q) <= pairs:
            longest = max(longest, int(lengths[end]))
            end += 1
        yield int(b[q]), int(b[end]), b[q : end + 1] - b[q]
        q = end


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


#: the model-file schema of the ``model`` keys (see :func:`ndcglab.models.io.check_model_metadata`)
ATTENTION_SCHEMA: dict[str, tuple[Any, str]] = {
    "hidden": (
        lambda v: (
            isinstance(v, list) and 1 <= len(v) <= 100 and all(_is_int(h) and 1 <= h for h in v)
        ),
        "a list of 1 to 100 positive layer sizes",
    ),
    "activation": (lambda v: v in _ACTS, f"one of {', '.join(sorted(_ACTS))}"),
    "dropout": (lambda v: isinstance(v, int | float) and 0 <= v < 1, "a number in [0, 1)"),
    "heads": (lambda v: _is_int(v) and v >= 1, "a positive integer"),
    "blocks": (lambda v: _is_int(v) and 0 <= v <= 1000, "an integer in [0, 1000]"),
    "ff_width": (lambda v: _is_int(v) and v >= 1, "a positive integer"),
    "layer_norm": (lambda v: v in _NORMS, "'pre' or 'post'"),
    "input_norm": (lambda v: isinstance(v, bool), "true or false"),
    "norm_style": (lambda v: v in _NORM_STYLES, "'layer' or 'allrank'"),
    "output_activation": (lambda v: v in _ACTS, f"one of {', '.join(sorted(_ACTS))}"),
}


def attention_parameter_count(cfg: Mapping[str, Any]) -> int:
    """The parameter count of the :class:`AttentionModel` that ``cfg`` (its config) describes."""
    f = int(cfg["n_features"])
    sizes = [f, *cfg.get("hidden", (64, 32))]
    d = int(sizes[-1])
    ff = int(cfg.get("ff_width", 128))
    n = sum(a * b + b for a, b in itertools.pairwise(sizes))
    per_block = 4 * (d * d + d) + (d * ff + ff) + (ff * d + d) + 4 * d
    blocks = int(cfg.get("blocks", 2))
    final = 2 * d if blocks and cfg.get("layer_norm", "pre") == "pre" else 0
    n += blocks * per_block + final + (d + 1)
    return n + (2 * f if cfg.get("input_norm") else 0)
