"""A scikit-learn style ranker: :class:`NDCGRanker`.

>>> from ndcglab.estimator import NDCGRanker
>>> ranker = NDCGRanker(loss="cs_listmle@10", epochs=200).fit(X, y, group=sizes)   # doctest: +SKIP
>>> scores = ranker.predict(X_test)                                                 # doctest: +SKIP

Conventions:

* ``fit(X, y, *, group=...)`` (LightGBM-style list sizes, documents of a query contiguous) or
  ``qid=`` (one query id per document); ``X`` may also be a :class:`~ndcglab.data.RankingDataset`
  (then ``y``, ``group`` and ``qid`` are not given). ``eval_set`` (one ``(X, y)`` pair, a list whose
  first pair is used, or a dataset) with ``eval_group``/``eval_qid`` is the validation set for
  model selection on ``validation_measure``.
* ``predict(X)`` returns one float64 score per document, higher = ranked higher.
* ``score(X, y, *, group=...)`` is the mean over queries of **NDCG@10 under the estimator's
  ``preset``** (default ``letor4``: LETOR gain table {0: 0, 1: 1, 2: 3}, LETOR discount, ties in
  input order, a query without relevant documents scores 0, NDCG@10 of a list shorter than 10 is
  0 as in the official LETOR scripts). Higher is better.
* Parameters are stored untouched by ``__init__`` (keyword-only); learned attributes end in ``_``:
  ``model_`` (the torch module), ``trained_`` (model + normalisation + metadata, see
  :class:`ndcglab.models.TrainedModel`), ``history_``, ``best_epoch_``, ``best_score_``,
  ``n_features_in_``.
* Every model kind is trained by :func:`ndcglab.training.fit` (``model="gbdt"``: LightGBM with
  the loss as a custom objective, imported only then); the parameters are those of
  :class:`~ndcglab.training.TrainConfig` and :class:`~ndcglab.training.config.TreeOptions`, turned
  into a configuration by :func:`ndcglab.training.config.config_from_options` exactly as
  ``ndcglab train`` does, so both accept and refuse the same options.

See :mod:`ndcglab.training.trainer` for the training protocol and its options.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np

from .data.dataset import RankingDataset
from .errors import NdcglabError, SpecError
from .training.config import TrainConfig, TreeOptions
from .training.fitting import load_trained
from .training.kinds import KINDS, get_kind

__all__ = ["NDCGRanker", "NDCGScorer", "load_trained", "ndcg_scorer"]

_D = TrainConfig()  # the defaults, stated once in TrainConfig
_T = TreeOptions()


def _as_dataset(
    X: Any, y: Any, group: Any, qid: Any, *, what: str = "X", need_labels: bool = True
) -> RankingDataset:
    if isinstance(X, RankingDataset):
        if y is not None or group is not None or qid is not None:
            raise SpecError(
                f"{what} is a RankingDataset, which carries its own labels and queries. Fix: do "
                "not pass y=, group= or qid= with it"
            )
        return X
    if group is None and qid is None:
        raise SpecError(
            f"ranking needs to know which documents of {what} form a query. Fix: pass group= "
            "(number of documents of each query, in order) or qid= (a query id per document)"
        )
    x = np.asarray(X)  # cast to float32 by from_arrays, which refuses what float32 cannot hold
    if x.ndim != 2:
        raise SpecError(f"{what} must be a 2-D (documents, features) array, got shape {x.shape}")
    if y is None:
        if need_labels:
            raise SpecError(f"labels y are needed with {what}")
        y = np.zeros(len(x))
    try:
        return RankingDataset.from_arrays(x, y, group=group, qid=qid)
    except ValueError as exc:
        raise SpecError(f"{what}: {exc}") from None


class NDCGRanker:
    """Learning to rank for NDCG, scikit-learn style; see the module docstring for conventions.

    Parameters mirror :class:`ndcglab.training.TrainConfig`: ``loss`` (a registered loss spec,
    e.g. ``listnet``, ``cs_listmle@10``, ``consistent_listnet(norm=z10)``, ``ranksvm``,
    ``adarank``), ``model`` (``linear``, ``mlp``, ``adarank``, ``gbdt``, ``attention``),
    ``optimizer`` (``gd`` full batch until the loss changes less than ``tol``, or ``adam`` over
    batches of ``batch_size`` queries), ``lr`` (None: the optimiser's entry of
    :data:`ndcglab.training.config.DEFAULT_LR`), ``epochs`` (cap; None: the optimiser's entry of
    :data:`ndcglab.training.config.DEFAULT_EPOCHS`),
    ``normalize`` (``none``, ``query_minmax``, ``zscore``, ``log1p_zscore``),
    ``validation_measure`` and ``preset``
    (model selection on ``eval_set``), ``patience`` (early stopping), ``seed``, ``device``
    (``cpu``, ``cuda``, ``auto``), ``hidden``/``activation``/``dropout`` (MLP; the input
    projection of ``model="attention"``, with ``heads``, ``blocks``, ``ff_width``, ``layer_norm``,
    ``input_norm``), ``noise`` and ``ensemble`` (DASALC: Gaussian-noise augmentation, models of
    several seeds averaged), ``l2`` and ``C``
    (RankSVM), ``checkpoint_dir`` (atomic per-epoch checkpoints; ``fit(..., resume=True)``),
    ``verbose`` (a progress bar on a terminal), ``gtol`` (L-BFGS), ``rounds`` (AdaRank and
    trees), ``num_threads``; for trees ``engine``, ``num_leaves``, ``min_data_in_leaf``,
    ``hessian`` and ``gbdt_params`` (any other parameter of the tree engine).
    """

    def __init__(
        self,
        *,
        loss: str | None = None,  # None: the model kind's default loss (TrainConfig)
        model: str = _D.model,
        optimizer: str = _D.optimizer,
        lr: float | None = _D.lr,
        epochs: int | None = _D.epochs,
        batch_size: int | None = _D.batch_size,
        tol: float = _D.tol,
        gtol: float = _D.gtol,
        normalize: str = _D.normalize,
        validation_measure: str = _D.validation_measure,
        preset: str | None = _D.preset,
        patience: int | None = _D.patience,
        seed: int = _D.seed,
        device: str = _D.device,
        hidden: Sequence[int] = _D.hidden,
        activation: str = _D.activation,
        dropout: float = _D.dropout,
        heads: int = _D.heads,
        blocks: int = _D.blocks,
        ff_width: int = _D.ff_width,
        layer_norm: str = _D.layer_norm,
        input_norm: bool = _D.input_norm,
        noise: float = _D.noise,
        ensemble: int = _D.ensemble,
        l2: float | None = _D.l2,
        C: float | None = _D.C,
        rounds: int | None = _D.rounds,
        num_threads: int | None = _D.num_threads,
        engine: str = _T.engine,
        num_leaves: int = _T.num_leaves,
        min_data_in_leaf: int = _T.min_data_in_leaf,
        hessian: str = _T.hessian,
        gbdt_params: dict[str, Any] | None = None,
        checkpoint_dir: str | None = None,
        verbose: bool = False,
    ) -> None:
        self.loss = loss
        self.model = model
        self.optimizer = optimizer
        self.lr = lr
        self.epochs = epochs
        self.batch_size = batch_size
        self.tol = tol
        self.gtol = gtol
        self.normalize = normalize
        self.validation_measure = validation_measure
        self.preset = preset
        self.patience = patience
        self.seed = seed
        self.device = device
        self.hidden = hidden
        self.activation = activation
        self.dropout = dropout
        self.heads = heads
        self.blocks = blocks
        self.ff_width = ff_width
        self.layer_norm = layer_norm
        self.input_norm = input_norm
        self.noise = noise
        self.ensemble = ensemble
        self.l2 = l2
        self.C = C
        self.rounds = rounds
        self.num_threads = num_threads
        self.engine = engine
        self.num_leaves = num_leaves
        self.min_data_in_leaf = min_data_in_leaf
        self.hessian = hessian
        self.checkpoint_dir = checkpoint_dir
        self.verbose = verbose
        self.gbdt_params = gbdt_params

    # ------------------------------------------------------------------ scikit-learn protocol
    @classmethod
    def _param_names(cls) -> list[str]:
        sig = inspect.signature(cls.__init__)
        return [p.name for p in sig.parameters.values() if p.kind == p.KEYWORD_ONLY]

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor parameters, as given."""
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> NDCGRanker:
        """Set constructor parameters; unknown names raise an error listing the valid ones."""
        valid = self._param_names()
        for key, value in params.items():
            if key not in valid:
                raise SpecError(
                    f"unknown parameter {key!r} for NDCGRanker; valid: {', '.join(valid)}"
                )
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        defaults = {
            p.name: p.default for p in inspect.signature(type(self).__init__).parameters.values()
        }
        changed = [
            f"{k}={v!r}" for k, v in self.get_params().items() if not _same(v, defaults.get(k))
        ]
        return f"NDCGRanker({', '.join(changed)})"

    def __sklearn_tags__(self) -> Any:  # pragma: no cover - only with scikit-learn's tooling
        from sklearn.utils import Tags, TargetTags

        return Tags(estimator_type="ranker", target_tags=TargetTags(required=True))

    # ------------------------------------------------------------------ metadata routing
    #: the metadata each method takes, which scikit-learn's routing may pass
    _METADATA: ClassVar[dict[str, tuple[str, ...]]] = {
        "fit": ("group", "qid", "eval_set", "eval_group", "eval_qid"),
        "score": ("group", "qid"),
        "predict": ("group", "qid"),
    }

    def set_fit_request(self, **requests: Any) -> NDCGRanker:
        """Ask scikit-learn's metadata routing (``sklearn.set_config(enable_metadata_routing=
        True)``) to pass ``fit`` these parameters: ``set_fit_request(qid=True)`` (or
        ``group=True``, or an alias: ``qid="query_id"``). ``GridSearchCV``, ``cross_val_score``
        and ``Pipeline`` then slice the query ids with the documents of each split."""
        return _set_request(self, "fit", requests, self._METADATA["fit"])

    def set_score_request(self, **requests: Any) -> NDCGRanker:
        """As :meth:`set_fit_request`, for ``score`` (``set_score_request(qid=True)``)."""
        return _set_request(self, "score", requests, self._METADATA["score"])

    def set_predict_request(self, **requests: Any) -> NDCGRanker:
        """As :meth:`set_fit_request`, for ``predict`` (query ids matter only under
        ``normalize="query_minmax"``)."""
        return _set_request(self, "predict", requests, self._METADATA["predict"])

    def get_metadata_routing(self) -> Any:
        """The requests set so far, as scikit-learn's ``MetadataRequest`` (a parameter not
        requested is refused by the routing when given, naming the ``set_*_request`` call)."""
        return _requests_of(self, self._METADATA)

    # ------------------------------------------------------------------ fitting
    #: constructor parameters that are not training options
    _NOT_OPTIONS = ("checkpoint_dir", "verbose", "gbdt_params")

    def _config(self) -> TrainConfig:
        """The :class:`~ndcglab.training.TrainConfig` of the parameters (the one builder)."""
        from .training.config import config_from_options

        params = self.get_params()
        options = {k: v for k, v in params.items() if k not in self._NOT_OPTIONS}
        return config_from_options({**options, "tree_params": self.gbdt_params})

    def fit(
        self,
        X: Any,
        y: Any = None,
        *,
        group: Any = None,
        qid: Any = None,
        eval_set: Any = None,
        eval_group: Any = None,
        eval_qid: Any = None,
        resume: bool = False,
    ) -> NDCGRanker:
        """Train on ``X``/``y`` (with ``group=`` or ``qid=``, or a dataset); returns ``self``."""
        train = _as_dataset(X, y, group, qid)
        valid = self._eval_dataset(eval_set, eval_group, eval_qid)
        from .training import fit as run_training

        cfg = self._config()
        result = run_training(
            train,
            cfg,
            validation=valid,
            checkpoint_dir=self.checkpoint_dir if get_kind(cfg.model).checkpoints else None,
            resume=resume,
            progress=bool(self.verbose),
        )
        self.result_ = result
        self.trained_ = result.trained
        self.model_ = result.model
        self.history_ = result.history
        self.best_epoch_ = result.best_epoch
        self.best_score_ = result.best_score
        self.n_features_in_ = train.n_features
        return self

    @staticmethod
    def _eval_dataset(eval_set: Any, eval_group: Any, eval_qid: Any) -> RankingDataset | None:
        if eval_set is None:
            return None
        if isinstance(eval_set, RankingDataset):
            return eval_set
        if isinstance(eval_set, list):
            if not eval_set:
                return None
            eval_set = eval_set[0]
            if isinstance(eval_group, list) and eval_group and np.ndim(eval_group[0]) == 1:
                eval_group = eval_group[0]
            if isinstance(eval_qid, list) and eval_qid and np.ndim(eval_qid[0]) == 1:
                eval_qid = eval_qid[0]
        if isinstance(eval_set, RankingDataset):
            return eval_set
        if not isinstance(eval_set, tuple) or len(eval_set) != 2:
            raise SpecError(
                "eval_set must be a RankingDataset, an (X, y) pair or a list of such pairs "
                "(the first one is used for model selection)"
            )
        return _as_dataset(eval_set[0], eval_set[1], eval_group, eval_qid, what="eval_set")

    # ------------------------------------------------------------------ using the model
    def _check_fitted(self) -> None:
        if not hasattr(self, "trained_"):
            raise NdcglabError(
                "this NDCGRanker is not fitted yet. Fix: call fit(X, y, group=...) first"
            )

    def predict(self, X: Any, *, group: Any = None, qid: Any = None) -> np.ndarray:
        """One float64 score per document of ``X`` (a matrix, a dataset, or the path of a
        LETOR/SVMlight file, which a torch model scores as it reads it, block by block:
        :meth:`ndcglab.models.TrainedModel.iter_file_scores`); higher ranks first.

        ``group=``/``qid=`` are needed under ``normalize="query_minmax"``, and by a model that
        scores each document among its query's (``model="attention"``): without them the rows of
        ``X`` are scored as one list.
        """
        self._check_fitted()
        if not get_kind(self.model).torch:  # trees need no normalisation
            return np.asarray(self.trained_.predict(X), dtype=np.float64)
        return np.asarray(self.trained_.predict(X, group=group, qid=qid), dtype=np.float64)

    def score(self, X: Any, y: Any = None, *, group: Any = None, qid: Any = None) -> float:
        """Mean NDCG@10 over the queries of ``X`` under ``preset`` (see the module docstring)."""
        ds = _as_dataset(X, y, group, qid)
        scores = self.predict(ds)
        from .measures.scorer import MeasureScorer

        return MeasureScorer("ndcg@10", self.preset).mean(ds.labels, scores, ds.boundaries)

    def save(self, path: str) -> Any:
        """Write the fitted model (weights, normalisation, metadata) to one file; read it back
        with :meth:`NDCGRanker.load`."""
        self._check_fitted()
        return self.trained_.save(path)

    @classmethod
    def load(cls, path: str | os.PathLike[str], *, map_location: str = "cpu") -> NDCGRanker:
        """A fitted ranker from a model file written by :meth:`save` (or ``ndcglab train``).

        The constructor parameters come from the options stored in the file (those the file does
        not hold keep their defaults); ``predict`` and ``score`` give what the saved ranker gave;
        ``history_`` is empty (the file keeps the outcome of training, not every epoch).
        """
        trained = load_trained(path, map_location=map_location)
        meta = dict(getattr(trained, "metadata", None) or {})
        options = dict(meta.get("training") or {})
        kind = KINDS.get(
            str(meta.get("model_kind") or meta.get("kind") or options.get("model") or "")
        )
        if kind is None or not hasattr(trained, "model"):  # the trees' file: its kind in "model"
            kind = KINDS.get(str((meta.get("model") or {}).get("kind")), kind)
        is_gbdt = kind is not None and not kind.torch
        valid = set(cls._param_names())
        params = {k: v for k, v in options.items() if k in valid}
        if "hidden" in params and params["hidden"] is not None:
            params["hidden"] = tuple(params["hidden"])
        if meta.get("loss"):
            params["loss"] = str(meta["loss"])
        if kind is not None:
            params["model"] = kind.name
        ranker = cls()
        for key, value in params.items():
            setattr(ranker, key, value)
        ranker.trained_ = trained
        ranker.model_ = trained if is_gbdt else trained.model
        ranker.history_ = []
        ranker.n_features_in_ = int(trained.n_features)
        best = meta.get("best_epoch")
        if is_gbdt:
            best = getattr(trained, "best_iteration", best)
        ranker.best_epoch_ = None if best is None else int(best)
        ranker.best_score_ = meta.get("best_score")
        return ranker


def _same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) if not isinstance(a, np.ndarray) else False
    except Exception:
        return False


def _requests_of(owner: Any, metadata: dict[str, tuple[str, ...]]) -> Any:
    """``owner``'s scikit-learn ``MetadataRequest``: the one its ``set_*_request`` calls built
    (``owner._metadata_request``, which ``sklearn.clone`` copies), else a new one in which every
    parameter of ``metadata`` is known and not requested."""
    req = getattr(owner, "_metadata_request", None)
    if req is None:
        from sklearn.utils.metadata_routing import MetadataRequest

        req = MetadataRequest(owner=owner)
        for method, params in metadata.items():
            for param in params:
                getattr(req, method).add_request(param=param, alias=None)
    return req


def _set_request(
    owner: Any, method: str, requests: dict[str, Any], allowed: tuple[str, ...]
) -> Any:
    unknown = sorted(set(requests) - set(allowed))
    if unknown:
        raise SpecError(
            f"{type(owner).__name__}.{method} takes no metadata {', '.join(unknown)}. Fix: "
            f"request some of {', '.join(allowed)}"
        )
    req = _requests_of(owner, getattr(owner, "_METADATA", {method: allowed}))
    for param, alias in requests.items():
        getattr(req, method).add_request(param=param, alias=alias)
    owner._metadata_request = req
    return owner


class NDCGScorer:
    """A scikit-learn scorer of a ranker: the mean over queries of NDCG@k under a preset,
    queries given by ``qid=`` (one id per document, each query's documents contiguous) or
    ``group=`` (list sizes), as metadata routing passes them (both requested by default).

    ``scorer(estimator, X, y, qid=...)`` predicts ``X`` with ``estimator`` (an
    :class:`NDCGRanker` or a ``Pipeline`` ending in one, or any model with ``predict``) and
    returns the mean NDCG@k of the queries (:class:`~ndcglab.measures.MeasureScorer`: the
    measure's rules come from ``preset``; ``None`` is ``standard``), with ``ties`` (e.g.
    ``"average"``: the expectation over the orders of tied scores) overriding the preset's tie
    rule. Higher is better.
    """

    _METADATA: ClassVar[dict[str, tuple[str, ...]]] = {"score": ("group", "qid")}

    def __init__(
        self, k: int | None = 10, preset: str | None = None, ties: str | None = None
    ) -> None:
        self.k = k
        self.preset = preset
        self.ties = ties
        opts = "" if ties is None else f"(ties={ties})"
        self.measure = f"ndcg{opts}" if k is None else f"ndcg{opts}@{int(k)}"

    def __call__(
        self, estimator: Any, X: Any, y: Any, *, qid: Any = None, group: Any = None
    ) -> float:
        from .data.dataset import boundaries_from_group, boundaries_from_qids
        from .measures.scorer import MeasureScorer

        if (qid is None) == (group is None):
            raise SpecError(
                f"{self!r} needs the queries of X: exactly one of qid= or group=. Fix: "
                "sklearn.set_config(enable_metadata_routing=True) and pass qid= (or groups=) to "
                "the search's fit, e.g. GridSearchCV(...).fit(X, y, groups=qid, qid=qid)"
            )
        labels = np.asarray(y, dtype=np.float64)
        b = boundaries_from_group(group) if qid is None else boundaries_from_qids(np.asarray(qid))
        scores = np.asarray(estimator.predict(X), dtype=np.float64)
        return MeasureScorer(self.measure, self.preset).mean(labels, scores, b)

    def set_score_request(self, **requests: Any) -> NDCGScorer:
        """Set which metadata scikit-learn passes (default ``qid=True, group=True``)."""
        scorer: NDCGScorer = _set_request(self, "score", requests, self._METADATA["score"])
        return scorer

    def get_metadata_routing(self) -> Any:
        """scikit-learn's ``MetadataRequest``: ``score`` takes ``qid`` and ``group``."""
        if getattr(self, "_metadata_request", None) is None:
            self.set_score_request(qid=True, group=True)
        return _requests_of(self, self._METADATA)

    def __repr__(self) -> str:
        ties = "" if self.ties is None else f", ties={self.ties!r}"
        return f"ndcg_scorer(k={self.k!r}, preset={self.preset!r}{ties})"


def ndcg_scorer(
    k: int | None = 10, preset: str | None = None, ties: str | None = None
) -> NDCGScorer:
    """A grouped scorer for scikit-learn's model selection: mean NDCG@k per query under
    ``preset`` (:class:`NDCGScorer`; ``ties="average"`` for tie-averaged NDCG), e.g.
    ``GridSearchCV(NDCGRanker(), grid, scoring=ndcg_scorer(10, "letor4"), cv=GroupKFold(5))``."""
    return NDCGScorer(k, preset, ties)
