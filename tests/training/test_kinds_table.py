"""The kinds table (:mod:`ndcglab.training.kinds`) and the model classes agree: each torch kind of
the table is the :attr:`~ndcglab.models.RankModel.kind` of one model class (the one place that
string is written besides the table), the options the gradient loop hands a model's constructor
come from the table, and the model modules and the loop spell no kind name themselves."""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path

import pytest

pytest.importorskip("torch")

from ndcglab.models import MODEL_KINDS, make_model
from ndcglab.models.base import model_families
from ndcglab.training import KINDS, TrainConfig, train
from ndcglab.training.kinds import get_kind

SRC = Path(__file__).resolve().parents[2] / "src" / "ndcglab"


def test_torch_kinds_of_the_table_are_the_model_classes() -> None:
    torch_kinds = tuple(name for name, k in KINDS.items() if k.torch)
    assert MODEL_KINDS == torch_kinds
    families = model_families()
    assert tuple(families) == torch_kinds
    for name, cls in families.items():
        assert cls.kind == name
        assert make_model(name, 3).config()["kind"] == name


def test_model_options_are_config_fields_and_constructor_keywords() -> None:
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    families = model_families()
    for name, kind in KINDS.items():
        if not kind.model_options:
            continue
        assert kind.route == "gradient", name
        params = inspect.signature(families[name].__init__).parameters
        for option in kind.model_options:
            assert option in fields, (name, option)
            assert params[option].kind is inspect.Parameter.KEYWORD_ONLY, (name, option)


def test_the_loop_builds_the_model_from_the_table_options() -> None:
    from ndcglab.data import make_synthetic

    ds = make_synthetic("small", seed=1)
    mlp = train(
        ds,
        TrainConfig(
            model="mlp", loss="listnet", epochs=1, hidden=(5, 3), activation="tanh", dropout=0.25
        ),
    ).model
    assert mlp.config() == {
        "kind": "mlp",
        "n_features": ds.n_features,
        "hidden": [5, 3],
        "activation": "tanh",
        "dropout": 0.25,
    }
    linear = train(ds, TrainConfig(model="linear", loss="listnet", epochs=1, init="normal")).model
    assert linear.config()["init"] == "normal"
    assert get_kind("MLP").model_options == ("hidden", "activation", "dropout")


@pytest.mark.parametrize(
    "module", ["models/base.py", "models/io.py", "models/adarank.py", "training/loop.py"]
)
def test_no_kind_name_is_spelled_outside_the_table(module: str) -> None:
    """A kind name in quotes appears only as a model class's own ``kind = "..."``."""
    names = "|".join(re.escape(n) for n in KINDS)
    for k, line in enumerate((SRC / module).read_text().splitlines(), start=1):
        if re.search(rf"[\"']({names})[\"']", line):
            assert re.fullmatch(rf"\s+kind = \"({names})\"", line), f"{module}:{k}: {line}"
