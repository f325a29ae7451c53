"""AdaRank (``model="adarank"`` or ``loss="adarank"``) inside :func:`ndcglab.training.train`.

AdaRank is trained by its own boosting algorithm (:class:`ndcglab.models.AdaRank`; Xu & Li,
"AdaRank: A Boosting Algorithm for Information Retrieval", SIGIR 2007), with the loss spec's
``measure`` (``ndcg`` or ``map``, cut-off ``@k``) inside it and the spec's ``rounds`` rounds (the
``rounds`` option overrides them). The validation measure selects the best round; ``patience``
(default :data:`ndcglab.models.adarank.DEFAULT_PATIENCE`) stops after that many rounds without
improvement. The history has
one entry per round: ``loss`` is ``1 −`` the training value of the inner measure.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..data.dataset import RankingDataset
from .config import TrainConfig, TrainResult
from .prepare import PreparedData

__all__ = ["fit_adarank"]


def fit_adarank(
    cfg: TrainConfig,
    loss: Any,
    scorer: Any,
    work: PreparedData,
    validation: RankingDataset | None,
    meta: dict[str, Any],
    callback: Callable[[dict[str, Any]], None] | None = None,
) -> TrainResult:
    """Fit AdaRank on the prepared data; ``meta`` (the model file's metadata) gets the outcome."""
    from ..models import AdaRank, TrainedModel
    from ..models.adarank import DEFAULT_PATIENCE

    params = loss.params  # the adarank loss spec, with its defaults filled in
    inner = str(params["measure"])
    cutoff = getattr(loss, "cutoff", None)
    if cutoff is not None:
        inner += f"@{cutoff}"
    model = AdaRank(
        work.n_features,
        measure=inner,
        preset=cfg.preset,
        rounds=int(cfg.rounds if cfg.rounds is not None else params["rounds"]),
        patience=cfg.patience or DEFAULT_PATIENCE,
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
        trained=TrainedModel(model=model.eval(), normalizer=work.normalizer, metadata=meta),
        history=history,
        best_epoch=best,
        best_score=best_score,
        stop_reason=stop,
        epochs_run=len(history),
        measure=scorer.name if validation is not None else None,
    )
