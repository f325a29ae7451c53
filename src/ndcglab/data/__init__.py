"""Data: the in-memory ranking dataset, readers and writers of LETOR/SVMlight, TREC and score files,
fold loaders and the seeded synthetic generator."""

from .dataset import QueryView, RankingDataset, boundaries_from_group, pad_segments

__all__ = ["QueryView", "RankingDataset", "boundaries_from_group", "pad_segments"]
