"""The gradient training loop: full-batch gradient descent or minibatch Adam over a registered loss.

:class:`GradientRun` holds one run's state — model, optimiser, batch plan, the loss's
``torch.Generator``, the history and the best-so-far — and runs it epoch by epoch:

* ``"gd"``: one step per epoch on the gradient of the whole objective (the mean loss over the
  training queries plus ``l2 · ‖w‖²``), accumulated over length buckets; stops when the objective
  changes by less than ``tol`` between two epochs;
* ``"adam"``: one Adam step per batch on the batch's mean loss plus the penalty;
* ``"lbfgs"``: one L-BFGS iteration per epoch on the same full objective as ``"gd"``
  (``torch.optim.LBFGS``, history 10, strong-Wolfe line search whose first trial step is ``lr``,
  at most 25 objective evaluations per iteration); the loss's random draws (ListMLE's tie-breaking)
  use one seed for the whole run so that the line search sees one fixed function. Stops
  ``"converged"`` when the max-norm of the objective's gradient is at most ``gtol`` or the
  objective changes by at most ``tol`` relative to its size
  (``|L_{t-1} - L_t| <= tol * max(|L_{t-1}|, |L_t|)``) with ``L_t < L_{t-1}``; ``"stalled"`` when
  an iteration leaves the objective exactly unchanged while the gradient is above ``gtol``.

For ``"gd"`` and ``"lbfgs"`` the loss recorded for an epoch is the objective at the weights the
epoch started from (the value whose gradient the step used).

Validation (every ``eval_every`` epochs and at the last one) keeps the best epoch's weights (ties:
the earlier epoch) and counts epochs without improvement for ``patience``. A checkpoint written
after every epoch holds everything :meth:`GradientRun.restore` needs to continue bit for bit.
Randomness comes from seeds derived from ``(seed, epoch)`` (:func:`derive_seed`), drawn inside
``torch.random.fork_rng`` so the caller's global RNG is left untouched. See
:mod:`ndcglab.training.trainer` for the protocol as a whole.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from .._compat import torch as _torch
from ..data.dataset import RankingDataset
from .batching import BatchPlan
from .checkpoint import load_checkpoint, save_checkpoint
from .config import TrainConfig, TrainingDivergedError, TrainResult
from .prepare import PreparedData

torch = _torch()

__all__ = ["GradientRun", "derive_seed", "l2_weight"]


def derive_seed(*parts: int) -> int:
    """A 63-bit seed derived from integers (``(seed, epoch, stream)``) by NumPy's SeedSequence."""
    return int(
        np.random.SeedSequence([int(p) for p in parts]).generate_state(1, dtype=np.uint64)[0] >> 1
    )


def l2_weight(cfg: TrainConfig, loss: Any, n_queries: int) -> float:
    """L2 weight: the ``l2`` option, else from ``C`` (``1/(2·C·Q)``), else the loss's ``l2``
    (RankSVM), else 0."""
    if cfg.l2 is not None:
        return float(cfg.l2)
    if cfg.C is not None:
        return 1.0 / (2.0 * float(cfg.C) * n_queries)
    params = getattr(loss, "params", None) or {}
    return float(params.get("l2", 0.0) or 0.0)


def _decayed(model: Any) -> list[Any]:
    """Parameters that the L2 penalty applies to (weights, not biases)."""
    return [p for n, p in model.named_parameters() if p.requires_grad and not n.endswith("bias")]


def _show_progress(progress: bool | None) -> bool:
    if progress is None:
        return sys.stderr.isatty()
    return bool(progress) and sys.stderr.isatty()


@dataclass
class _Progress:
    """The part of a run's state that a checkpoint carries besides weights and RNGs."""

    start: int = 0
    history: list[dict[str, Any]] = field(default_factory=list)
    best_score: float | None = None
    best_epoch: int = 0
    best_state: dict[str, Any] | None = None
    prev_loss: float | None = None
    bad: int = 0
    stop_reason: str = ""
    finished: bool = False


class GradientRun:
    """One gradient training run (see the module docstring).

    ``work`` is the prepared training data, ``meta`` the model file's metadata so far (``loss``
    is read from it, the run's outcome is added), ``scorer`` the validation measure
    (:class:`~ndcglab.measures.scorer.MeasureScorer`), ``device`` a ``torch.device``.
    """

    def __init__(
        self,
        cfg: TrainConfig,
        loss: Any,
        scorer: Any,
        work: PreparedData,
        validation: RankingDataset | None,
        meta: dict[str, Any],
        device: Any,
    ) -> None:
        self.cfg = cfg
        self.loss = loss
        self.scorer = scorer
        self.work = work
        self.validation = validation
        self.meta = meta
        self.device = device
        self.dtype = torch.float64 if cfg.dtype == "float64" else torch.float32
        self.n_queries = work.n_queries
        self.l2 = l2_weight(cfg, loss, self.n_queries)
        self.lr = cfg.learning_rate
        self.state = _Progress()
        self.first_eval: dict[str, float] = {}

    # ------------------------------------------------------------------ set-up
    def _seed_global(self, seed: int) -> None:
        """Seed the global RNG of the CPU and of the training device only: what
        ``torch.manual_seed`` does for them, without queueing a seed for every CUDA device (which,
        before CUDA is initialised, records a stack trace per call: 2-3 ms per epoch)."""
        torch.random.default_generator.manual_seed(seed)
        if self.device.type == "cuda":
            with torch.cuda.device(self.device):
                torch.cuda.manual_seed(seed)

    def _build(self) -> None:
        """Model, optimiser, batch plan and generator; inside the forked RNG (seeded init)."""
        from ..models import make_model
        from .kinds import get_kind

        cfg, work, device, dtype = self.cfg, self.work, self.device, self.dtype
        self._seed_global(derive_seed(cfg.seed, 0))
        # the options the kinds table says this kind's constructor takes from the config
        model_kw = {name: getattr(cfg, name) for name in get_kind(cfg.model).model_options}
        self.model = make_model(cfg.model, work.n_features, **model_kw).to(
            device=device, dtype=dtype
        )
        params = [p for p in self.model.parameters() if p.requires_grad]
        if cfg.optimizer == "gd":
            self.opt = torch.optim.SGD(params, lr=self.lr)
        elif cfg.optimizer == "lbfgs":
            self.opt = torch.optim.LBFGS(
                params,
                lr=self.lr,
                max_iter=1,
                max_eval=25,
                tolerance_grad=float(cfg.gtol),
                tolerance_change=1e-20,
                history_size=10,
                line_search_fn="strong_wolfe",
            )
        else:
            self.opt = torch.optim.Adam(params, lr=self.lr)
        gd = cfg.optimizer in ("gd", "lbfgs")
        self.plan = BatchPlan(
            work.raw,
            work.labels,
            work.boundaries,
            batch_size=cfg.gd_bucket if gd else cfg.batch_size,
            batching="bucket" if gd else cfg.batching,
            max_padded=cfg.max_padded,
            seed=cfg.seed,
            shuffle=not gd,
            device=device,
            dtype=dtype,
            rows=work.rows,
            transform=work.normalizer.transform,
        )
        self.xv = (
            None if work.x_val is None else torch.as_tensor(work.x_val, dtype=dtype, device=device)
        )
        work.raw = work.x_val = None  # the plan holds its own arranged, normalised copy
        self.gen = torch.Generator(device=device)
        self.noise_gen = torch.Generator(device=device)  # the noise augmentation's own draws
        self.decay = _decayed(self.model)

    def _restore(self, saved: dict[str, Any]) -> None:
        """Continue from a checkpoint's contents (see :meth:`_checkpoint`)."""
        st = self.state
        self.model.load_state_dict(saved["model"])
        self.opt.load_state_dict(saved["optimizer"])
        st.start = int(saved["epoch"])
        st.history = list(saved["history"])
        st.best_score = saved["best_score"]
        st.best_epoch = int(saved["best_epoch"])
        st.best_state = saved["best_state"]
        if st.best_state is not None:
            st.best_state = {k: v.to(self.device) for k, v in st.best_state.items()}
        st.prev_loss = saved["prev_loss"]
        st.bad = int(saved["bad"])
        st.stop_reason = saved["stop_reason"]
        st.finished = bool(saved["finished"]) and not (
            st.stop_reason == "max_epochs" and self.cfg.n_epochs > st.start
        )
        torch.set_rng_state(saved["torch_rng"])
        self.gen.set_state(saved["generator"])

    # ------------------------------------------------------------------ one epoch
    def _batch_losses(self, batch: Any) -> Any:
        """The batch's per-list losses; the loss is bound to the batch's labels once (a bucket
        layout visits the same batches every epoch), so each call does only the scores' work.
        The padded cells are left as the gather fills them: the bound loss zeroes them itself,
        or masks them (``Loss.masks_padding``), so no value or gradient flows there."""
        if batch.bound is None or batch.bound.loss is not self.loss:
            batch.bound = self.loss.bind(batch.labels, batch.mask)
        x = batch.features(self.plan.x)
        if self.cfg.noise > 0:  # Gaussian-noise augmentation of the normalised features
            x = x + self.cfg.noise * torch.randn(
                x.shape, generator=self.noise_gen, device=x.device, dtype=x.dtype
            )
        scores = self.model.score_padded(x, batch.pad_index, batch.mask)
        return batch.bound(scores, generator=self.gen)

    def _penalty(self) -> Any:
        return self.l2 * sum((p * p).sum() for p in self.decay)

    def _train_epoch(self, epoch: int) -> float:
        """The optimisation steps of one epoch; returns the epoch's training objective."""
        cfg, n_q = self.cfg, self.n_queries
        self._seed_global(derive_seed(cfg.seed, epoch, 1))
        self.gen.manual_seed(derive_seed(cfg.seed, epoch, 2))
        self.noise_gen.manual_seed(derive_seed(cfg.seed, epoch, 3))
        self.model.train()
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        if cfg.optimizer == "lbfgs":
            return self._lbfgs_epoch(epoch)
        batches = self.plan.epoch_batches(epoch)
        if cfg.optimizer == "gd":
            total = self._full_objective(epoch, reseed=False)
            self.opt.step()
        else:
            parts = []  # each batch's per-list losses, summed once at the end of the epoch
            for batch in batches:
                self.opt.zero_grad(set_to_none=True)
                values = self._batch_losses(batch)
                obj = values.mean()
                if self.l2 > 0:
                    reg = self._penalty()
                    obj = obj + reg
                    total += reg.detach().double() * batch.n_queries / n_q
                obj.backward()
                self.opt.step()
                parts.append(values.detach())
            if parts:
                total += torch.cat(parts).double().sum() / n_q
        epoch_loss = float(total)
        self._check_finite(
            epoch_loss,
            epoch,
            f"lr {self.lr}",
            "lower the learning rate (lr=) or normalise the features (normalize='zscore')",
            ("lr", "normalize"),
        )
        return epoch_loss

    def _check_finite(
        self, epoch_loss: float, epoch: int, how: str, fix: str, parameters: tuple[str, ...]
    ) -> None:
        """A :class:`TrainingDivergedError` when the epoch's loss is not finite: the loss, the
        step rule ``how`` and the ``fix``, naming the Python ``parameters`` to change."""
        if not math.isfinite(epoch_loss):
            raise TrainingDivergedError(
                f"the training loss became {epoch_loss} at epoch {epoch + 1} (loss "
                f"{self.meta['loss']}, {how}). Fix: {fix}",
                epoch=epoch + 1,
                value=epoch_loss,
            ).naming(*parameters)

    def _full_objective(self, epoch: int, *, reseed: bool = True) -> Any:
        """The full training objective (mean loss over the training queries plus the penalty)
        with its gradient accumulated into the parameters' ``.grad``; returns the value (float64
        tensor). With ``reseed`` the loss's randomness is drawn from one seed for the whole run
        (``"lbfgs"``, and the final objective); ``"gd"`` uses the epoch's seed set by the
        caller."""
        self.opt.zero_grad(set_to_none=True)
        if reseed:
            self.gen.manual_seed(derive_seed(self.cfg.seed, 0, 2))
            self.noise_gen.manual_seed(derive_seed(self.cfg.seed, 0, 3))
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        for batch in self.plan.epoch_batches(epoch):
            part = self._batch_losses(batch).sum() / self.n_queries
            part.backward()
            total += part.detach().double()
        if self.l2 > 0:
            reg = self._penalty()
            reg.backward()
            total += reg.detach().double()
        return total

    def _grad_max(self) -> float:
        grads = [p.grad for p in self.model.parameters() if p.grad is not None]
        if not grads:
            return 0.0
        return float(max(float(g.detach().abs().max()) for g in grads))

    def _lbfgs_epoch(self, epoch: int) -> float:
        """One L-BFGS iteration; returns the objective at the weights it started from (and keeps
        that point's gradient max-norm in ``first_eval``)."""
        self.first_eval = {}

        def closure() -> Any:
            value = self._full_objective(epoch)
            if not self.first_eval:
                self.first_eval = {"loss": float(value), "grad": self._grad_max()}
            return value

        self.opt.step(closure)
        epoch_loss = self.first_eval["loss"]
        self._check_finite(
            epoch_loss,
            epoch,
            "optimizer lbfgs",
            "normalise the features (normalize='zscore') or add an L2 penalty (l2=)",
            ("normalize", "l2"),
        )
        return epoch_loss

    def final_objective(self) -> tuple[float, float]:
        """``(objective, gradient max-norm)`` at the current weights (one full evaluation)."""
        self.model.train()
        value = self._full_objective(max(self.state.start, len(self.state.history)))
        grad = self._grad_max()
        self.opt.zero_grad(set_to_none=True)
        return float(value), grad

    def _validate(self, epoch: int) -> float | None:
        """The validation value after ``epoch`` (None when not due); keeps the best weights."""
        cfg, st = self.cfg, self.state
        if self.xv is None:
            st.best_epoch = epoch + 1
            return None
        if (epoch + 1) % cfg.eval_every != 0 and epoch + 1 != cfg.n_epochs:
            return None
        self.model.eval()
        v = cast(RankingDataset, self.validation)  # validation features exist: so does the set
        with torch.no_grad():
            sv = self.model.score_lists(self.xv, v.boundaries).double().cpu().numpy()
        valid = self.scorer.mean(v.labels, sv, v.boundaries)
        if st.best_score is None or valid > st.best_score:
            st.best_score, st.best_epoch, st.bad = valid, epoch + 1, 0
            st.best_state = {k: t.detach().clone() for k, t in self.model.state_dict().items()}
        else:
            st.bad += 1
        return valid

    def _stop(self, epoch: int, epoch_loss: float, valid: float | None) -> None:
        """Set the stopping reason after ``epoch`` (converged, early stopping, epoch cap)."""
        cfg, st = self.cfg, self.state
        prev = st.prev_loss
        if cfg.optimizer == "lbfgs":
            grad = self.first_eval.get("grad", math.inf)
            if grad <= cfg.gtol:
                st.stop_reason, st.finished = "converged", True
            elif prev is not None and epoch_loss == prev:
                st.stop_reason, st.finished = "stalled", True
            elif (
                prev is not None
                and epoch_loss < prev
                and prev - epoch_loss <= cfg.tol * max(abs(prev), abs(epoch_loss))
            ):
                st.stop_reason, st.finished = "converged", True
        elif cfg.optimizer == "gd" and prev is not None and abs(epoch_loss - prev) < cfg.tol:
            st.stop_reason, st.finished = "converged", True
        if not st.finished:
            if valid is not None and cfg.patience is not None and st.bad >= cfg.patience:
                st.stop_reason, st.finished = "early_stopping", True
            elif epoch + 1 >= cfg.n_epochs:
                st.stop_reason, st.finished = "max_epochs", True
        st.prev_loss = epoch_loss

    def _checkpoint(self, epoch: int, fingerprint: tuple[str, str]) -> dict[str, Any]:
        st = self.state
        return {
            "fingerprint": fingerprint[0],
            "fingerprint_text": fingerprint[1],
            "epoch": epoch + 1,
            "model": self.model.state_dict(),
            "optimizer": self.opt.state_dict(),
            "torch_rng": torch.get_rng_state(),
            "generator": self.gen.get_state().cpu(),
            "best_score": st.best_score,
            "best_epoch": st.best_epoch,
            "best_state": st.best_state,
            "history": st.history,
            "prev_loss": st.prev_loss,
            "bad": st.bad,
            "stop_reason": st.stop_reason,
            "finished": st.finished,
        }

    # ------------------------------------------------------------------ the run
    def fit(
        self,
        *,
        fingerprint: tuple[str, str],
        checkpoint_dir: str | os.PathLike[str] | None = None,
        resume: bool = False,
        progress: bool | None = None,
        callback: Callable[[dict[str, Any]], None] | None = None,
        observer: Callable[[dict[str, Any], Callable[[RankingDataset], Any]], None] | None = None,
    ) -> TrainResult:
        """Train (resuming from ``checkpoint_dir`` when ``resume``) and return the result.

        ``fingerprint``: ``(hash, text)`` from :func:`ndcglab.training.fingerprint.run_fingerprint`.
        ``observer(entry, predict)`` is called after every epoch (after ``callback``) with the
        history entry and a function giving the current weights' scores on a dataset (used by
        :func:`ndcglab.training.tune` to score the stopping points of several tolerances in one
        run).
        """
        cfg = self.cfg
        fork_devices = [self.device.index or 0] if self.device.type == "cuda" else []
        with torch.random.fork_rng(devices=fork_devices):
            self._build()
            if resume and checkpoint_dir is not None:
                saved = load_checkpoint(checkpoint_dir, fingerprint[0])
                if saved is not None:
                    self._restore(saved)
            st = self.state
            epochs = range(st.start, cfg.n_epochs) if not st.finished else range(0)
            bar = None
            if _show_progress(progress) and len(epochs):
                from tqdm.auto import tqdm

                bar = tqdm(
                    total=cfg.n_epochs,
                    initial=st.start,
                    desc=f"train {self.meta['loss']}",
                    file=sys.stderr,
                    leave=False,
                )
            try:
                for epoch in epochs:
                    t0 = time.perf_counter()
                    epoch_loss = self._train_epoch(epoch)
                    valid = self._validate(epoch)
                    entry = {
                        "epoch": epoch + 1,
                        "loss": epoch_loss,
                        "valid": valid,
                        "seconds": time.perf_counter() - t0,
                    }
                    st.history.append(entry)
                    self._stop(epoch, epoch_loss, valid)
                    if checkpoint_dir is not None:
                        save_checkpoint(checkpoint_dir, self._checkpoint(epoch, fingerprint))
                    if bar is not None:
                        bar.update(1)
                        bar.set_postfix(
                            loss=f"{epoch_loss:.5g}",
                            valid="-" if valid is None else f"{valid:.4f}",
                        )
                    if callback is not None:
                        callback(dict(entry))
                    if observer is not None:
                        observer(dict(entry), self._predict)
                    if st.finished:
                        break
            finally:
                if bar is not None:
                    bar.close()
        return self._result()

    def _predict(self, data: RankingDataset) -> Any:
        """Scores of the current weights on ``data`` (normalised as the final model will be)."""
        from ..models import TrainedModel

        return TrainedModel(model=self.model, normalizer=self.work.normalizer, metadata={}).predict(
            data
        )

    def _result(self) -> TrainResult:
        from ..models import TrainedModel

        st = self.state
        if st.best_state is not None:
            self.model.load_state_dict(st.best_state)
        final_loss = grad_norm = converged = None
        if self.cfg.optimizer in ("gd", "lbfgs") and st.history:
            devices = [self.device.index or 0] if self.device.type == "cuda" else []
            with torch.random.fork_rng(devices=devices):
                final_loss, grad_norm = self.final_objective()
            converged = st.stop_reason == "converged"
        self.model.eval()
        self.meta.update(
            {
                "best_epoch": st.best_epoch,
                "best_score": st.best_score,
                "stop_reason": st.stop_reason,
                "epochs_run": len(st.history),
                "l2": self.l2,
                "converged": converged,
                "grad_norm": grad_norm,
                "final_loss": final_loss,
            }
        )
        trained = TrainedModel(
            model=self.model.cpu(), normalizer=self.work.normalizer, metadata=self.meta
        )
        return TrainResult(
            trained=trained,
            history=st.history,
            best_epoch=st.best_epoch,
            best_score=st.best_score,
            stop_reason=st.stop_reason,
            epochs_run=len(st.history),
            measure=self.scorer.name if self.validation is not None else None,
            converged=converged,
            grad_norm=grad_norm,
            final_loss=final_loss,
        )
