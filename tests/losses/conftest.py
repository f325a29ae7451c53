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
    "approx_ndcg": ["approx_ndcg", "approx_ndcg(alpha=5,discount=zipf,gain=linear)"],
    "gumbel_approx_ndcg": ["gumbel_approx_ndcg", "gumbel_approx_ndcg(beta=0.5,samples=3)"],
    "neural_ndcg": [
        "neural_ndcg",
        "neural_ndcg(form=transposed,tau=0.5)@3",
        "neural_ndcg(sinkhorn=0)",
    ],
    "lambdaloss": [
        "lambdaloss",
        "lambdaloss(scheme=ndcg1)@3",
        "lambdaloss(scheme=ndcg2pp)@3",
        "lambdaloss(pairs=both)@0.5n",
    ],
    "sigmoid_ce": ["sigmoid_ce", "sigmoid_ce(threshold=2)"],
    "ordinal": ["ordinal", "ordinal(levels=3)"],
    "softmax_ce": ["softmax_ce", "softmax_ce(target=gain,gain=exp2)", "softmax_ce(target=softmax)"],
}


def differentiable_specs() -> list[str]:
    out = []
    for name in available_losses(kind="differentiable"):
        out.extend(REPRESENTATIVES.get(name, [name]))
    return out
