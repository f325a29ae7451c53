"""Checking a tree engine's parameters before training: every refusal is one line that names
the option, and no parameter is dropped silently.

:func:`check_tree_params` runs before any data is read (``ndcglab train``/``cv`` call it while
building the configuration; :func:`~ndcglab.gbdt.fit_gbdt` and
:func:`~ndcglab.gbdt.xgboost_train.fit_xgboost` call it too). In order:

1. **ndcglab's own keys** — ``objective`` (the loss is ``--loss``), the evaluation metric
   (early stopping watches ``--validation-measure``) and ``num_class`` are set by ndcglab; a
   ``--gbdt-param`` for one of them, by any of its engine's spellings, is refused.
2. **the booster** — XGBoost's ``booster`` must be ``gbtree``: ``gblinear`` trains a linear model
   and ``dart`` drops trees at random, neither of which ``predict`` (the trees up to the chosen
   round) or ``export`` can use.
3. **finite numbers and the learning rate** — every numeric value must be finite (XGBoost
   trains ``eta=nan`` into a model that scores NaN), and the learning rate, by any spelling
   (``--lr``, ``learning_rate``, ``eta``, ``shrinkage_rate`` …), must lie in ``(0, 1]``,
   XGBoost's documented range of ``eta`` (LightGBM takes ``1e308`` and grows trees whose leaves
   overflow to a model that scores every document 0).
4. **unknown keys** — a key the engine does not know is refused. The known keys come from the
   engines themselves: LightGBM's own table of parameters and aliases (the C API's
   ``LGBM_DumpParamAliases``, read through ``lightgbm.basic._ConfigAliases``), and for XGBoost the
   keys XGBoost itself reports as not used ("Parameters: { ... } are not used") when it trains
   one round on a tiny dataset with those parameters (step 5). A key that is the other engine's
   spelling of a parameter (``lambda_l2`` under XGBoost) is refused with this engine's spelling
   (``lambda``), from :data:`CROSS_ENGINE`. A LightGBM key that only other objectives read
   (:data:`LIGHTGBM_OBJECTIVE_PARAMS`: ``alpha`` is the Huber/quantile losses' parameter there,
   XGBoost's L1 penalty is ``lambda_l1``; ``label_gain`` only under ``lightgbm:lambdarank`` …) is
   refused too: LightGBM itself would accept and ignore it.
5. **the engine's own ranges** — the engine trains one round on a tiny dataset (8 documents in 2
   queries) with the full parameters; what it refuses (``max_depth=-5``, ``max_bin=1``,
   ``lambda=-1`` …) is reported as one line naming the ``--gbdt-param`` (or ``--lr``, ...).

:func:`engine_refusal` turns an engine's exception at training time into the same kind of line.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Mapping
from functools import cache
from typing import Any

import numpy as np

from ..errors import SpecError

__all__ = [
    "CROSS_ENGINE",
    "LEARNING_RATE_KEYS",
    "LIGHTGBM_OBJECTIVE_PARAMS",
    "check_tree_params",
    "engine_refusal",
    "lightgbm_known_params",
]

#: every spelling of the learning rate in either engine (and ndcglab's own)
LEARNING_RATE_KEYS = ("lr", "learning_rate", "eta", "shrinkage_rate")
#: LightGBM's name of a parameter → XGBoost's name of the same parameter (the two engines' tables
#: do not say which of their parameters match; this one does, for the common ones)
CROSS_ENGINE: dict[str, str] = {
    "lambda_l2": "lambda",
    "lambda_l1": "alpha",
    "min_gain_to_split": "gamma",
    "feature_fraction": "colsample_bytree",
    "feature_fraction_bynode": "colsample_bynode",
    "bagging_fraction": "subsample",
    "min_sum_hessian_in_leaf": "min_child_weight",
    "max_bin": "max_bin",
    "max_delta_step": "max_delta_step",
    "max_depth": "max_depth",
    "monotone_constraints": "monotone_constraints",
    "interaction_constraints": "interaction_constraints",
    "num_threads": "nthread",
    "learning_rate": "eta",
    "num_leaves": "max_leaves",
    "seed": "seed",
}
#: XGBoost's aliases of its own parameters (its C++ parameter declarations' aliases)
_XGBOOST_ALIASES = {
    "reg_lambda": "lambda",
    "reg_alpha": "alpha",
    "min_split_loss": "gamma",
    "learning_rate": "eta",
    "random_state": "seed",
    "n_jobs": "nthread",
}
#: parameters ndcglab sets itself, by engine (canonical names), and the option that sets them
_OURS = {
    "lightgbm": {"objective": "--loss", "metric": "--validation-measure", "num_class": "--loss"},
    "xgboost": {
        "objective": "--loss",
        "eval_metric": "--validation-measure",
        "disable_default_eval_metric": "--validation-measure",
        "num_class": "--loss",
    },
}
_ENGINE_NAME = {"lightgbm": "LightGBM", "xgboost": "XGBoost"}


def _option(key: str, value: Any) -> str:
    """How the command line spells a parameter: ``--lr 0.1`` or ``--gbdt-param key=value``."""
    return f"--lr {value}" if key == "lr" else f"--gbdt-param {key}={value}"


@cache
def lightgbm_known_params() -> dict[str, str]:
    """``{name or alias: LightGBM's canonical name}`` from LightGBM's own table of parameters
    (empty when this LightGBM cannot dump it)."""
    try:
        from lightgbm.basic import _ConfigAliases

        table = _ConfigAliases._get_all_param_aliases()
    except Exception:  # pragma: no cover - a LightGBM without the C API call
        return {}
    out: dict[str, str] = {}
    for name, aliases in table.items():
        out[name] = name
        for alias in aliases:
            out.setdefault(alias, name)
    return out


def _lightgbm_canonical(key: str) -> str:
    return lightgbm_known_params().get(key, key)


def _xgboost_spelling(key: str) -> str | None:
    """XGBoost's name of ``key`` when ``key`` is LightGBM's spelling of one of its parameters."""
    return CROSS_ENGINE.get(_lightgbm_canonical(key))


def _lightgbm_spelling(key: str) -> str | None:
    xgb_name = _XGBOOST_ALIASES.get(key, key)
    back = {v: k for k, v in CROSS_ENGINE.items()}
    return back.get(xgb_name)


def _refuse(engine: str, key: str, value: Any, why: str, fix: str) -> SpecError:
    return SpecError(f"{_option(key, value)}: {why}. Fix: {fix}")


def _check_own_keys(engine: str, params: Mapping[str, Any]) -> None:
    name = _ENGINE_NAME[engine]
    for key, value in params.items():
        canonical = _lightgbm_canonical(key) if engine == "lightgbm" else key
        owner = _OURS[engine].get(canonical)
        if owner is None and canonical in ("metrics", "metric_types"):
            owner = "--validation-measure"
        if owner is not None:
            raise _refuse(
                engine,
                key,
                value,
                f"ndcglab sets {name}'s {canonical} itself, from {owner}",
                f"drop it and use {owner}",
            )
        if engine == "xgboost" and key == "booster" and str(value) != "gbtree":
            raise _refuse(
                engine,
                key,
                value,
                f"ndcglab trains XGBoost's trees (booster=gbtree); a {value} booster trains but "
                "cannot be predicted with the chosen round or exported",
                "drop it (for a linear model use --model linear)",
            )


def _check_numbers(engine: str, learning_rate: float, params: Mapping[str, Any]) -> None:
    for key, value in params.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise _refuse(
                engine, key, value, "the value is not a finite number", "give a finite number"
            )
    rates = {k: v for k, v in params.items() if k in LEARNING_RATE_KEYS}
    rates.setdefault("lr", learning_rate)
    for key, value in rates.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise _refuse(
                engine,
                key,
                value,
                "the learning rate must be a number",
                "give a number in (0, 1], e.g. 0.05",
            )
        if not 0 < float(value) <= 1:
            raise _refuse(
                engine,
                key,
                value,
                "the trees' learning rate must lie in (0, 1] (XGBoost's range of eta; a larger "
                "step overflows the leaves' values)",
                "give a number in (0, 1], e.g. 0.05",
            )


def _check_known_lightgbm(params: Mapping[str, Any]) -> None:
    known = lightgbm_known_params()
    if not known:  # pragma: no cover - no table to check against
        return
    for key, value in params.items():
        if key in known:
            continue
        other = _lightgbm_spelling(key)
        fix = (
            f"LightGBM's spelling is {other} (--gbdt-param {other}={value})"
            if other is not None
            else "see LightGBM's list of parameters (or use --engine xgboost for XGBoost's)"
        )
        raise _refuse("lightgbm", key, value, "LightGBM has no parameter of that name", fix)


#: LightGBM parameters that only some objectives read (LightGBM's documentation of each says
#: "used only in …"), by canonical name: the objectives that read it and what it is. Under any
#: other objective — and under every ndcglab loss, which LightGBM sees as a custom objective —
#: LightGBM accepts the key and ignores it.
LIGHTGBM_OBJECTIVE_PARAMS: dict[str, tuple[frozenset[str], str]] = {
    "alpha": (frozenset({"huber", "quantile"}), "the Huber and quantile losses' parameter"),
    "fair_c": (frozenset({"fair"}), "the Fair loss's parameter"),
    "poisson_max_delta_step": (frozenset({"poisson"}), "the Poisson loss's safeguard"),
    "tweedie_variance_power": (frozenset({"tweedie"}), "the Tweedie loss's variance power"),
    "reg_sqrt": (frozenset({"regression"}), "the square-root transform of regression labels"),
    "scale_pos_weight": (frozenset({"binary", "multiclassova"}), "a binary class weight"),
    "is_unbalance": (frozenset({"binary", "multiclassova"}), "a binary class weighting"),
    "boost_from_average": (
        frozenset({"regression", "binary", "multiclassova", "cross_entropy"}),
        "the starting score of regression and classification objectives",
    ),
    "sigmoid": (frozenset({"binary", "multiclassova", "lambdarank"}), "the logistic slope"),
    "label_gain": (frozenset({"lambdarank"}), "lambdarank's gain of each label"),
    "lambdarank_truncation_level": (frozenset({"lambdarank"}), "lambdarank's pair cut-off"),
    "lambdarank_norm": (frozenset({"lambdarank"}), "lambdarank's normalisation"),
    "lambdarank_position_bias_regularization": (
        frozenset({"lambdarank"}),
        "lambdarank's position-bias regularisation",
    ),
    "objective_seed": (frozenset({"rank_xendcg"}), "rank_xendcg's random seed"),
}
#: LightGBM's spellings of its ranking objectives → the canonical name
_LIGHTGBM_OBJECTIVE_ALIASES = {"xendcg": "rank_xendcg", "xe_ndcg": "rank_xendcg",
                               "xe_ndcg_mart": "rank_xendcg"}  # fmt: skip


def _check_lightgbm_objective_params(params: Mapping[str, Any], objective: Any) -> None:
    """Refuse a parameter that the training's objective would not read (LightGBM ignores it
    silently): ``alpha`` (XGBoost's L1 penalty, LightGBM's Huber/quantile parameter) is the
    common case."""
    if isinstance(objective, str):
        name = _LIGHTGBM_OBJECTIVE_ALIASES.get(objective, objective)
        trained = f"LightGBM's {name} objective"
    else:
        name, trained = "", "an ndcglab loss (a custom objective to LightGBM)"
    for key, value in params.items():
        canonical = _lightgbm_canonical(key)
        entry = LIGHTGBM_OBJECTIVE_PARAMS.get(canonical)
        if entry is None or name in entry[0]:
            continue
        readers, what = entry
        fix = "drop it"
        if canonical == "alpha":
            fix = (
                f"drop it; for an L1 penalty on the leaves (XGBoost's alpha) use "
                f"--gbdt-param lambda_l1={value}"
            )
        elif "lambdarank" in readers:
            fix = "drop it, or train LightGBM's own objective with --loss lightgbm:lambdarank"
        raise _refuse(
            "lightgbm",
            key,
            value,
            f"LightGBM's {canonical} is {what}, read only by the {', '.join(sorted(readers))} "
            f"objective(s); this training uses {trained}, so LightGBM would ignore it",
            fix,
        )


def _unknown_to_xgboost(engine_params: Mapping[str, Any], probe: Any) -> list[str]:
    """The keys XGBoost reports as not used while ``probe()`` trains."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        probe()
    unused: list[str] = []
    for w in caught:
        m = re.search(r"Parameters: \{(.*?)\} are not used", str(w.message), re.S)
        if m:
            unused += [t.strip().strip('"') for t in m.group(1).split(",") if t.strip()]
    return unused


def _tiny() -> tuple[np.ndarray, np.ndarray, list[int]]:
    rng = np.random.default_rng(0)
    x = rng.random((8, 2)).astype(np.float32)
    return x, np.array([0, 1, 2, 0, 1, 0, 2, 1], dtype=np.float64), [4, 4]


def _dry_run_lightgbm(lgb_params: Mapping[str, Any], user: Mapping[str, Any]) -> None:
    from .._compat import lightgbm as _lightgbm
    from .model import _stderr_silenced

    lgb = _lightgbm()
    x, y, group = _tiny()
    params = {**lgb_params, "num_threads": 1, "verbosity": -1}
    if not isinstance(params.get("objective"), str):
        params["objective"] = "regression"
    try:
        with _stderr_silenced():
            lgb.train(params, lgb.Dataset(x, label=y, group=group, params=params), 1)
    except Exception as exc:
        raise engine_refusal("lightgbm", exc, user) from None


def _dry_run_xgboost(
    xgb_params: Mapping[str, Any], named: Mapping[str, Any], user: Mapping[str, Any]
) -> None:
    from .._compat import require

    xgb = require("xgboost")
    x, y, group = _tiny()
    params = {**xgb_params, "nthread": 1, "verbosity": 1, "validate_parameters": True}
    dtrain = xgb.DMatrix(x, label=y, group=group)
    try:
        unused = _unknown_to_xgboost(params, lambda: xgb.train(params, dtrain, 1))
    except Exception as exc:
        raise engine_refusal("xgboost", exc, named) from None
    for key in unused:
        if key not in user:
            continue
        other = _xgboost_spelling(key)
        fix = (
            f"XGBoost's spelling is {other} (--gbdt-param {other}={user[key]})"
            if other is not None and other != key
            else "see XGBoost's list of parameters (or use --engine lightgbm for LightGBM's)"
        )
        raise _refuse(
            "xgboost",
            key,
            user[key],
            "XGBoost does not use a parameter of that name in this training (an unknown key, "
            "or one that only another objective or booster reads)",
            fix,
        )


def check_tree_params(
    engine: str,
    learning_rate: float,
    params: Mapping[str, Any],
    engine_params: Mapping[str, Any],
    given: Mapping[str, Any] | None = None,
) -> None:
    """Check the parameters of a tree training (module docstring) and raise
    :class:`~ndcglab.errors.SpecError` naming the option at the first fault.

    ``params`` are the user's extra engine parameters (``--gbdt-param``, by the user's
    spelling), ``learning_rate`` the step size from ``--lr`` and ``engine_params`` the full
    parameters the engine would train with (ndcglab's settings and ``params``); ``given``:
    every parameter the user gave (ndcglab's own settings too), by which an engine's refusal is
    named (default ``params``)."""
    _check_own_keys(engine, params)
    _check_numbers(engine, learning_rate, params)
    named = {**params, **(given or {})}
    if engine == "lightgbm":
        _check_known_lightgbm(params)
        _check_lightgbm_objective_params(params, engine_params.get("objective"))
        _dry_run_lightgbm(engine_params, named)
    else:
        _dry_run_xgboost(engine_params, named, params)


def _named_parameter(engine: str, message: str) -> str | None:
    patterns = (
        r"Check failed: \((\w+)\)",
        r"Parameter (\w+)",
        r"value for (\w+)",
        r"format for (\w+)",
    )
    for pattern in patterns:
        m = re.search(pattern, message)
        if m:
            return m.group(1)
    return None


def _user_key(engine: str, name: str, user: Mapping[str, Any]) -> str | None:
    """The user's key (as given) that the engine's ``name`` for a parameter stands for."""
    for key in user:
        if key == name:
            return key
        if engine == "lightgbm" and _lightgbm_canonical(key) == _lightgbm_canonical(name):
            return key
        if engine == "xgboost" and {_XGBOOST_ALIASES.get(key, key)} & {
            name,
            _XGBOOST_ALIASES.get(name, name),
        }:
            return key
    if _XGBOOST_ALIASES.get(name, name) == "eta" or name in LEARNING_RATE_KEYS:
        return "lr"
    return None


def engine_refusal(engine: str, exc: BaseException, user: Mapping[str, Any]) -> SpecError:
    """One line for an engine's refusal (an exception while it reads its parameters or trains),
    naming the option the user gave when the engine's message names a parameter."""
    from ._boosted import exception_line

    line = exception_line(exc)
    line = re.sub(r"\s+at \S+, line \d+ \.?$", "", re.sub(r"^\[[\d:]+\] \S+: ", "", line))
    name = _ENGINE_NAME[engine]
    named = _named_parameter(engine, str(exc))
    key = None if named is None else _user_key(engine, named, user)
    if key is not None:
        value = user.get(key, "")
        return SpecError(
            f"{_option(key, value) if key in user else '--lr'}: {name} refused it ({line}). "
            f"Fix: give {key} a value {name} accepts"
        )
    return SpecError(
        f"{name} refused the training parameters ({line}). Fix: check the --gbdt-param options"
        + (f" (it names {named})" if named else "")
    )
