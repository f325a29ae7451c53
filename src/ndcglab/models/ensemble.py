"""An ensemble of models of one kind trained with different seeds: :class:`SeedEnsemble`.

The score of a document is the arithmetic mean of its members' scores (the ensembling of the
DASALC recipe, Qin et al., "Are Neural Rankers still Outperformed by Gradient Boosted Decision
Trees?", ICLR 2021). The ensemble is itself a :class:`~ndcglab.models.RankModel` of its members'
kind: its :meth:`~SeedEnsemble.config` is the first member's with one more key, ``ensemble``,
the list of every member's config, and :func:`ndcglab.models.build_model` rebuilds it from that;
its ``state_dict`` holds ``members.<i>.<name>``. It is saved, loaded, scored and exported as any
model of its kind.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from ..errors import SpecError
from .base import RankModel, nn, torch

__all__ = ["SeedEnsemble"]


class SeedEnsemble(RankModel):
    """The mean score of ``members`` (models of one kind and feature count)."""

    def __init__(self, members: Sequence[RankModel]) -> None:
        members = list(members)
        if not members:
            raise SpecError("an ensemble needs at least one member model")
        super().__init__(members[0].n_features)
        kinds = {m.kind for m in members}
        if len(kinds) != 1 or {m.n_features for m in members} != {self.n_features}:
            raise SpecError(
                f"an ensemble's members must be of one kind and feature count, got kinds "
                f"{sorted(kinds)} and {sorted({m.n_features for m in members})} features"
            )
        self.kind = members[0].kind
        self.listwise = members[0].listwise
        self.members = nn.ModuleList(members)

    def _mean(self, parts: list[Any]) -> Any:
        return torch.stack(parts).mean(0)

    def forward(self, x: Any, *args: Any) -> Any:
        return self._mean([m(x, *args) for m in self.members])

    def _each(self) -> list[RankModel]:
        return list(self.members)  # type: ignore[arg-type]

    def score_padded(self, x: Any, pad_index: Any, mask: Any) -> Any:
        return self._mean([m.score_padded(x, pad_index, mask) for m in self._each()])

    def score_lists(self, x: Any, boundaries: Any = None) -> Any:
        return self._mean([m.score_lists(x, boundaries) for m in self._each()])

    def predict_chunks(
        self, n_rows: int, boundaries: Any, batch_size: int
    ) -> Iterator[tuple[int, int, Any]]:
        first: RankModel = self.members[0]  # type: ignore[assignment]
        return first.predict_chunks(n_rows, boundaries, batch_size)

    def config(self) -> dict[str, Any]:
        members = [m.config() for m in self.members]  # type: ignore[operator]
        return {**members[0], "ensemble": members}
