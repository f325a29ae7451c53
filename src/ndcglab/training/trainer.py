"""Training a ranking model on a :class:`~ndcglab.data.RankingDataset`.

:func:`train` minimises the mean over training queries of a registered loss (one value per list,
:func:`ndcglab.losses.get_loss`) plus an optional L2 penalty ``l2 · ‖w‖²`` on the weights (not the
biases), with one of two optimisers:

* ``"gd"`` — full-batch gradient descent, the papers' protocol (Lu et al.; Ravikumar et al.): one
  step per epoch on the gradient of the whole training objective; stops when the objective changes
  by less than ``tol`` between two epochs (``|L_t − L_{t−1}| < tol``), or after ``epochs`` epochs;
* ``"adam"`` — minibatch Adam over batches of ``batch_size`` queries (see
  :mod:`ndcglab.training.batching`); ``tol`` is not used (use ``patience``).

Model selection: with a validation set, the model is scored after every epoch by
``validation_measure`` under ``preset`` (:func:`ndcglab.measures.evaluate_arrays`, so exactly the
evaluation library's conventions); the best epoch's weights are kept (ties: the earlier epoch) and,
with ``patience``, training stops after that many epochs without improvement. Without a validation
set the last epoch's weights are kept.

Conventions stated once:

* features are normalised by ``normalize`` (``none``, ``query_minmax``, ``zscore``; statistics from
  the training data); NaN features are filled with 0 after normalisation;
* with ``skip_uninformative=True`` (default), training queries whose documents all share one label
  are left out of training (they carry no ranking information; e.g. MQ2008's queries without any
  relevant document) — never out of validation or evaluation;
* RankSVM (``loss="ranksvm(l2=...)"``): mean over lists of the mean pairwise hinge plus
  ``l2 · ‖w‖²`` with ``l2`` read from the loss spec (default 0.001), which is the SVM
  ``½‖w‖² + C Σ_q hinge_q`` with ``C = 1/(2·l2·Q)``; the ``l2`` option overrides it and the ``C``
  option sets ``l2 = 1/(2·C·Q)`` (Q = training queries used);
* randomness — initialisation, batch order, dropout and the loss's ``torch.Generator`` (ListMLE's
  random tie-breaking) — is drawn from seeds derived from ``(seed, epoch)`` inside
  ``torch.random.fork_rng`` (the caller's global RNG is left untouched): two runs with the same seed
  give identical weights, and a run resumed from a checkpoint gives the same weights as an
  uninterrupted one;
* memory does not grow with epochs: the history holds floats, the best weights one copy.

AdaRank (``model="adarank"`` or ``loss="adarank"``) is trained by its own boosting algorithm
(:class:`ndcglab.models.AdaRank`) with ``validation_measure`` inside it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._compat import torch as _torch
from ..data.dataset import RankingDataset, boundaries_from_group
from ..errors import NdcglabError, SpecError
from .batching import BatchPlan
from .checkpoint import load_checkpoint, save_checkpoint
from .normalize import NORMALIZATIONS, Normalizer

torch = _torch()

__all__ = ["DEFAULT_EPOCHS", "DEFAULT_LR", "TrainConfig", "TrainResult", "resolve_device", "train"]

#: learning rate used when ``lr=None``, per optimiser
DEFAULT_LR = {"gd": 0.1, "adam": 1e-3}
#: maximum number of epochs used when ``epochs=None``, per optimiser
DEFAULT_EPOCHS = {"gd": 1000, "adam": 300}
OPTIMIZERS = ("gd", "adam")


@dataclass
class TrainConfig:
    """Every training option (see the module docstring for what each does)."""

    loss: str | None = None
    model: str = "linear"
    optimizer: str = "adam"
    lr: float | None = None
    epochs: int | None = None
    batch_size: int | None = 16
    tol: float = 1e-6
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
    batching: str = "bucket"
    skip_uninformative: bool = True
    rounds: int | None = None
    max_padded: int = 4_000_000
    gd_bucket: int | None = 256
    eval_every: int = 1
    dtype: str = "float32"
    num_threads: int | None = None

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
        if self.C is not None and not float(self.C) > 0:
            raise SpecError(f"C must be positive, got {self.C}")
        self.hidden = tuple(int(h) for h in self.hidden)
        self.model = str(self.model).lower()
        if self.loss is None:
            self.loss = "adarank" if self.model == "adarank" else "listnet"

    @property
    def n_epochs(self) -> int:
        """The epoch cap: ``epochs``, or :data:`DEFAULT_EPOCHS` of the optimiser."""
        return int(self.epochs) if self.epochs is not None else DEFAULT_EPOCHS[self.optimizer]

    @property
    def learning_rate(self) -> float:
        return float(self.lr) if self.lr is not None else DEFAULT_LR[self.optimizer]

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
    or None), ``stop_reason`` (``converged``, ``early_stopping``, ``max_epochs``, ``rounds``),
    ``epochs_run`` and ``measure`` (the validation measure's printed name or None).
    """

    trained: Any
    history: list[dict[str, Any]] = field(default_factory=list)
    best_epoch: int = 0
    best_score: float | None = None
    stop_reason: str = ""
    epochs_run: int = 0
    measure: str | None = None

    @property
    def model(self) -> Any:
        return self.trained.model


def resolve_device(device: str | Any) -> Any:
    """``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"`` (CUDA if available) -> ``torch.device``."""
    if isinstance(device, torch.device):
        dev = device
    else:
        name = str(device).lower()
        if name == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        try:
            dev = torch.device(name)
        except RuntimeError:
            raise SpecError(f"unknown device {device!r}; known: cpu, cuda, cuda:N, auto") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise SpecError(
            f"device {str(device)!r} was requested but CUDA is not available to torch "
            f"{torch.__version__}. Fix: use device='cpu' or 'auto'"
        )
    if dev.type not in ("cpu", "cuda"):
        raise SpecError(f"unsupported device {device!r}; known: cpu, cuda, auto")
    return dev


def _derive_seed(*parts: int) -> int:
    return int(
        np.random.SeedSequence([int(p) for p in parts]).generate_state(1, dtype=np.uint64)[0] >> 1
    )


def _informative(labels: np.ndarray, boundaries: np.ndarray) -> np.ndarray:
    """Indices of queries with at least two distinct labels."""
    b = np.asarray(boundaries, dtype=np.int64)
    lengths = np.diff(b)
    out = np.zeros(len(lengths), dtype=bool)
    nz = lengths > 0
    if nz.any():
        lo = np.minimum.reduceat(labels, b[:-1][nz])
        hi = np.maximum.reduceat(labels, b[:-1][nz])
        out[nz] = hi > lo
    return np.flatnonzero(out)


def _digest(ds: RankingDataset | None) -> str:
    if ds is None:
        return "none"
    h = hashlib.blake2b(digest_size=12)
    h.update(np.asarray(ds.features.shape, dtype=np.int64).tobytes())
    h.update(np.ascontiguousarray(ds.labels).tobytes())
    h.update(np.ascontiguousarray(ds.boundaries).tobytes())
    step = max(1, ds.n_docs // 20000)
    h.update(np.ascontiguousarray(ds.features[::step]).tobytes())
    return h.hexdigest()


def _weights(model: Any) -> list[Any]:
    """Parameters that the L2 penalty applies to (weights, not biases)."""
    return [p for n, p in model.named_parameters() if p.requires_grad and not n.endswith("bias")]


def _show_progress(progress: bool | None) -> bool:
    if progress is None:
        return sys.stderr.isatty()
    return bool(progress) and sys.stderr.isatty()


def train(
    train_data: RankingDataset,
    config: TrainConfig | None = None,
    *,
    validation: RankingDataset | None = None,
    checkpoint_dir: str | os.PathLike[str] | None = None,
    resume: bool = False,
    progress: bool | None = None,
    callback: Callable[[dict[str, Any]], None] | None = None,
    **options: Any,
) -> TrainResult:
    """Train a model on ``train_data``; see the module docstring.

    ``config`` holds the options (:class:`TrainConfig`); keyword ``options`` override its fields.
    ``checkpoint_dir`` writes an atomic checkpoint after every epoch; ``resume=True`` continues
    from it (a run's checkpoint only: options and data are fingerprinted). ``progress``: a tqdm
    bar on stderr (``None`` = only when stderr is a terminal). ``callback(info)`` is called after
    every epoch (after the checkpoint) with that epoch's history entry.
    """
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = sorted(set(options) - known)
    if unknown:
        raise SpecError(
            f"unknown training option(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    cfg = dataclasses.replace(config or TrainConfig(), **options)
    if not isinstance(train_data, RankingDataset):
        raise SpecError("train_data must be a RankingDataset. Fix: see ndcglab.data.load_dataset")
    if validation is not None and validation.n_features != train_data.n_features:
        raise NdcglabError(
            f"the validation set has {validation.n_features} features but the training set has "
            f"{train_data.n_features}. Fix: use files of the same collection"
        )
    from ..losses import get_loss
    from ..measures.scorer import MeasureScorer

    loss = get_loss(cfg.loss)
    device = resolve_device(cfg.device)
    dtype = torch.float64 if cfg.dtype == "float64" else torch.float32
    boosting = getattr(loss, "kind", "differentiable") == "boosting"
    if boosting and cfg.model not in ("linear", "adarank"):
        raise SpecError(
            f"loss {cfg.loss!r} is trained by boosting (AdaRank) and gives a linear model; "
            f"model={cfg.model!r} cannot be used with it. Fix: model='linear' or 'adarank'"
        )
    if cfg.model == "adarank" and not boosting:
        raise SpecError(
            f"model 'adarank' is trained by boosting, not with the loss {cfg.loss!r}. Fix: "
            "loss='adarank' (options: adarank(measure=ndcg|map,rounds=T)@k), or another model"
        )
    scorer = MeasureScorer(cfg.validation_measure, cfg.preset)
    normalizer = Normalizer.fit(cfg.normalize, train_data.features)

    keep = np.arange(train_data.n_queries)
    if cfg.skip_uninformative:
        keep = _informative(train_data.labels, train_data.boundaries)
        if len(keep) == 0:
            raise NdcglabError(
                "no training query has two different labels, so there is nothing to learn. "
                "Fix: check the labels, or pass skip_uninformative=False"
            )
    work = _Work(
        raw=train_data.features,
        normalizer=normalizer,
        rows=None if len(keep) == train_data.n_queries else _doc_rows(train_data, keep),
        labels=train_data.labels,
        boundaries=train_data.boundaries,
        x_val=None
        if validation is None
        else normalizer.transform(validation.features, validation.boundaries),
    )
    if work.rows is not None:
        work.labels = train_data.labels[work.rows]
        work.boundaries = boundaries_from_group(train_data.query_lengths[keep])

    meta: dict[str, Any] = {
        "loss": str(getattr(loss, "name", cfg.loss)),
        "training": cfg.to_dict(),
        "seed": cfg.seed,
        "feature_names": train_data.feature_names,
        "training_data": train_data.source or f"{train_data.n_queries} queries",
        "validation_data": None
        if validation is None
        else (validation.source or f"{validation.n_queries} queries"),
        "n_train_queries_used": len(keep),
        "training_measure": scorer.name,
    }
    if boosting:
        return _train_adarank(cfg, loss, scorer, normalizer, meta, work, validation, callback)

    skip = ("epochs", "max_epochs", "device", "num_threads")
    fingerprint_src = {k: v for k, v in cfg.to_dict().items() if k not in skip}
    fingerprint_src["train"] = _digest(train_data)
    fingerprint_src["validation"] = _digest(validation)
    fingerprint_text = json.dumps(fingerprint_src, sort_keys=True, default=str)
    fingerprint = hashlib.blake2b(fingerprint_text.encode(), digest_size=16).hexdigest()
    threads_before = torch.get_num_threads()
    if cfg.num_threads is not None:
        torch.set_num_threads(int(cfg.num_threads))
    try:
        return _train_differentiable(
            cfg,
            loss,
            scorer,
            normalizer,
            meta,
            work,
            validation,
            device,
            dtype,
            (fingerprint, fingerprint_text),
            checkpoint_dir,
            resume,
            progress,
            callback,
        )
    finally:
        torch.set_num_threads(threads_before)


@dataclass
class _Work:
    """The training data as training uses it.

    ``raw`` are the un-normalised features of *all* training documents and ``normalizer`` the
    fitted normalisation, applied block by block where the features are arranged for training
    (so no full normalised copy exists beside the arranged one); ``rows`` (or None = all) are the
    documents of the queries used; ``labels``/``boundaries`` describe those queries only.
    """

    raw: Any
    normalizer: Normalizer
    rows: Any
    labels: np.ndarray
    boundaries: np.ndarray
    x_val: Any

    @property
    def n_queries(self) -> int:
        return len(self.boundaries) - 1

    @property
    def n_features(self) -> int:
        return int(self.raw.shape[1])

    def features(self) -> np.ndarray:
        """The normalised features of the documents used (one new float32 array)."""
        x = self.raw if self.rows is None else self.raw[self.rows]
        return self.normalizer.transform(x, self.boundaries)


def _train_differentiable(
    cfg: TrainConfig,
    loss: Any,
    scorer: Any,
    normalizer: Normalizer,
    meta: dict[str, Any],
    work: _Work,
    validation: RankingDataset | None,
    device: Any,
    dtype: Any,
    fingerprint_pair: tuple[str, str],
    checkpoint_dir: str | os.PathLike[str] | None,
    resume: bool,
    progress: bool | None,
    callback: Callable[[dict[str, Any]], None] | None,
) -> TrainResult:
    from ..models import TrainedModel, make_model

    fingerprint, fingerprint_text = fingerprint_pair
    n_q = work.n_queries
    n_features = work.n_features
    l2 = _l2_weight(cfg, loss, n_q)
    lr = cfg.learning_rate
    fork_devices = [device.index or 0] if device.type == "cuda" else []
    with torch.random.fork_rng(devices=fork_devices):
        torch.manual_seed(_derive_seed(cfg.seed, 0))
        model_kw: dict[str, Any] = {}
        if cfg.model == "linear":
            model_kw = {"init": cfg.init}
        elif cfg.model == "mlp":
            model_kw = {"hidden": cfg.hidden, "activation": cfg.activation, "dropout": cfg.dropout}
        model = make_model(cfg.model, n_features, **model_kw).to(device=device, dtype=dtype)
        params = [p for p in model.parameters() if p.requires_grad]
        if cfg.optimizer == "gd":
            opt = torch.optim.SGD(params, lr=lr)
        else:
            opt = torch.optim.Adam(params, lr=lr)
        plan = BatchPlan(
            work.raw,
            work.labels,
            work.boundaries,
            batch_size=cfg.gd_bucket if cfg.optimizer == "gd" else cfg.batch_size,
            batching="bucket" if cfg.optimizer == "gd" else cfg.batching,
            max_padded=cfg.max_padded,
            seed=cfg.seed,
            shuffle=cfg.optimizer != "gd",
            device=device,
            dtype=dtype,
            rows=work.rows,
            transform=work.normalizer.transform,
        )
        xv = None if work.x_val is None else torch.as_tensor(work.x_val, dtype=dtype, device=device)
        work.raw = work.x_val = None  # the plan holds its own arranged, normalised copy
        gen = torch.Generator(device=device)
        decay = _weights(model)

        history: list[dict[str, Any]] = []
        start = 0
        best_score: float | None = None
        best_epoch = 0
        best_state: dict[str, Any] | None = None
        prev_loss: float | None = None
        bad = 0
        stop_reason = ""
        finished = False
        if resume and checkpoint_dir is not None:
            state = load_checkpoint(checkpoint_dir, fingerprint)
            if state is not None:
                model.load_state_dict(state["model"])
                opt.load_state_dict(state["optimizer"])
                start = int(state["epoch"])
                history = list(state["history"])
                best_score = state["best_score"]
                best_epoch = int(state["best_epoch"])
                best_state = state["best_state"]
                if best_state is not None:
                    best_state = {k: v.to(device) for k, v in best_state.items()}
                prev_loss = state["prev_loss"]
                bad = int(state["bad"])
                stop_reason = state["stop_reason"]
                finished = bool(state["finished"]) and not (
                    stop_reason == "max_epochs" and cfg.n_epochs > start
                )
                torch.set_rng_state(state["torch_rng"])
                gen.set_state(state["generator"])
        show = _show_progress(progress)
        epochs = range(start, cfg.n_epochs) if not finished else range(0)
        bar = None
        if show and len(epochs):
            from tqdm.auto import tqdm

            bar = tqdm(
                total=cfg.n_epochs,
                initial=start,
                desc=f"train {meta['loss']}",
                file=sys.stderr,
                leave=False,
            )
        try:
            for epoch in epochs:
                t0 = time.perf_counter()
                torch.manual_seed(_derive_seed(cfg.seed, epoch, 1))
                gen.manual_seed(_derive_seed(cfg.seed, epoch, 2))
                model.train()
                total = torch.zeros((), dtype=torch.float64, device=device)
                batches = plan.epoch_batches(epoch)
                if cfg.optimizer == "gd":
                    opt.zero_grad(set_to_none=True)
                    for batch in batches:
                        values = loss(
                            batch.pad(model(batch.features(plan.x))),
                            batch.labels,
                            batch.mask,
                            generator=gen,
                        )
                        part = values.sum() / n_q
                        part.backward()
                        total += part.detach().double()
                    if l2 > 0:
                        reg = l2 * sum((p * p).sum() for p in decay)
                        reg.backward()
                        total += reg.detach().double()
                    opt.step()
                else:
                    for batch in batches:
                        opt.zero_grad(set_to_none=True)
                        values = loss(
                            batch.pad(model(batch.features(plan.x))),
                            batch.labels,
                            batch.mask,
                            generator=gen,
                        )
                        obj = values.mean()
                        if l2 > 0:
                            reg = l2 * sum((p * p).sum() for p in decay)
                            obj = obj + reg
                            total += reg.detach().double() * batch.n_queries / n_q
                        obj.backward()
                        opt.step()
                        total += values.detach().double().sum() / n_q
                epoch_loss = float(total)
                if not math.isfinite(epoch_loss):
                    raise NdcglabError(
                        f"the training loss became {epoch_loss} at epoch {epoch + 1} (loss "
                        f"{meta['loss']}, lr {lr}). Fix: lower the learning rate (--lr) or "
                        "normalise the features (--normalize zscore)"
                    )
                valid = None
                if xv is not None and (
                    (epoch + 1) % cfg.eval_every == 0 or epoch + 1 == cfg.n_epochs
                ):
                    model.eval()
                    with torch.no_grad():
                        sv = model(xv).double().cpu().numpy()
                    valid = scorer.mean(validation.labels, sv, validation.boundaries)  # type: ignore[union-attr]
                    if best_score is None or valid > best_score:
                        best_score, best_epoch, bad = valid, epoch + 1, 0
                        best_state = {k: v.detach().clone() for k, v in model.state_dict().items()}
                    else:
                        bad += 1
                elif xv is None:
                    best_epoch = epoch + 1
                entry = {
                    "epoch": epoch + 1,
                    "loss": epoch_loss,
                    "valid": valid,
                    "seconds": time.perf_counter() - t0,
                }
                history.append(entry)
                if (
                    cfg.optimizer == "gd"
                    and prev_loss is not None
                    and abs(epoch_loss - prev_loss) < cfg.tol
                ):
                    stop_reason, finished = "converged", True
                elif valid is not None and cfg.patience is not None and bad >= cfg.patience:
                    stop_reason, finished = "early_stopping", True
                elif epoch + 1 >= cfg.n_epochs:
                    stop_reason, finished = "max_epochs", True
                prev_loss = epoch_loss
                if checkpoint_dir is not None:
                    save_checkpoint(
                        checkpoint_dir,
                        {
                            "fingerprint": fingerprint,
                            "fingerprint_text": fingerprint_text,
                            "epoch": epoch + 1,
                            "model": model.state_dict(),
                            "optimizer": opt.state_dict(),
                            "torch_rng": torch.get_rng_state(),
                            "generator": gen.get_state().cpu(),
                            "best_score": best_score,
                            "best_epoch": best_epoch,
                            "best_state": best_state,
                            "history": history,
                            "prev_loss": prev_loss,
                            "bad": bad,
                            "stop_reason": stop_reason,
                            "finished": finished,
                        },
                    )
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(
                        loss=f"{epoch_loss:.5g}", valid="-" if valid is None else f"{valid:.4f}"
                    )
                if callback is not None:
                    callback(dict(entry))
                if finished:
                    break
        finally:
            if bar is not None:
                bar.close()
    if best_state is not None:
        model.load_state_dict(best_state)
    model.eval()
    meta.update(
        {
            "best_epoch": best_epoch,
            "best_score": best_score,
            "stop_reason": stop_reason,
            "epochs_run": len(history),
            "l2": l2,
        }
    )
    trained = TrainedModel(model=model.cpu(), normalizer=normalizer, metadata=meta)
    return TrainResult(
        trained=trained,
        history=history,
        best_epoch=best_epoch,
        best_score=best_score,
        stop_reason=stop_reason,
        epochs_run=len(history),
        measure=scorer.name if validation is not None else None,
    )


def _l2_weight(cfg: TrainConfig, loss: Any, n_queries: int) -> float:
    """L2 weight: the ``l2`` option, else from ``C``, else the loss's ``l2`` (RankSVM), else 0."""
    if cfg.l2 is not None:
        return float(cfg.l2)
    if cfg.C is not None:
        return 1.0 / (2.0 * float(cfg.C) * n_queries)
    params = getattr(loss, "params", None) or {}
    return float(params.get("l2", 0.0) or 0.0)


def _doc_rows(ds: RankingDataset, queries: np.ndarray) -> np.ndarray:
    from ..data.dataset import _segment_index

    return _segment_index(ds.boundaries[:-1][queries], ds.query_lengths[queries])


def _train_adarank(
    cfg: TrainConfig,
    loss: Any,
    scorer: Any,
    normalizer: Normalizer,
    meta: dict[str, Any],
    work: _Work,
    validation: RankingDataset | None,
    callback: Callable[[dict[str, Any]], None] | None,
) -> TrainResult:
    from ..models import AdaRank, TrainedModel

    params = getattr(loss, "params", None) or {}
    inner = str(params.get("measure", "ndcg"))
    cutoff = getattr(loss, "cutoff", None)
    if cutoff is not None:
        inner += f"@{cutoff}"
    model = AdaRank(
        work.n_features,
        measure=inner,
        preset=cfg.preset,
        rounds=int(cfg.rounds if cfg.rounds is not None else params.get("rounds", 100)),
        patience=cfg.patience or 20,
    )
    history: list[dict[str, Any]] = []

    def on_round(info: dict[str, Any]) -> None:
        entry = {
            "epoch": info["round"],
            "loss": 1.0 - info["train"],
            "valid": info["score"] if validation is not None else None,
            "feature": info["feature"],
            "alpha": info["alpha"],
        }
        history.append(entry)
        if callback is not None:
            callback(dict(entry))

    val = None if validation is None else (work.x_val, validation.labels, validation.boundaries)
    model.fit(
        work.features(),
        work.labels,
        work.boundaries,
        validation=val,
        selection=scorer,
        callback=on_round,
    )
    best = model.best_round_
    best_score = None
    if validation is not None and best > 0:
        best_score = float(history[best - 1]["valid"])
    stop = "rounds" if len(history) >= model.rounds else "early_stopping"
    meta.update(
        {
            "best_epoch": best,
            "best_score": best_score,
            "stop_reason": stop,
            "epochs_run": len(history),
            "l2": 0.0,
        }
    )
    meta["adarank_measure"] = model.measure
    return TrainResult(
        trained=TrainedModel(model=model.eval(), normalizer=normalizer, metadata=meta),
        history=history,
        best_epoch=best,
        best_score=best_score,
        stop_reason=stop,
        epochs_run=len(history),
        measure=scorer.name if validation is not None else None,
    )
