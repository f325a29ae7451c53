"""Training options and results: :class:`TrainConfig` (every option and its default, stated once,
for every model kind), :class:`TreeOptions` (the boosted trees' own options) and
:class:`TrainResult`.

Defaults live here and only here: :class:`ndcglab.estimator.NDCGRanker`, ``ndcglab train``/``cv``,
``ndcglab reproduce`` and the tree engines (:mod:`ndcglab.gbdt`) take theirs from
``TrainConfig()``, :data:`TREE_DEFAULTS` and ``TreeOptions()``; the options are built from
keyword parameters in one place, :func:`config_from_options`. What each option does is described
in :mod:`ndcglab.training.trainer` (gradient models) and :mod:`ndcglab.gbdt.train` (trees).
Importing this module does not import torch.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from .._compat import available_cores
from ..data.normalize import NORMALIZATIONS
from ..errors import NdcglabError, SpecError
from .kinds import MODEL_KINDS

__all__ = [
    "DEFAULT_EPOCHS",
    "DEFAULT_LR",
    "OPTIMIZERS",
    "TREE_DEFAULTS",
    "TREE_ENGINES",
    "TrainConfig",
    "TrainResult",
    "TrainingDivergedError",
    "TreeOptions",
    "auto_threads",
    "available_cores",
    "config_from_options",
    "config_with",
    "default_threads",
    "option_names",
]

#: learning rate used when ``lr=None``, per optimiser
#: (for ``"lbfgs"``: the first trial step of every line search, as a multiple of the direction)
DEFAULT_LR = {"gd": 0.1, "adam": 1e-3, "lbfgs": 1.0}
#: maximum number of epochs used when ``epochs=None``, per optimiser (``"lbfgs"``: iterations)
DEFAULT_EPOCHS = {"gd": 1000, "adam": 300, "lbfgs": 500}
OPTIMIZERS = ("gd", "adam", "lbfgs")
#: what the shared options mean for boosted trees when left at None: the learning rate, the
#: number of boosting rounds and the early-stopping patience (rounds without improvement)
TREE_DEFAULTS: dict[str, Any] = {"lr": 0.05, "rounds": 500, "patience": 50}
#: the engines that grow boosted trees (``TreeOptions.engine``); each is a trainer of
#: :mod:`ndcglab.gbdt` with the signature of :func:`ndcglab.gbdt.train_gbdt`
TREE_ENGINES = ("lightgbm", "xgboost")
#: training data with fewer feature values (documents x features) than this trains on one
#: torch thread when ``num_threads=None`` (see :func:`auto_threads` and docs/training.md, "Threads")
SMALL_DATA_CELLS = 10_000_000


def default_threads(n_docs: int, n_features: int) -> int:
    """The thread count of a training left at ``num_threads=None`` (``--threads`` not given),
    for torch and both tree engines alike: :func:`auto_threads` of the training data with the
    cores of :func:`available_cores`."""
    return auto_threads(n_docs, n_features, available=available_cores())


def auto_threads(n_docs: int, n_features: int, *, available: int, load: float | None = None) -> int:
    """The thread count of a run with ``num_threads=None``: torch's, LightGBM's and XGBoost's
    (one rule, :func:`default_threads`).

    * 1 for small data: fewer than :data:`SMALL_DATA_CELLS` feature values
      (``n_docs * n_features``) - each operation is too short for several threads to pay off;
    * otherwise the idle cores: ``available`` (the cores this process may use,
      :func:`available_cores`; for torch at most its own thread count) minus the one-minute load
      average (``load``, read from ``os.getloadavg()`` when None), rounded down, at least 1 -
      threads that wait for busy cores make every step slower (LightGBM's and XGBoost's OpenMP
      threads spin while they wait), so a busy machine gets fewer threads.

    Measured by ``benchmarks/bench_threads.py`` (torch) and ``benchmarks/bench_threads_gbdt.py``
    (trees); the numbers are in docs/training.md, "Threads".
    """
    import os

    if int(n_docs) * int(n_features) < SMALL_DATA_CELLS:
        return 1
    if load is None:
        try:
            load = os.getloadavg()[0]
        except (OSError, AttributeError):  # pragma: no cover - platforms without a load average
            load = 0.0
    return max(1, min(int(available), math.floor(available - float(load))))


class TrainingDivergedError(NdcglabError):
    """The training objective became infinite or NaN: ``epoch`` (1-based) and ``value`` say
    when and what. Callers that train several models (``ndcglab cv``) report such a run as failed
    and go on with the others."""

    def __init__(self, message: str, *, epoch: int, value: float) -> None:
        super().__init__(message)
        self.epoch = int(epoch)
        self.value = float(value)


@dataclass
class TreeOptions:
    """The options of boosted trees (``model="gbdt"``) that gradient models do not have.

    ``engine`` (one of :data:`TREE_ENGINES`) grows the trees; ``num_leaves`` and
    ``min_data_in_leaf`` shape them; ``hessian`` is how second derivatives of the loss are
    obtained (:data:`ndcglab.gbdt.HESSIAN_MODES`); ``params`` holds any other parameter of the
    engine by its own name (``lambda_l2``, ``feature_fraction`` ...; the LightGBM aliases
    ``n_estimators``, ``min_child_samples`` ... are read as the options they name). The shared
    options (``lr``, ``rounds``, ``patience``, ``validation_measure``, ``preset``, ``seed``,
    ``num_threads``) stay on :class:`TrainConfig`.
    """

    engine: str = "lightgbm"
    num_leaves: int = 31
    min_data_in_leaf: int = 20
    hessian: str = "auto"
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.engine = str(self.engine).lower()
        if self.engine not in TREE_ENGINES:
            raise SpecError(
                f"unknown tree engine {self.engine!r}; known: {', '.join(TREE_ENGINES)}"
            )
        if int(self.num_leaves) < 2:
            raise SpecError(f"num_leaves must be at least 2, got {self.num_leaves}")
        if int(self.min_data_in_leaf) < 0:
            raise SpecError(f"min_data_in_leaf must be non-negative, got {self.min_data_in_leaf}")
        self.params = dict(self.params or {})


@dataclass
class TrainConfig:
    """Every training option with its default (what each does: :mod:`ndcglab.training.trainer`).

    ``loss=None`` becomes the model kind's default loss (:data:`ndcglab.training.kinds.KINDS`:
    ``"listnet"``, ``"adarank"`` for AdaRank); ``lr=None`` and ``epochs=None`` take the
    optimiser's entry of :data:`DEFAULT_LR` / :data:`DEFAULT_EPOCHS`, and for boosted trees
    ``lr``, ``rounds`` and ``patience`` left at None take :data:`TREE_DEFAULTS`. ``trees`` holds
    the trees' own options (:class:`TreeOptions`, or a dict of its fields).

    The self-attention model (``model="attention"``) takes ``hidden`` (its input projection),
    ``activation``, ``dropout``, ``heads``, ``blocks``, ``ff_width``, ``layer_norm`` (``pre`` or
    ``post``) and ``input_norm``. The DASALC recipe: ``normalize="log1p_zscore"``, ``noise`` (σ of
    the Gaussian noise added to the normalised training features; 0: none) and ``ensemble``
    (models of that many seeds, their scores averaged) — see docs/attention.md.
    """

    loss: str | None = None
    model: str = MODEL_KINDS[0]  # the table's first kind: linear
    optimizer: str = "adam"
    lr: float | None = None
    epochs: int | None = None
    batch_size: int | None = 16
    tol: float = 1e-6
    gtol: float = 1e-5
    l2: float | None = None
    C: float | None = None
    normalize: str = "zscore"
    validation_measure: str = "ndcg@10"
    preset: str | None = "letor4"
    patience: int | None = None
    seed: int = 0
    device: str = "cpu"
    hidden: tuple[int, ...] = (64, 32)
    activation: str = "relu"
    dropout: float = 0.0
    init: str = "zeros"
    heads: int = 2
    blocks: int = 2
    ff_width: int = 128
    layer_norm: str = "pre"
    input_norm: bool = False
    noise: float = 0.0
    ensemble: int = 1
    batching: str = "bucket"
    skip_uninformative: bool = True
    rounds: int | None = None
    max_padded: int = 4_000_000
    gd_bucket: int | None = 256
    eval_every: int = 1
    dtype: str = "float32"
    num_threads: int | None = None  # None: auto_threads(...) of the training data and machine
    trees: TreeOptions = field(default_factory=TreeOptions)

    def __post_init__(self) -> None:
        self.optimizer = str(self.optimizer).lower()
        if self.optimizer not in OPTIMIZERS:
            raise SpecError(f"unknown optimizer {self.optimizer!r}; known: {', '.join(OPTIMIZERS)}")
        if self.normalize not in NORMALIZATIONS:
            raise SpecError(
                f"unknown normalisation {self.normalize!r}; known: {', '.join(NORMALIZATIONS)}"
            )
        if self.epochs is not None and int(self.epochs) < 1:
            raise SpecError(f"epochs must be at least 1, got {self.epochs}")
        if self.lr is not None and not float(self.lr) > 0:
            raise SpecError(f"lr must be positive, got {self.lr}")
        if self.patience is not None and int(self.patience) < 1:
            raise SpecError(f"patience must be at least 1 (or None), got {self.patience}")
        if self.dtype not in ("float32", "float64"):
            raise SpecError(f"dtype must be float32 or float64, got {self.dtype!r}")
        if int(self.eval_every) < 1:
            raise SpecError(f"eval_every must be at least 1, got {self.eval_every}")
        if self.num_threads is not None and int(self.num_threads) < 1:
            raise SpecError(f"num_threads must be at least 1 (or None), got {self.num_threads}")
        if not float(self.tol) >= 0:
            raise SpecError(f"tol must be non-negative, got {self.tol}")
        if not float(self.gtol) >= 0:
            raise SpecError(f"gtol must be non-negative, got {self.gtol}")
        if self.C is not None and not float(self.C) > 0:
            raise SpecError(f"C must be positive, got {self.C}")
        if self.rounds is not None and int(self.rounds) < 1:
            raise SpecError(f"rounds must be at least 1 (or None), got {self.rounds}")
        if not (math.isfinite(float(self.noise)) and float(self.noise) >= 0):
            raise SpecError(f"noise must be a standard deviation >= 0, got {self.noise}")
        if int(self.ensemble) < 1:
            raise SpecError(
                f"ensemble must be at least 1 (models of different seeds), got {self.ensemble}"
            )
        self.hidden = tuple(int(h) for h in self.hidden)
        if isinstance(self.trees, dict):
            self.trees = TreeOptions(**self.trees)
        from .kinds import get_kind

        kind = get_kind(self.model)
        self.model = kind.name
        if self.loss is None:
            self.loss = kind.default_loss

    @property
    def n_epochs(self) -> int:
        """The epoch cap: ``epochs``, or :data:`DEFAULT_EPOCHS` of the optimiser."""
        return int(self.epochs) if self.epochs is not None else DEFAULT_EPOCHS[self.optimizer]

    @property
    def learning_rate(self) -> float:
        return float(self.lr) if self.lr is not None else DEFAULT_LR[self.optimizer]

    def tree_setting(self, name: str) -> Any:
        """``lr``, ``rounds`` or ``patience`` as boosted trees use it: the value given, else
        :data:`TREE_DEFAULTS`."""
        value = getattr(self, name)
        return TREE_DEFAULTS[name] if value is None else value

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["hidden"] = list(self.hidden)
        d["learning_rate"] = self.learning_rate
        d["max_epochs"] = self.n_epochs
        return d


@dataclass
class TrainResult:
    """What :func:`train` returns.

    ``trained`` (a :class:`~ndcglab.models.TrainedModel`: model + normalisation + metadata),
    ``history`` (one dict per epoch: ``epoch``, ``loss``, ``valid`` (or None), ``seconds``),
    ``best_epoch`` (1-based; the last epoch without validation), ``best_score`` (validation value
    or None), ``stop_reason`` (``converged``, ``stalled``, ``early_stopping``, ``max_epochs``,
    ``rounds``), ``epochs_run`` and ``measure`` (the validation measure's printed name or None).

    ``converged`` (``"gd"`` and ``"lbfgs"``; None for Adam and AdaRank): whether the optimiser's
    stopping rule was met (``stop_reason == "converged"``); ``grad_norm``: the max-norm of the
    gradient of the training objective at the returned weights (None for Adam and AdaRank);
    ``final_loss``: the training objective at the returned weights (same rule).
    """

    trained: Any
    history: list[dict[str, Any]] = field(default_factory=list)
    best_epoch: int = 0
    best_score: float | None = None
    stop_reason: str = ""
    epochs_run: int = 0
    measure: str | None = None
    converged: bool | None = None
    grad_norm: float | None = None
    final_loss: float | None = None

    @property
    def model(self) -> Any:
        """The scoring model: the torch module of a gradient or AdaRank model, the trees'
        model itself for boosted trees."""
        return getattr(self.trained, "model", self.trained)

    def predict(self, data: Any) -> Any:
        """The trained model's scores of ``data`` (``trained.predict(data)``)."""
        return self.trained.predict(data)


def config_with(config: TrainConfig | None, **options: Any) -> TrainConfig:
    """``config`` (default ``TrainConfig()``) with the fields in ``options`` replaced; an unknown
    option name is a :class:`~ndcglab.errors.SpecError` listing the known ones."""
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise SpecError(
            f"unknown training option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return dataclasses.replace(config or TrainConfig(), **options)


def _tree_option_names() -> frozenset[str]:
    return frozenset(f.name for f in dataclasses.fields(TreeOptions)) - {"params"}


def option_names() -> frozenset[str]:
    """Every name :func:`config_from_options` takes: the fields of :class:`TrainConfig` (but
    ``trees``), of :class:`TreeOptions` (but ``params``) and ``tree_params``."""
    fields = {f.name for f in dataclasses.fields(TrainConfig)} - {"trees"}
    return frozenset(fields | _tree_option_names() | {"tree_params"})


def config_from_options(options: dict[str, Any], *, base: TrainConfig | None = None) -> TrainConfig:
    """The one place a :class:`TrainConfig` is built from flat keyword options: the parameters of
    :class:`~ndcglab.estimator.NDCGRanker`, the parsed arguments of ``ndcglab train``/``cv`` and
    the settings of a ``reproduce`` experiment all come through here.

    ``options`` holds fields of :class:`TrainConfig` and of :class:`TreeOptions` by name
    (``num_leaves``, ``hessian``, ``engine``; ``tree_params`` for :attr:`TreeOptions.params`);
    ``None`` for a tree option means its default. ``hidden`` may be any sequence. An unknown name
    is a :class:`~ndcglab.errors.SpecError` listing the known ones.
    """
    config_names = {f.name for f in dataclasses.fields(TrainConfig)} - {"trees"}
    tree_names = _tree_option_names()
    known = option_names()
    unknown = sorted(set(options) - known)
    if unknown:
        raise SpecError(
            f"unknown training option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    trees = {k: options[k] for k in tree_names if k in options and options[k] is not None}
    if options.get("tree_params") is not None:
        trees["params"] = dict(options["tree_params"])
    flat = {k: v for k, v in options.items() if k in config_names}
    if flat.get("hidden") is not None:
        flat["hidden"] = tuple(flat["hidden"])
    if flat.get("preset") is not None and str(flat["preset"]).lower() == "none":
        flat["preset"] = None
    if base is None:
        return TrainConfig(**flat, trees=TreeOptions(**trees))
    if trees:
        flat["trees"] = dataclasses.replace(base.trees, **trees)
    return dataclasses.replace(base, **flat)
