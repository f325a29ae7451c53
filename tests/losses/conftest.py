"""Representative specs of every registered loss (the contract suite runs over all of them)."""

from __future__ import annotations

from ndcglab.losses import available_losses  # light: does not import torch

#: representative parameterisations; a registered differentiable loss missing here is still
#: tested under its default spec, and test_every_loss_has_representatives fails as a reminder.
REPRESENTATIVES: dict[str, list[str]] = {
    "squared": ["squared", "squared(gain=linear)"],
    "cosine": ["cosine"],
    "listnet": ["listnet", "listnet(gain=exp2)"],
    "listmle": ["listmle"],
    "consistent_squared": ["consistent_squared", "consistent_squared(norm=z1)"],
    "consistent_cosine": ["consistent_cosine(norm=z10)"],
    "consistent_listnet": ["consistent_listnet", "consistent_listnet(discount=linear,norm=z3)"],
    "bregman": ["bregman", "bregman(h=exp)", "bregman(outer=square)", "bregman(outer=exp)"],
    "qnorm": ["qnorm", "qnorm(form=penalised)", "qnorm(form=penalised,q=3)"],
    "cs_listmle": ["cs_listmle@3", "cs_listmle", "cs_listmle@0.5n"],
    "ranknet": ["ranknet", "ranknet(weight=gain)", "ranknet(sigma=2,weight=label)"],
    "ranksvm": ["ranksvm"],
    "lambdarank": ["lambdarank@3", "lambdarank@0.5n", "lambdarank(discount=zipf,gain=linear)"],
}


def differentiable_specs() -> list[str]:
    out = []
    for name in available_losses(kind="differentiable"):
        out.extend(REPRESENTATIVES.get(name, [name]))
    return out
