"""Data: the in-memory ranking dataset, readers and writers of LETOR/SVMlight, TREC and score files,
fold loaders and the seeded synthetic generator.

Importing this package is light (NumPy only); the Numba tokenizer loads on the first read.
"""

from ._io import file_sha256
from .dataset import QueryView, RankingDataset, boundaries_from_group, pad_segments
from .folds import Fold, load_letor_folder
from .io import load_dataset
from .letor import default_cache_dir, read_letor, read_query_file
from .synthetic import SYNTHETIC_SETS, SyntheticParams, make_synthetic, synthetic_params
from .trec import dataset_to_qrels, document_names, read_qrels, read_run, write_run
from .writers import read_scores, write_scores, write_svmlight

__all__ = [
    "SYNTHETIC_SETS",
    "Fold",
    "QueryView",
    "RankingDataset",
    "SyntheticParams",
    "boundaries_from_group",
    "dataset_to_qrels",
    "default_cache_dir",
    "document_names",
    "file_sha256",
    "load_dataset",
    "load_letor_folder",
    "make_synthetic",
    "pad_segments",
    "read_letor",
    "read_qrels",
    "read_query_file",
    "read_run",
    "read_scores",
    "synthetic_params",
    "write_run",
    "write_scores",
    "write_svmlight",
]
