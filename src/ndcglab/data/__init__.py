"""Data: the in-memory ranking dataset, readers and writers of LETOR/SVMlight, TREC and score files,
fold loaders, the seeded synthetic generator, padding of lists and feature normalisation.

Importing this package is light (NumPy only): the readers, writers, fold loader, normaliser and
synthetic generator load on first use of one of their names, and the Numba tokenizer on the first
read that needs it.
"""

from typing import TYPE_CHECKING

from .._compat import lazy_names
from ._files import file_sha256, open_binary
from .dataset import (
    QueryView,
    RankingDataset,
    boundaries_from_group,
    boundaries_from_qids,
)
from .padding import length_buckets, pad_layout, pad_mask, pad_segments, segment_index

if TYPE_CHECKING:  # the lazily loaded names (see _LAZY below), for type checkers
    from .folds import Fold, load_letor_folder
    from .letor import default_cache_dir, read_letor, read_letor_bytes, read_query_file
    from .load import load_dataset
    from .normalize import NORMALIZATIONS, Normalizer
    from .synthetic import (
        SYNTHETIC_PREFIX,
        SYNTHETIC_SETS,
        SyntheticParams,
        format_synthetic_spec,
        is_synthetic_spec,
        make_synthetic,
        parse_synthetic_spec,
        synthetic_params,
    )
    from .trec import (
        RunWriter,
        dataset_to_qrels,
        document_names,
        read_qrels,
        read_qrels_bytes,
        read_run,
        read_run_bytes,
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
    "RunWriter",
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
    "read_letor_bytes",
    "read_qrels",
    "read_qrels_bytes",
    "read_query_file",
    "read_run",
    "read_run_bytes",
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
#: names whose modules load on first use: a command that reads only TREC files, or none, does
#: not import the LETOR reader, the fold loader or the generator
_LAZY = {
    **dict.fromkeys(_SYNTHETIC, "ndcglab.data.synthetic"),
    **dict.fromkeys(("Fold", "load_letor_folder"), "ndcglab.data.folds"),
    **dict.fromkeys(
        ("default_cache_dir", "read_letor", "read_letor_bytes", "read_query_file"),
        "ndcglab.data.letor",
    ),
    "load_dataset": "ndcglab.data.load",
    **dict.fromkeys(("NORMALIZATIONS", "Normalizer"), "ndcglab.data.normalize"),
    **dict.fromkeys(
        (
            "RunWriter",
            "dataset_to_qrels",
            "document_names",
            "read_qrels",
            "read_qrels_bytes",
            "read_run",
            "read_run_bytes",
            "read_trec",
            "write_run",
        ),
        "ndcglab.data.trec",
    ),
    **dict.fromkeys(("read_scores", "write_scores", "write_svmlight"), "ndcglab.data.writers"),
}
__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
