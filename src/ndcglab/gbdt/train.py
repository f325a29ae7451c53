"""Training boosted trees with our losses (or LightGBM's own ranking objectives, for comparison).

:func:`train_gbdt` is the one training path; ``loss`` is either one of our registered losses
(``"listnet"``, ``"consistent_listnet(norm=z10)"``, ``"cs_listmle@10"`` …, driven through
:class:`~ndcglab.gbdt.objective.LossObjective`) or a LightGBM built-in named in the same spec
grammar, ``lightgbm(objective=lambdarank)`` / ``lightgbm(objective=rank_xendcg)`` (short form
``lightgbm:lambdarank``; :func:`lightgbm_objective` reads both), trained with exactly the same
trees, rounds and early stopping — which is how ``benchmarks/bench_gbdt.py`` compares them.

Early stopping watches one of *our* measures on the validation set (default ``ndcg@10`` under the
``letor4`` preset), computed by :class:`ndcglab.measures.MeasureScorer` in a custom ``feval``;
LightGBM's own metrics are switched off (``metric="None"``), so every objective is judged alike.
:func:`fit_gbdt` is the entry point for :class:`ndcglab.estimator.NDCGRanker` (``model="gbdt"``)
and the CLI.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .._compat import lightgbm as _lightgbm
from .._spec import parse_spec
from ..data import RankingDataset, boundaries_from_group
from ..errors import SpecError
from ..training.config import TREE_DEFAULTS, TrainConfig, default_threads
from .common import (
    EvalSetMeasure,
    check_train_valid,
    curve_record,
    model_metadata,
    split_engine_settings,
)
from .model import GBDTModel, model_versions
from .params import engine_refusal

__all__ = [
    "DEFAULTS",
    "DEFAULT_LOSS",
    "LIGHTGBM_OBJECTIVES",
    "LIGHTGBM_PREFIX",
    "MeasureFeval",
    "check_settings",
    "check_tree_config",
    "fit_gbdt",
    "lightgbm_label",
    "lightgbm_objective",
    "lightgbm_params",
    "make_objective",
    "settings_from_config",
    "split_settings",
    "to_lgb_dataset",
    "train_gbdt",
]

#: the loss name of LightGBM's own objectives: ``lightgbm(objective=<name>)``
LIGHTGBM_LOSS = "lightgbm"
#: the short spelling ``lightgbm:<name>`` of the same spec (how results are labelled)
LIGHTGBM_PREFIX = "lightgbm:"
#: LightGBM's built-in ranking objectives (and their LightGBM aliases) that may be named
LIGHTGBM_OBJECTIVES = ("lambdarank", "rank_xendcg", "xendcg", "xe_ndcg", "xe_ndcg_mart")


def lightgbm_objective(loss: Any) -> str | None:
    """The LightGBM built-in objective named by ``loss``, or ``None`` for one of our losses.

    The spec is ``lightgbm(objective=<name>)`` in the one spec grammar
    (:func:`ndcglab._spec.parse_spec`), or its short form ``lightgbm:<name>``; ``<name>`` is one
    of :data:`LIGHTGBM_OBJECTIVES`. Any other loss name (or a loss object) gives ``None``. Raises
    :class:`~ndcglab.errors.SpecError` for a malformed ``lightgbm`` spec."""
    if not isinstance(loss, str):
        return None
    text = "".join(loss.split()).lower()
    if text.startswith(LIGHTGBM_PREFIX):
        text = f"{LIGHTGBM_LOSS}(objective={text[len(LIGHTGBM_PREFIX) :]})"
    if not text.startswith(LIGHTGBM_LOSS):
        return None
    spec = parse_spec(text, what="loss")
    if spec.name != LIGHTGBM_LOSS:
        return None
    params = dict(spec.params)
    objective = params.get("objective")
    if spec.cutoff is not None or set(params) != {"objective"} or not objective:
        raise SpecError(
            f"cannot read LightGBM objective {loss!r}: it takes one parameter, objective, and no "
            "@cutoff. Fix: e.g. lightgbm(objective=lambdarank) or lightgbm:lambdarank"
        )
    if objective not in LIGHTGBM_OBJECTIVES:
        raise SpecError(
            f"unknown LightGBM ranking objective {objective!r} in {loss!r}; known: "
            f"{', '.join(LIGHTGBM_OBJECTIVES)}. Fix: e.g. lightgbm:lambdarank"
        )
    return objective


def lightgbm_label(objective: str) -> str:
    """How a LightGBM built-in is labelled in results and model files: ``lightgbm:<name>``."""
    return f"{LIGHTGBM_PREFIX}{objective}"


_D = TrainConfig()
#: the loss trained when none is named (``TrainConfig``'s)
DEFAULT_LOSS: str = str(_D.loss)
#: default training settings of :func:`train_gbdt` (also what ``fit_gbdt(params=...)`` overrides):
#: the engine's names for :class:`~ndcglab.training.TrainConfig`'s defaults, which are stated
#: there (:data:`~ndcglab.training.config.TREE_DEFAULTS`, ``TreeOptions``), plus the Hessian's
#: numerical settings and LightGBM's thread count (0 = LightGBM's default)
DEFAULTS: dict[str, Any] = {
    "num_boost_round": TREE_DEFAULTS["rounds"],
    "learning_rate": TREE_DEFAULTS["lr"],
    "num_leaves": _D.trees.num_leaves,
    "min_data_in_leaf": _D.trees.min_data_in_leaf,
    "early_stopping_rounds": TREE_DEFAULTS["patience"],
    "measure": _D.validation_measure,
    "preset": _D.preset,
    "hessian": _D.trees.hessian,
    "hess_floor": 1e-6,
    "hutchinson_samples": 16,
    "constant_lists": "keep",
    "seed": _D.seed,
    "num_threads": 0,
}


def settings_from_config(cfg: TrainConfig) -> dict[str, Any]:
    """The settings of :func:`fit_gbdt` for a :class:`~ndcglab.training.TrainConfig`: the one
    mapping from the training options' names to the engine's (``lr`` → ``learning_rate``,
    ``rounds`` → ``num_boost_round``, ``patience`` → ``early_stopping_rounds``,
    ``validation_measure`` → ``measure``, ``num_threads`` → LightGBM's ``num_threads``, the
    :class:`~ndcglab.training.config.TreeOptions`), then ``cfg.trees.params``, which win."""
    trees = cfg.trees
    return {
        "num_boost_round": int(cfg.tree_setting("rounds")),
        "learning_rate": float(cfg.tree_setting("lr")),
        "early_stopping_rounds": int(cfg.tree_setting("patience")),
        "measure": cfg.validation_measure,
        "preset": cfg.preset,
        "seed": int(cfg.seed),
        "num_leaves": int(trees.num_leaves),
        "min_data_in_leaf": int(trees.min_data_in_leaf),
        "hessian": trees.hessian,
        "num_threads": 0 if cfg.num_threads is None else int(cfg.num_threads),
        **trees.params,
    }


def lightgbm_params(
    *, learning_rate: float, num_leaves: int, min_data_in_leaf: int, seed: int, num_threads: int
) -> dict[str, Any]:
    """LightGBM's parameters of our tree settings (no objective yet): LightGBM's metrics off,
    silent, deterministic, ``num_threads`` threads (0: LightGBM's default, every core)."""
    return {
        "learning_rate": float(learning_rate),
        "num_leaves": int(num_leaves),
        "min_data_in_leaf": int(min_data_in_leaf),
        "metric": "None",
        "verbosity": -1,
        "seed": int(seed),
        "deterministic": True,
        "feature_pre_filter": False,
        "num_threads": int(num_threads),
    }


def check_settings(
    engine: str,
    settings: Mapping[str, Any],
    loss: Any = None,
    user: Mapping[str, Any] | None = None,
) -> None:
    """Check the settings of :func:`fit_gbdt` / :func:`~ndcglab.gbdt.xgboost_train.fit_xgboost`
    for ``engine`` before any data is read (:func:`ndcglab.gbdt.params.check_tree_params`):
    the engine parameters among them are refused, naming the option, when the engine does not
    know them, ndcglab sets them itself, or the engine refuses their values. ``user``: the
    parameters as the user spelled them (``--gbdt-param``), named in the messages; default:
    the settings that are not ndcglab's own keys."""
    from .params import check_tree_params

    if engine == "xgboost":
        from .xgboost_train import split_xgboost_settings, xgboost_objective, xgboost_params

        ours, extra = split_xgboost_settings(settings)
        full = {**DEFAULTS, **ours}
        engine_params = xgboost_params(
            learning_rate=full["learning_rate"],
            num_leaves=full["num_leaves"],
            seed=full["seed"],
            num_threads=1,
        )
        builtin = xgboost_objective(loss)
        if builtin is not None:
            engine_params["objective"] = builtin
    else:
        ours, extra = split_settings(settings)
        full = {**DEFAULTS, **ours}
        engine_params = lightgbm_params(
            learning_rate=full["learning_rate"],
            num_leaves=full["num_leaves"],
            min_data_in_leaf=full["min_data_in_leaf"],
            seed=full["seed"],
            num_threads=1,
        )
        builtin = lightgbm_objective(loss)
        if builtin is not None:
            engine_params["objective"] = builtin
    from .params import LEARNING_RATE_KEYS

    if engine == "xgboost":
        from .xgboost_train import _ALIASES as aliases
        from .xgboost_train import _OUR_KEYS as own
    else:
        aliases, own = _ALIASES, _OUR_KEYS
    given = settings if user is None else user
    engine_keys = {  # the engine's parameters, and the learning rate by the user's spelling
        k: v for k, v in given.items() if aliases.get(k, k) not in own or k in LEARNING_RATE_KEYS
    }
    check_tree_params(
        engine, full["learning_rate"], engine_keys, {**engine_params, **extra}, given=given
    )


def check_tree_config(cfg: TrainConfig) -> None:
    """Check a boosted-trees :class:`~ndcglab.training.TrainConfig` before any data is read:
    the loss suits the engine (``lightgbm:…`` objectives are LightGBM's, ``xgboost:…``
    XGBoost's, and one of our losses must be differentiable), and the engine's parameters pass
    :func:`check_settings`. Raises :class:`~ndcglab.errors.SpecError` naming ``--loss``,
    ``--engine``, ``--model`` or the parameter."""
    from .xgboost_train import XGBOOST_PREFIX

    engine, loss = cfg.trees.engine, cfg.loss
    text = "".join(str(loss).split()).lower()
    own_objectives = (  # engine, its name, how its objectives are spelled, the other's example
        ("lightgbm", "LightGBM", (LIGHTGBM_PREFIX, f"{LIGHTGBM_LOSS}("), "xgboost:rank:ndcg"),
        ("xgboost", "XGBoost", (XGBOOST_PREFIX,), "lightgbm:lambdarank"),
    )
    for owner, name, spellings, example in own_objectives:
        if engine != owner and text.startswith(spellings):
            raise SpecError(
                f"--loss {loss} is {name}'s own objective, but --engine {engine} grows the "
                f"trees. Fix: use --engine {owner}, or --loss {example} with --engine {engine}"
            )
    if lightgbm_objective(loss) is None and not text.startswith(XGBOOST_PREFIX):
        from .objective import resolve_loss

        resolve_loss(loss)  # an unknown or non-differentiable loss fails here, naming --model
    check_settings(engine, settings_from_config(cfg), loss, user=cfg.trees.params)


def to_lgb_dataset(
    data: RankingDataset,
    *,
    reference: Any = None,
    params: Mapping[str, Any] | None = None,
) -> Any:
    """A ``lightgbm.Dataset`` of ``data`` with its query groups (float32; NaN = missing)."""
    lgb = _lightgbm()
    return lgb.Dataset(
        data.features,
        label=data.labels,
        group=data.query_lengths,
        reference=reference,
        params=dict(params or {}),
        feature_name=list(data.feature_names) if data.feature_names else "auto",
        free_raw_data=False,
    )


def _lgb_arrays(eval_data: Any) -> tuple[np.ndarray, np.ndarray]:
    """Labels and query boundaries of a ``lightgbm.Dataset``."""
    labels = np.asarray(eval_data.get_label(), dtype=np.float64)
    group = eval_data.get_group()
    if group is None:
        raise SpecError(
            "evaluating a ranking measure needs query groups on the validation set. Fix: "
            "build it with group= (ndcglab.gbdt.to_lgb_dataset does)"
        )
    return labels, boundaries_from_group(group)


class MeasureFeval(EvalSetMeasure):
    """A LightGBM ``feval`` for one of our measures: ``(preds, eval_data) -> (name, value, True)``.

    ``measure`` is a measure spec (``"ndcg@10"``, ``"map"`` …) evaluated under ``preset``
    (``"letor4"`` by default: the official LETOR 4.0 conventions) by the one training-time
    measure, :class:`ndcglab.measures.MeasureScorer`; the value is the mean over the evaluation
    set's queries. The query boundaries of each evaluation set are computed once and cached
    (:class:`~ndcglab.gbdt.common.EvalSetMeasure`).
    """

    def __init__(
        self, measure: str = DEFAULTS["measure"], preset: str | None = DEFAULTS["preset"]
    ) -> None:
        super().__init__(measure, preset)

    def _arrays(self, eval_data: Any) -> tuple[np.ndarray, np.ndarray]:
        return self._arrays_of(eval_data, _lgb_arrays)

    def __call__(self, preds: np.ndarray, eval_data: Any) -> tuple[str, float, bool]:
        labels, b = self._arrays(eval_data)
        return self.name, self.value(labels, np.asarray(preds, dtype=np.float64), b), True


def make_objective(loss: Any, **options: Any) -> Any:
    """The :class:`~ndcglab.gbdt.objective.LossObjective` of ``loss`` (keyword ``options``)."""
    from .objective import LossObjective

    return LossObjective(loss, **options)


def train_gbdt(
    train: RankingDataset,
    loss: Any = DEFAULT_LOSS,
    *,
    valid: RankingDataset | None = None,
    num_boost_round: int = DEFAULTS["num_boost_round"],
    learning_rate: float = DEFAULTS["learning_rate"],
    num_leaves: int = DEFAULTS["num_leaves"],
    min_data_in_leaf: int = DEFAULTS["min_data_in_leaf"],
    early_stopping_rounds: int | None = DEFAULTS["early_stopping_rounds"],
    measure: str = DEFAULTS["measure"],
    preset: str | None = DEFAULTS["preset"],
    hessian: str = DEFAULTS["hessian"],
    hess_floor: float = DEFAULTS["hess_floor"],
    hutchinson_samples: int = DEFAULTS["hutchinson_samples"],
    constant_lists: str = DEFAULTS["constant_lists"],
    seed: int = DEFAULTS["seed"],
    num_threads: int = DEFAULTS["num_threads"],
    params: Mapping[str, Any] | None = None,
    callbacks: Sequence[Callable[..., Any]] = (),
    eval_every_round: bool = True,
) -> GBDTModel:
    """Train a LightGBM ranker whose gradients come from one of our listwise losses.

    Parameters
    ----------
    train, valid:
        :class:`~ndcglab.data.RankingDataset` objects (queries contiguous). With ``valid`` and
        ``early_stopping_rounds``, training stops when ``measure`` (under ``preset``) on ``valid``
        has not improved for that many rounds, and the model keeps the best iteration.
    loss:
        A registered loss spec, a loss object, or ``"lightgbm(objective=lambdarank)"`` /
        ``"lightgbm:rank_xendcg"`` (LightGBM's built-ins, same settings, for comparison; see
        :func:`lightgbm_objective`).
    num_boost_round, learning_rate, num_leaves, min_data_in_leaf:
        The tree settings (LightGBM's parameters of those names).
    hessian, hess_floor, hutchinson_samples, constant_lists:
        How second derivatives are obtained (:class:`~ndcglab.gbdt.objective.LossObjective`).
    seed, num_threads:
        LightGBM's ``seed`` (with ``deterministic=True``) and threads (0 = LightGBM's default).
    params:
        Extra LightGBM parameters (e.g. ``lambda_l2``, ``feature_fraction``); they win over the
        arguments above.
    callbacks:
        Extra LightGBM callbacks.
    eval_every_round:
        Evaluate ``measure`` on ``valid`` every round (needed for early stopping).
    """
    lgb = _lightgbm()
    check_train_valid(train, valid)
    lgb_params = lightgbm_params(
        learning_rate=learning_rate,
        num_leaves=num_leaves,
        min_data_in_leaf=min_data_in_leaf,
        seed=seed,
        num_threads=int(num_threads) or default_threads(train.n_docs, train.n_features),
    )
    objective_info: dict[str, Any]
    builtin = lightgbm_objective(loss)
    if builtin is not None:
        lgb_params["objective"] = builtin
        loss_label = lightgbm_label(builtin)
        objective_info = {"loss": loss_label, "hessian": "lightgbm built-in"}
        objective_obj = None
    else:
        objective_obj = make_objective(
            loss,
            hessian=hessian,
            hess_floor=hess_floor,
            hutchinson_samples=hutchinson_samples,
            constant_lists=constant_lists,
            seed=seed,
        )
        lgb_params["objective"] = objective_obj
        loss_label = objective_obj.name
        objective_info = {}
    lgb_params.update(dict(params or {}))

    dtrain = to_lgb_dataset(train, params={"feature_pre_filter": False})
    valid_sets: list[Any] = []
    valid_names: list[str] = []
    feval = None
    if valid is not None and eval_every_round:
        dvalid = to_lgb_dataset(valid, reference=dtrain, params={"feature_pre_filter": False})
        valid_sets, valid_names = [dvalid], ["valid"]
        feval = MeasureFeval(measure, preset)
    history: dict[str, Any] = {}
    cbs: list[Callable[..., Any]] = [lgb.record_evaluation(history), *callbacks]
    if feval is not None and early_stopping_rounds:
        cbs.append(
            lgb.early_stopping(int(early_stopping_rounds), first_metric_only=True, verbose=False)
        )

    t0 = time.perf_counter()
    try:
        booster = lgb.train(
            lgb_params,
            dtrain,
            num_boost_round=int(num_boost_round),
            valid_sets=valid_sets or None,
            valid_names=valid_names or None,
            feval=feval,
            callbacks=cbs,
        )
    except lgb.basic.LightGBMError as exc:  # a parameter the engine refuses: one line
        raise engine_refusal("lightgbm", exc, dict(params or {})) from None
    seconds = time.perf_counter() - t0
    if objective_obj is not None:
        objective_info = objective_obj.describe()
    best = int(booster.best_iteration or 0)
    curve = history.get("valid", {}).get(feval.name, []) if feval is not None else []
    stored_params = {k: v for k, v in lgb_params.items() if k != "objective"}
    stored_params["objective"] = (
        lgb_params["objective"] if isinstance(lgb_params["objective"], str) else "custom"
    )
    meta = model_metadata(
        loss=loss_label,
        objective=objective_info,
        params=stored_params,
        model={"kind": GBDTModel.kind, "best_iteration": best},
        feature_names=train.feature_names,
        training_data=train.source,
        training=training_record(
            booster,
            curve,
            num_boost_round=num_boost_round,
            early_stopping_rounds=early_stopping_rounds,
            measure=measure,
            preset=preset,
            watched=feval is not None,
            seconds=seconds,
        ),
        seed=seed,
        versions=model_versions(),
    )
    return GBDTModel(booster=booster, metadata=meta)


def training_record(
    booster: Any,
    curve: Sequence[float],
    *,
    num_boost_round: int,
    early_stopping_rounds: int | None,
    measure: str | None,
    preset: str | None,
    watched: bool,
    seconds: float,
) -> dict[str, Any]:
    """The ``training`` entry of a LightGBM model's metadata: rounds asked for and run, the
    best round, early stopping (only when a validation measure was ``watched``), the
    validation ``curve`` (:func:`~ndcglab.gbdt.common.curve_record`) and the run time."""
    return {
        "num_boost_round": int(num_boost_round),
        "rounds_run": len(curve) if curve else int(booster.current_iteration()),
        "best_iteration": int(booster.best_iteration or 0),
        "early_stopping_rounds": early_stopping_rounds if watched else None,
        **curve_record(curve, measure, preset, watched=watched),
        "seconds": seconds,
    }


#: keys of ``fit_gbdt(params=...)`` that are our arguments rather than LightGBM parameters
_OUR_KEYS = frozenset(DEFAULTS) | {"eval_every_round"}


def fit_gbdt(
    dataset: RankingDataset,
    loss: Any = DEFAULT_LOSS,
    valid: RankingDataset | None = None,
    params: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> GBDTModel:
    """Entry point for the estimator and the CLI: :func:`train_gbdt` with settings in one dict.

    ``params`` (and ``kwargs``, which win) may mix our settings (the keys of :data:`DEFAULTS`:
    ``num_boost_round``, ``learning_rate``, ``num_leaves``, ``min_data_in_leaf``,
    ``early_stopping_rounds``, ``measure``, ``preset``, ``hessian``, ``seed`` …) with any LightGBM
    parameter (``lambda_l2``, ``feature_fraction`` …), which is passed through. The common
    LightGBM aliases ``n_estimators`` / ``num_iterations`` → ``num_boost_round`` and
    ``min_child_samples`` → ``min_data_in_leaf`` are understood.
    """
    settings = {**dict(params or {}), **kwargs}
    check_settings("lightgbm", settings, loss)
    ours, extra = split_settings(settings)
    return train_gbdt(dataset, loss, valid=valid, params=extra, **ours)


#: LightGBM's aliases of the settings named in :data:`DEFAULTS`
_ALIASES = {
    "n_estimators": "num_boost_round",
    "num_iterations": "num_boost_round",
    "num_rounds": "num_boost_round",
    "min_child_samples": "min_data_in_leaf",
    "random_state": "seed",
    "eta": "learning_rate",
}


def split_settings(settings: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(ours, extra)``: the keys of :data:`DEFAULTS` (LightGBM's aliases of them read as the
    setting they name) and every other LightGBM parameter, passed through."""
    ours, extra = split_engine_settings(settings, _OUR_KEYS, _ALIASES)
    if "params" in ours:  # pragma: no cover - defensive
        extra.update(ours.pop("params"))
    return ours, extra
