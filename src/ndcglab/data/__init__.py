"""Data: the in-memory ranking dataset, readers and writers of LETOR/SVMlight, TREC and score files,
fold loaders, the seeded synthetic generator, padding of lists and feature normalisation.

Importing this package is light (NumPy only); the Numba tokenizer loads on the first read, the
synthetic generator on first use of one of its names.
"""

from .._compat import lazy_names
from ._files import file_sha256, open_binary
from .dataset import (
    QueryView,
    RankingDataset,
    boundaries_from_group,
    boundaries_from_qids,
)
from .folds import Fold, load_letor_folder
from .letor import default_cache_dir, read_letor, read_query_file
from .load import load_dataset
from .normalize import NORMALIZATIONS, Normalizer
from .padding import length_buckets, pad_layout, pad_mask, pad_segments, segment_index
from .trec import (
    dataset_to_qrels,
    document_names,
    read_qrels,
    read_run,
    read_trec,
    write_run,
)
from .writers import read_scores, write_scores, write_svmlight

__all__ = [
    "NORMALIZATIONS",
    "SYNTHETIC_PREFIX",
    "SYNTHETIC_SETS",
    "Fold",
    "Normalizer",
    "QueryView",
    "RankingDataset",
    "SyntheticParams",
    "boundaries_from_group",
    "boundaries_from_qids",
    "dataset_to_qrels",
    "default_cache_dir",
    "document_names",
    "file_sha256",
    "format_synthetic_spec",
    "is_synthetic_spec",
    "length_buckets",
    "load_dataset",
    "load_letor_folder",
    "make_synthetic",
    "open_binary",
    "pad_layout",
    "pad_mask",
    "pad_segments",
    "parse_synthetic_spec",
    "read_letor",
    "read_qrels",
    "read_query_file",
    "read_run",
    "read_scores",
    "read_trec",
    "segment_index",
    "synthetic_params",
    "write_run",
    "write_scores",
    "write_svmlight",
]

_SYNTHETIC = (
    "SYNTHETIC_PREFIX",
    "SYNTHETIC_SETS",
    "SyntheticParams",
    "format_synthetic_spec",
    "is_synthetic_spec",
    "make_synthetic",
    "parse_synthetic_spec",
    "synthetic_params",
)
__getattr__, __dir__ = lazy_names(
    __name__, dict.fromkeys(_SYNTHETIC, "ndcglab.data.synthetic"), __all__
)
