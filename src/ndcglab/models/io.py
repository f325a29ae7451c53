"""Saving and loading trained models: one self-describing file.

The file is the container of :mod:`ndcglab.models.file_format` (a stored zip archive; the
``format``, ``format_version``, ``versions`` and ``created`` keys are written there) with:

* ``metadata.json`` — also ``model`` (the architecture, :meth:`RankModel.config`), ``n_features``,
  ``feature_names``, ``normalization`` (method and fitted statistics), ``loss``, ``training`` (every
  training option), ``training_measure``, ``seed``, plus anything the caller adds; ``versions``
  records Python, ndcglab, torch and numpy;
* ``weights.pt`` — the model's ``state_dict`` written by ``torch.save`` and read back with
  ``weights_only=True`` (no pickled code is ever executed on load).

:func:`load_model` checks the metadata against the schema of its kind before building anything
(:func:`check_model_metadata`: only known ``model`` keys, each of the right type and range;
``normalization`` statistics with one finite value per feature; a parameter count that the
``weights.pt`` member can actually hold, and at most :data:`MAX_MODEL_PARAMETERS`), so a damaged
or edited file is a :class:`~ndcglab.errors.DataFormatError` naming the field, never a crash or a
huge allocation. :func:`load_model` returns a :class:`TrainedModel` whose
:meth:`~TrainedModel.predict` normalises features the way training did and refuses data with
another feature count
(:class:`~ndcglab.errors.ModelMismatchError`). Files of other model families (boosted trees, kind
``gbdt``) are read by the loader their package registers with :func:`register_model_loader`;
:func:`ndcglab.estimator.load_trained` reads every kind.
"""

from __future__ import annotations

import io
import itertools
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .._versions import package_versions
from ..data.dataset import RankingDataset
from ..data.normalize import Normalizer
from ..errors import DataFormatError, ModelMismatchError, SpecError
from .adarank import AdaRank
from .attention import ATTENTION_SCHEMA, AttentionModel, attention_parameter_count
from .base import LinearModel, MLPModel, RankModel, build_model, model_families, torch
from .file_format import (
    FORMAT,
    FORMAT_VERSION,
    _is_int,
    file_header,
    member_size,
    model_kind,
    read_member,
    read_model_metadata,
    register_model_loader,
    registered_loader,
    write_model_file,
)

__all__ = [
    "FORMAT",
    "FORMAT_VERSION",
    "MAX_MODEL_PARAMETERS",
    "MODEL_KINDS",
    "TrainedModel",
    "check_model_metadata",
    "load_model",
    "read_metadata",
    "register_model_loader",
    "save_model",
    "versions",
]

#: the packages whose versions a torch model file records (besides Python)
RECORDED_PACKAGES = ("ndcglab", "torch", "numpy")
_WEIGHTS_MEMBER = "weights.pt"

#: the most parameters a model file may declare (a sanity bound checked before building)
MAX_MODEL_PARAMETERS = 1_000_000_000
#: the model families :func:`load_model` reads itself (torch models), each named by its class's
#: :attr:`~ndcglab.models.RankModel.kind`; other kinds need a registered loader
MODEL_KINDS: tuple[str, ...] = tuple(model_families())
_FIX = "re-save the model with ndcglab.models.save_model (the file was edited or damaged)"


def _is_num(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _field_error(path: Any, name: str, what: str, got: Any) -> DataFormatError:
    shown = repr(got)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return DataFormatError(
        f"metadata field {name} must be {what}, got {shown}", path=path, fix=_FIX
    )


#: per kind: key -> (check, description); ``kind`` and ``n_features`` are checked by the header
_SCHEMAS: dict[str, dict[str, tuple[Any, str]]] = {
    LinearModel.kind: {
        "bias": (lambda v: isinstance(v, bool), "true or false"),
        "init": (lambda v: v in ("zeros", "normal"), "'zeros' or 'normal'"),
    },
    MLPModel.kind: {
        "hidden": (
            lambda v: (
                isinstance(v, list)
                and 1 <= len(v) <= 1000
                and all(_is_int(h) and 1 <= h <= 10_000_000 for h in v)
            ),
            "a list of 1 to 1000 positive layer sizes",
        ),
        "activation": (lambda v: isinstance(v, str), "a string"),
        "dropout": (lambda v: _is_num(v) and 0 <= v < 1, "a number in [0, 1)"),
    },
    AttentionModel.kind: ATTENTION_SCHEMA,
    AdaRank.kind: {
        "measure": (lambda v: isinstance(v, str), "a measure name"),
        "preset": (lambda v: v is None or isinstance(v, str), "null or a preset name"),
        "rounds": (lambda v: _is_int(v) and v >= 1, "a positive integer"),
        "patience": (lambda v: _is_int(v) and v >= 0, "a non-negative integer"),
        "tol": (lambda v: _is_num(v) and math.isfinite(v) and v >= 0, "a number >= 0"),
    },
}


def _n_parameters(cfg: Mapping[str, Any]) -> int:
    f = int(cfg["n_features"])
    if cfg["kind"] == MLPModel.kind:
        sizes = [f, *cfg.get("hidden", (64, 32)), 1]
        return sum(a * b + b for a, b in itertools.pairwise(sizes))
    if cfg["kind"] == AttentionModel.kind:
        return attention_parameter_count(cfg)
    return f + 1


def check_model_metadata(meta: Mapping[str, Any], path: Any = None) -> None:
    """Check a torch model file's metadata against the schema of its kind before anything is
    built: the ``model`` keys (known ones only, right types and ranges), the ``normalization``
    (a known method; ``mean``/``scale`` null or one finite number per feature, scales > 0) and
    the parameter count (at most :data:`MAX_MODEL_PARAMETERS`, and no more than the
    ``weights.pt`` member can hold at 2 bytes each). Raises :class:`DataFormatError` naming the
    field."""
    cfg = meta["model"]
    kind = cfg["kind"]
    schema = _SCHEMAS.get(kind)
    if schema is None:
        return
    if not _is_int(cfg.get("n_features")):
        raise _field_error(path, "model.n_features", "a positive integer", cfg.get("n_features"))
    n_features = int(cfg["n_features"])
    configs = [cfg]
    if "ensemble" in cfg:  # a SeedEnsemble: the first member's keys, and every member's config
        members = cfg["ensemble"]
        if not (
            isinstance(members, list)
            and 1 <= len(members) <= 1000
            and all(
                isinstance(m, dict)
                and "ensemble" not in m
                and m.get("kind") == kind
                and m.get("n_features") == n_features
                for m in members
            )
        ):
            what = f"a list of 1 to 1000 {kind} configs with n_features {n_features}"
            raise _field_error(path, "model.ensemble", what, members)
        configs = members
    for one in configs:
        for key, value in one.items():
            if key in ("kind", "n_features", "ensemble"):
                continue
            if key not in schema:
                raise _field_error(
                    path, f"model.{key}", f"one of the known keys ({', '.join(schema)})", key
                )
            check, what = schema[key]
            if not check(value):
                raise _field_error(path, f"model.{key}", what, value)
    n_params = sum(_n_parameters(one) for one in configs)
    if n_params > MAX_MODEL_PARAMETERS:
        raise _field_error(
            path, "model", f"a model of at most {MAX_MODEL_PARAMETERS:,} parameters", n_params
        )
    size = member_size(path, _WEIGHTS_MEMBER) if path is not None else None
    if size is not None and size < 2 * n_params:
        raise DataFormatError(
            f"the metadata describes a model of {n_params:,} parameters but weights.pt holds "
            f"only {size:,} bytes",
            path=path,
            fix=_FIX,
        )
    norm = meta.get("normalization")
    if norm is None:
        return
    if not isinstance(norm, dict):
        raise _field_error(path, "normalization", "an object", norm)
    method = norm.get("method", "none")
    from ..data.normalize import NORMALIZATIONS

    if method not in NORMALIZATIONS:
        raise _field_error(path, "normalization.method", f"one of {NORMALIZATIONS}", method)
    nf = norm.get("n_features")
    if nf is not None and nf != n_features:
        raise _field_error(path, "normalization.n_features", f"{n_features} or null", nf)
    for key in ("mean", "scale"):
        v = norm.get(key)
        if v is None:
            continue
        if (
            not isinstance(v, list)
            or len(v) != n_features
            or not all(_is_num(x) and math.isfinite(x) for x in v)
            or (key == "scale" and not all(x > 0 for x in v))
        ):
            what = f"null or a list of {n_features} finite numbers" + (
                " > 0" if key == "scale" else ""
            )
            got = (
                f"a list of {len(v)} values" if isinstance(v, list) and len(v) != n_features else v
            )
            raise _field_error(path, f"normalization.{key}", what, got)


def versions() -> dict[str, str | None]:
    """Versions recorded in torch model files: Python, ndcglab, torch, numpy."""
    return package_versions(RECORDED_PACKAGES)


@dataclass
class TrainedModel:
    """A scoring model together with its feature normalisation and metadata.

    :meth:`predict` takes a :class:`~ndcglab.data.RankingDataset`, or a feature matrix (with
    ``group=``/``qid=`` when the normalisation is per query), and returns ``(N,)`` float64 scores.
    """

    model: RankModel
    normalizer: Normalizer = field(default_factory=Normalizer)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def n_features(self) -> int:
        return self.model.n_features

    @property
    def feature_names(self) -> list[str] | None:
        names = self.metadata.get("feature_names")
        return None if names is None else list(names)

    def check(
        self, n_features: int, feature_names: list[str] | None = None, *, what: str = "the data"
    ) -> None:
        """Raise :class:`ModelMismatchError` when the data's features do not match the model's."""
        if int(n_features) != self.n_features:
            source = self.metadata.get("path")
            model_txt = f"model {source}" if source else "the model"
            raise ModelMismatchError(
                f"{model_txt} expects {self.n_features} features (trained on "
                f"{self.metadata.get('training_data', 'its training data')}) but {what} has "
                f"{n_features}. Fix: apply the model to data with the same {self.n_features} "
                "features (same collection and LETOR version), or train a new model on this data"
            )
        mine = self.feature_names
        if mine is not None and feature_names is not None and list(feature_names) != mine:
            diff = next(i for i, (a, b) in enumerate(zip(mine, feature_names)) if a != b)
            raise ModelMismatchError(
                f"feature {diff + 1} is {feature_names[diff]!r} in {what} but {mine[diff]!r} in "
                "the model. Fix: reorder the data's columns to the model's feature_names"
            )

    def _matrix(self, data: Any, group: Any, qid: Any) -> tuple[np.ndarray, np.ndarray | None]:
        """The raw feature matrix of ``data`` (checked against the model) and its query
        boundaries (``None`` for a bare matrix without ``group=``/``qid=``)."""
        if isinstance(data, RankingDataset):
            self.check(
                data.n_features, data.feature_names, what=f"dataset {data.source or ''}".strip()
            )
            return data.features, data.boundaries
        x = np.asarray(data, dtype=np.float32)
        if x.ndim != 2:
            raise ModelMismatchError(
                f"expected a 2-D (documents, features) matrix, got shape {x.shape}"
            )
        self.check(x.shape[1])
        boundaries = None
        if group is not None or qid is not None:
            ds = RankingDataset.from_arrays(x, np.zeros(len(x)), group=group, qid=qid)
            boundaries = ds.boundaries
        return x, boundaries

    def transform(self, data: Any, *, group: Any = None, qid: Any = None) -> np.ndarray:
        """The normalised float32 feature matrix the model scores."""
        x, boundaries = self._matrix(data, group, qid)
        return self.normalizer.transform(x, boundaries)

    def predict(self, data: Any, *, group: Any = None, qid: Any = None) -> np.ndarray:
        """Scores ``(N,)`` float64 for every document of ``data`` (dataset, feature matrix, or
        the path of a LETOR/SVMlight file, read block by block: :meth:`iter_file_scores`).

        The raw features are normalised and scored block by block
        (:mod:`ndcglab.models.scoring`): the numbers of ``model.predict(self.transform(data))``
        bit for bit, without a normalised copy of the whole matrix. A list-aware model
        (:attr:`~ndcglab.models.RankModel.listwise`) scores each query of a dataset, or of
        ``group=``/``qid=``, on its own; a bare matrix is then one list.
        """
        from .scoring import score_features

        if isinstance(data, str | os.PathLike):
            parts = list(self.iter_file_scores(data))
            return parts[0] if len(parts) == 1 else np.concatenate(parts)
        x, boundaries = self._matrix(data, group, qid)
        return score_features(self.model, self.normalizer, x, boundaries)

    def iter_file_scores(
        self,
        path: str | os.PathLike[str],
        *,
        counts: dict[str, int] | None = None,
        ids: list[tuple[list[str], np.ndarray, list[str]]] | None = None,
        **read_options: Any,
    ) -> Iterator[np.ndarray]:
        """The float64 scores of the documents of the LETOR/SVMlight file at ``path``, in file
        order, one array per block of rows as the file is read: the numbers of
        ``predict(read_letor(path, **read_options))`` bit for bit (a file with fewer feature
        columns than the model has the rest as 0), with peak memory of a block of rows (about
        64 MiB of the file, or the 262,144 rows of one forward call of a model without a
        linear form) instead of the whole matrix.

        A small file (at most 32 MiB), a file with a query file beside it, and the read options
        other than ``missing``, ``max_features`` and ``split_queries`` (``"merge"`` excepted)
        are read whole first, then scored. ``counts`` (a dict), when given, receives
        ``n_docs`` and ``n_queries`` once the file is read. ``ids`` (a list), when given,
        receives ``(query ids, query sizes, document ids)`` of each run of whole queries as it
        is read, before the scores of its rows (which may come over several of the arrays
        yielded): the ids of :func:`~ndcglab.data.read_letor`'s dataset, ``""`` for a document
        without a ``#docid`` comment. An error in the file
        (:class:`~ndcglab.errors.DataFormatError`, naming file, line and token) comes when
        its block is read, after the scores of the blocks before it.
        """
        from ..data.letor_stream import LetorBlocks, streamable
        from .scoring import BlockScorer

        width = self.n_features
        if not streamable(path, read_options):
            from ..data import load_dataset

            ds = load_dataset(path, **read_options)
            if ds.n_features < width:
                ds = ds.with_n_features(width)  # a sparse file: indices above its highest are 0
            if counts is not None:
                counts.update(n_docs=ds.n_docs, n_queries=ds.n_queries)
            if ids is not None:
                docs = [""] * ds.n_docs if ds.doc_ids is None else [str(d) for d in ds.doc_ids]
                ids.append(([str(q) for q in ds.query_ids], np.diff(ds.boundaries), docs))
            yield self.predict(ds)
            return
        empty = np.zeros((0, width), dtype=np.float32)
        self.normalizer.transform(empty, np.zeros(1, dtype=np.int64))  # its own checks
        blocks = LetorBlocks(path, width=width, ids=ids is not None, **read_options)
        with BlockScorer(self.model, self.normalizer) as scorer:
            for x, boundaries in blocks:
                if x.shape[1] != width:
                    self.check(x.shape[1], what=f"dataset {path}")
                if ids is not None:
                    ids.append((blocks.query_ids, np.diff(boundaries), blocks.doc_ids))
                yield scorer.feed(x, boundaries)
            yield scorer.finish()
        if counts is not None:
            counts.update(n_docs=blocks.n_docs, n_queries=blocks.n_queries)

    def write_file_run(
        self,
        path: str | os.PathLike[str],
        out: str | os.PathLike[str],
        *,
        tag: str = "ndcglab",
        **read_options: Any,
    ) -> tuple[int, int]:
        """Write the TREC run of the LETOR/SVMlight file at ``path`` to ``out`` query by query,
        as the file is read and scored (:meth:`iter_file_scores`): the bytes of
        :func:`~ndcglab.data.write_run` of the dataset read whole and :meth:`predict`'s scores,
        with peak memory of a block. ``out`` is written atomically (nothing is left on an
        error), or streamed to ``-``, a FIFO or a device. Returns ``(queries, documents)``."""
        from collections import deque

        from .._atomic import atomic_write
        from ..data import RunWriter

        writer = RunWriter(tag)
        counts: dict[str, int] = {}
        runs: list[tuple[list[str], np.ndarray, list[str]]] = []
        queries: deque[tuple[str, int, list[str]]] = deque()  # read, not yet written
        waiting = np.zeros(0, dtype=np.float64)  # the scores of the next queries' first rows
        with atomic_write(out) as f:
            for scores in self.iter_file_scores(path, counts=counts, ids=runs, **read_options):
                for qids, sizes, docs in runs:
                    at = 0
                    for q, m in zip(qids, sizes.tolist(), strict=True):
                        queries.append((q, m, docs[at : at + m]))
                        at += m
                runs.clear()
                waiting = np.concatenate([waiting, scores])
                at = 0
                while queries and queries[0][1] <= len(waiting) - at:
                    q, m, docs = queries.popleft()
                    writer.write(f, q, docs, waiting[at : at + m])
                    at += m
                waiting = waiting[at:]
        return counts["n_queries"], counts["n_docs"]

    def save(self, path: str | os.PathLike[str], **extra: Any) -> Path:
        """Write this model to ``path`` (see :func:`save_model`)."""
        return save_model(path, self.model, {**self.metadata, **extra}, normalizer=self.normalizer)


def save_model(
    path: str | os.PathLike[str],
    model: RankModel | TrainedModel,
    metadata: Mapping[str, Any] | None = None,
    *,
    normalizer: Normalizer | None = None,
) -> Path:
    """Write ``model`` (with ``normalizer`` and ``metadata``) to one file at ``path``, atomically.

    ``metadata`` is merged into the file's JSON; the keys ``format``, ``format_version``,
    ``model``, ``n_features``, ``normalization``, ``versions`` and ``created`` are filled here.
    Returns the path written.
    """
    if isinstance(model, TrainedModel):
        metadata = {**model.metadata, **(metadata or {})}
        normalizer = normalizer or model.normalizer
        model = model.model
    norm = normalizer or Normalizer(n_features=model.n_features)
    meta: dict[str, Any] = {k: v for k, v in (metadata or {}).items() if k != "path"}
    header = file_header(RECORDED_PACKAGES)
    meta.update(
        {
            "format": header["format"],
            "format_version": header["format_version"],
            "model": model.config(),
            "n_features": model.n_features,
            "normalization": norm.to_dict(),
            "versions": header["versions"],
            "created": header["created"],
        }
    )
    meta.setdefault("feature_names", None)
    weights = io.BytesIO()
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    torch.save(state, weights)
    return write_model_file(path, meta, {_WEIGHTS_MEMBER: weights.getvalue()})


def read_metadata(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON metadata of a model file (any kind), without loading the weights."""
    return read_model_metadata(path)


def load_model(
    path: str | os.PathLike[str], *, map_location: str = "cpu", n_features: int | None = None
) -> TrainedModel:
    """Read a model file written by :func:`save_model`.

    Files of a kind registered with :func:`register_model_loader` (boosted trees, once
    :mod:`ndcglab.gbdt` is imported) are handed to its loader; that object also has
    ``predict(data)``, ``n_features`` and ``metadata``.

    With ``n_features`` given, refuse at once (:class:`ModelMismatchError`) when it differs from
    the model's feature count; :meth:`TrainedModel.predict` checks it on every call anyway.
    """
    meta = read_metadata(path)
    kind = model_kind(meta)
    loader = registered_loader(kind)
    if loader is not None:
        other = loader(path)
        if n_features is not None and int(n_features) != other.n_features:
            raise ModelMismatchError(
                f"{path} expects {other.n_features} features but the data has {n_features}. "
                "Fix: apply the model to data with the same features, or retrain"
            )
        return other
    if kind is not None and kind not in MODEL_KINDS:
        raise DataFormatError(
            f"the file holds a model of kind {kind!r}, which ndcglab.models reads only once its "
            f"package has registered a loader (it reads {', '.join(MODEL_KINDS)} itself)",
            path=path,
            fix="load any model file with ndcglab.estimator.load_trained(path) (boosted trees: "
            "also ndcglab.gbdt.load_gbdt(path))",
        )
    check_model_metadata(meta, path)
    try:
        raw = read_member(path, _WEIGHTS_MEMBER)
    except KeyError:
        raise DataFormatError(
            f"the model file has no {_WEIGHTS_MEMBER} member", path=path, fix=_FIX
        ) from None
    try:
        state = torch.load(io.BytesIO(raw), map_location=map_location, weights_only=True)
    except Exception as exc:  # a damaged or foreign weights.pt; nothing of it is executed
        # torch's message would suggest weights_only=False (running pickled code): not shown
        raise DataFormatError(
            f"{_WEIGHTS_MEMBER} in the model file is unreadable ({type(exc).__name__}; damaged, "
            "or not a plain tensor dict written by save_model)",
            path=path,
            fix=_FIX,
        ) from None
    if not isinstance(state, dict):
        raise DataFormatError(
            f"{_WEIGHTS_MEMBER} does not hold a dict of weights", path=path, fix=_FIX
        )
    try:
        model = build_model(meta["model"])
    except (SpecError, TypeError, ValueError) as exc:
        raise DataFormatError(
            f"the stored architecture cannot be built ({exc})", path=path, fix=_FIX
        ) from None
    try:
        model.load_state_dict(state)
    except (RuntimeError, TypeError, KeyError, AttributeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        raise ModelMismatchError(
            f"{path}: the weights do not fit the stored architecture ({first[:200]}). "
            "Fix: re-save the model"
        ) from None
    model.eval()
    meta["path"] = str(path)
    trained = TrainedModel(
        model=model,
        normalizer=Normalizer.from_dict(meta.get("normalization") or {}),
        metadata=meta,
    )
    if n_features is not None:
        trained.check(n_features)
    return trained
