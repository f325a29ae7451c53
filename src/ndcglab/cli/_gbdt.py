"""The boosted-trees options of ``ndcglab train`` / ``ndcglab cv`` (``--model gbdt``).

``train`` adds ``gbdt`` to the ``--model`` choices and calls :func:`add_gbdt_arguments` (adds
``--num-leaves``, ``--min-data-in-leaf``, ``--hessian``, ``--gbdt-param KEY=VALUE``; none collides
with the other options); ``run`` trains with :func:`fit_gbdt_from_args`, saves the model and
prints :func:`gbdt_payload`; ``cv`` calls :func:`fit_gbdt_from_args` per fold and loss (see
``docs/gbdt.md``, "From the command line").

The shared options keep their meaning where one exists: ``--loss`` (also
``lightgbm:lambdarank`` / ``lightgbm(objective=rank_xendcg)`` for LightGBM's own objectives),
``--lr`` (learning rate, default 0.05 for trees), ``--rounds`` (boosting rounds, default 500),
``--patience`` (early stopping rounds, default 50), ``--validation-measure``, ``--preset``,
``--seed``. Options that only concern gradient descent (``--optimizer``, ``--epochs``,
``--batch-size``, ``--normalize`` …) are ignored for trees.
"""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import SpecError
from ..gbdt import DEFAULTS, HESSIAN_MODES, GBDTModel, fit_gbdt

__all__ = ["add_gbdt_arguments", "fit_gbdt_from_args", "gbdt_options_from_args", "gbdt_payload"]


def add_gbdt_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the tree-only options (used with ``--model gbdt``)."""
    g = parser.add_argument_group("boosted trees (--model gbdt)")
    g.add_argument(
        "--num-leaves",
        type=int,
        default=None,
        help=f"leaves per tree (default {DEFAULTS['num_leaves']})",
    )
    g.add_argument(
        "--min-data-in-leaf",
        type=int,
        default=None,
        help=f"minimum documents per leaf (default {DEFAULTS['min_data_in_leaf']})",
    )
    g.add_argument(
        "--hessian",
        default=None,
        choices=HESSIAN_MODES,
        help="second derivatives: auto (closed form, else exact/Hutchinson; |diagonal| for "
        "losses marked so, e.g. approx_ndcg), closed, exact, hutchinson, abs (absolute value of "
        "the diagonal: saddle-free Newton), constant (default auto)",
    )
    g.add_argument(
        "--gbdt-param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="any other LightGBM parameter, e.g. --gbdt-param lambda_l2=1 (repeatable)",
    )


def _value(text: str) -> Any:
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    low = text.lower()
    return {"true": True, "false": False}.get(low, text)


def gbdt_options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The ``params`` dict of :func:`~ndcglab.gbdt.fit_gbdt` from parsed CLI arguments."""
    out: dict[str, Any] = {}
    mapping = {
        "lr": "learning_rate",
        "rounds": "num_boost_round",
        "patience": "early_stopping_rounds",
        "validation_measure": "measure",
        "num_leaves": "num_leaves",
        "min_data_in_leaf": "min_data_in_leaf",
        "hessian": "hessian",
        "seed": "seed",
    }
    for attr, key in mapping.items():
        v = getattr(args, attr, None)
        if v is not None:
            out[key] = v
    if hasattr(args, "preset"):
        p = args.preset
        out["preset"] = None if p is None or str(p).lower() == "none" else p
    for item in getattr(args, "gbdt_param", None) or []:
        key, eq, val = str(item).partition("=")
        if not eq or not key.strip():
            raise SpecError(
                f"cannot read --gbdt-param {item!r}. Fix: write KEY=VALUE, e.g. lambda_l2=1"
            )
        out[key.strip()] = _value(val.strip())
    return out


def fit_gbdt_from_args(
    args: argparse.Namespace, train: Any, valid: Any = None, *, loss: str | None = None
) -> GBDTModel:
    """Train boosted trees as the parsed ``ndcglab train``/``cv`` arguments say (``loss``:
    this spec instead of ``--loss``; ``cv`` passes each of its losses)."""
    loss = loss or getattr(args, "loss", None) or "listnet"
    if isinstance(loss, list | tuple):
        if len(loss) != 1:
            raise SpecError("--model gbdt trains one loss at a time. Fix: give one --loss")
        loss = loss[0]
    return fit_gbdt(train, loss, valid=valid, params=gbdt_options_from_args(args))


def gbdt_payload(model: GBDTModel, path: Any = None) -> dict[str, Any]:
    """A JSON-able summary in the shape ``ndcglab train`` prints (``mean`` = best validation)."""
    tr = model.metadata.get("training") or {}
    measure = tr.get("measure")
    return {
        "model": None if path is None else str(path),
        "loss": model.metadata.get("loss"),
        "model_kind": "gbdt",
        "mean": {} if not measure or tr.get("best_valid") is None else {measure: tr["best_valid"]},
        "best_iteration": model.best_iteration,
        "rounds_run": tr.get("rounds_run"),
        "n_features": model.n_features,
        "objective": model.metadata.get("objective"),
        "params": model.metadata.get("params"),
    }
