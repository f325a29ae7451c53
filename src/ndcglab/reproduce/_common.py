"""Pieces shared by the experiments: run settings, data sources with hashes, plots.

Data sources
------------
Every experiment runs on

* the embedded synthetic data (no ``--data``): ``make_synthetic("default", seed)``, cut into five
  LETOR-style folds by :func:`synthetic_folds` (query parts P1..P5; fold i trains on three parts,
  selects on the next and tests on the one after, as LETOR does), hashed from its arrays and
  generator parameters;
* a LETOR folder with ``Fold1..5`` (``--data``), read by :func:`ndcglab.data.load_letor_folder`,
  hashed from the files read (sha256 of the bytes as stored, and of the uncompressed text for
  ``.gz`` files — the latter names the data whether it is stored compressed or not);
* a single LETOR file (``--data FILE``) where an experiment needs one set only.

:class:`DataSource` hides the difference: ``source.folds(n)`` yields :class:`FoldData` with loaded
``train``/``vali``/``test`` datasets, and ``source.describe()`` the dataset description for the
report (with hashes).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..data.dataset import RankingDataset
from ..data.synthetic import format_synthetic_spec, is_synthetic_spec, parse_synthetic_spec
from ..errors import DataFormatError, NdcglabError

__all__ = [
    "KNOWN_COLLECTIONS",
    "DataSource",
    "FoldData",
    "Settings",
    "array_sha256",
    "coverage_text",
    "describe_dataset",
    "file_sha256",
    "known_collection",
    "normalize_text",
    "open_source",
    "synthetic_folds",
]


# ---------------------------------------------------------------------------------------- settings
@dataclass(frozen=True)
class Settings:
    """How an experiment runs.

    ``mode`` is ``"full"`` (the paper's protocol as far as this machine allows), ``"quick"``
    (``--quick``: fewer folds, epochs, repetitions and smaller n; the report says so) or ``"tiny"``
    (an internal mode for the test-suite: minimal data and work, numbers meaningless).
    """

    data: Path | None = None
    mode: str = "full"
    seed: int = 0
    command: tuple[str, ...] = ()
    log: Callable[[str], None] | None = field(default=None, compare=False, repr=False)
    #: feature normalisation of every trained model (``ndcglab.data.normalize.NORMALIZATIONS``;
    #: the experiments' own setting, z-score, by default)
    normalize: str = "zscore"

    def __post_init__(self) -> None:
        from ..data.normalize import NORMALIZATIONS

        if self.mode not in ("full", "quick", "tiny"):
            raise NdcglabError(f"unknown run mode {self.mode!r}; known: full, quick, tiny")
        if self.normalize not in NORMALIZATIONS:
            raise NdcglabError(
                f"unknown normalisation {self.normalize!r}; known: {', '.join(NORMALIZATIONS)}"
            )

    @property
    def quick(self) -> bool:
        """True for ``quick`` and ``tiny`` (both are reduced runs)."""
        return self.mode != "full"

    def say(self, message: str) -> None:
        """A progress message (stderr in the CLI; nothing when no logger is set)."""
        if self.log is not None:
            self.log(message)

    def pick(self, full: Any, quick: Any, tiny: Any | None = None) -> Any:
        """The value for the current mode (``tiny`` falls back to ``quick``)."""
        if self.mode == "full":
            return full
        if self.mode == "tiny" and tiny is not None:
            return tiny
        return quick


@contextmanager
def timed(timings: dict[str, float], key: str) -> Iterator[None]:
    """Add the wall time of the ``with`` block to ``timings[key]`` (seconds)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        timings[key] = timings.get(key, 0.0) + time.perf_counter() - t0


# ---------------------------------------------------------------------------------------- hashing
def file_sha256(path: str | Path) -> dict[str, str]:
    """sha256 of a file's bytes (``sha256``) and, for ``.gz``, of its uncompressed content
    (``sha256_uncompressed``: the same data give the same value, compressed or not)."""
    from ..data import file_sha256 as _sha

    out = {"sha256": _sha(path)}
    if str(path).endswith(".gz"):
        out["sha256_uncompressed"] = _sha(path, uncompressed=True)
    return out


def array_sha256(ds: RankingDataset) -> str:
    """sha256 over a dataset's arrays (features f32, labels f64, boundaries i64), in order."""
    h = hashlib.sha256()
    for a, dtype in ((ds.features, np.float32), (ds.labels, np.float64), (ds.boundaries, np.int64)):
        arr = np.ascontiguousarray(a, dtype=dtype)
        h.update(str(arr.shape).encode())
        h.update(arr.tobytes())
    return h.hexdigest()


# ------------------------------------------------------------------------------------ describing
def describe_dataset(ds: RankingDataset, name: str = "") -> dict[str, Any]:
    """Sizes, label counts, list lengths and queries without a relevant document (label ≥ 1)."""
    lengths = ds.query_lengths
    relevant = (
        np.add.reduceat((ds.labels >= 1).astype(np.int64), ds.boundaries[:-1])
        if ds.n_docs and ds.n_queries
        else np.zeros(0, dtype=np.int64)
    )
    if ds.n_queries and (lengths == 0).any():  # reduceat misreads empty segments
        relevant = np.array(
            [
                int((ds.labels[a:b] >= 1).sum())
                for a, b in zip(ds.boundaries[:-1], ds.boundaries[1:])
            ]
        )
    return {
        "name": name or (ds.source or "dataset"),
        "queries": ds.n_queries,
        "docs": ds.n_docs,
        "features": ds.n_features,
        "labels": {_label_key(k): v for k, v in ds.label_counts().items()},
        "list_length": {
            "min": int(lengths.min()) if len(lengths) else 0,
            "median": float(np.median(lengths)) if len(lengths) else 0.0,
            "max": int(lengths.max(initial=0)),
        },
        "queries_without_relevant": int((relevant == 0).sum()),
    }


def _label_key(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


# ---------------------------------------------------------------------------------------- folds
@dataclass
class FoldData:
    """One fold with loaded datasets (``vali`` may be ``None`` for a single-file source)."""

    name: str
    train: RankingDataset
    vali: RankingDataset | None
    test: RankingDataset


def synthetic_folds(
    ds: RankingDataset, n_folds: int = 5, *, seed: int = 0
) -> list[tuple[np.ndarray, ...]]:
    """LETOR-style rotation over ``n_folds`` query parts: ``(train, vali, test)`` query indices.

    Queries are shuffled with ``seed`` and cut into ``n_folds`` parts P1..Pn; fold i trains on the
    parts i..i+n−3, selects on part i+n−2 and tests on part i+n−1 (indices mod n), so every query
    is tested exactly once over the folds.
    """
    from ..data.folds import rotation_indices

    return [tuple(parts) for parts in rotation_indices(ds.n_queries, n_folds, seed=seed)]


@dataclass
class DataSource:
    """Where an experiment's data come from; see the module docstring.

    ``kind`` is ``"synthetic"``, ``"letor-folder"`` or ``"letor-file"``; ``label`` a short name for
    titles (``"synthetic:default"``, ``"MQ2008"``, ``"OHSUMED/QueryLevelNorm"``).
    """

    kind: str
    label: str
    path: Path | None = None
    synthetic_name: str = "default"
    seed: int = 0
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    _files: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)

    # -- loading ---------------------------------------------------------------------------
    @property
    def is_real(self) -> bool:
        return self.kind != "synthetic"

    def synthetic(self) -> RankingDataset:
        """The whole synthetic dataset (kind ``synthetic`` only)."""
        if "synthetic" not in self._cache:
            from ..data import make_synthetic

            self._cache["synthetic"] = make_synthetic(self.synthetic_name, seed=self.seed)
        return self._cache["synthetic"]

    def _register(self, path: Path, ds: RankingDataset) -> RankingDataset:
        """Remember a file read (for its hashes and description)."""
        key = str(path)
        if key not in self._files:
            self._cache[key] = ds
            self._files[key] = file_sha256(path)
        return ds

    def _read(self, path: Path) -> RankingDataset:
        from ..data import read_letor

        key = str(path)
        if key not in self._cache:
            self._register(path, read_letor(path))
        return self._cache[key]

    def n_folds_available(self) -> int:
        if self.kind == "letor-file":
            return 1
        if self.kind == "letor-folder":
            return len(self._letor_folds())
        return 5

    def _letor_folds(self) -> list[Any]:
        if "folds" not in self._cache:
            from ..data import load_letor_folder

            assert self.path is not None  # a LETOR source always has its path
            self._cache["folds"] = list(load_letor_folder(self.path))
        return self._cache["folds"]

    def folds(self, n: int | None = None, *, with_vali: bool = True) -> Iterator[FoldData]:
        """The first ``n`` folds (all when ``None``), each with loaded train/vali/test sets.

        A single-file source gives one "fold" that trains and tests on the same file (``vali``
        ``None``); callers must say so in their report (:meth:`single_file_note`).
        """
        if self.kind == "synthetic":
            ds = self.synthetic()
            splits = synthetic_folds(ds, 5, seed=self.seed)
            for i, (tr, va, te) in enumerate(splits[: n or 5]):
                yield FoldData(
                    f"Fold{i + 1}",
                    ds.subset(tr),
                    ds.subset(va) if with_vali else None,
                    ds.subset(te),
                )
        elif self.kind == "letor-file":
            assert self.path is not None  # a single-file source always has its path
            ds = self._read(self.path)
            yield FoldData(self.path.name, ds, None, ds)
        else:
            for fold in self._letor_folds()[: n or None]:
                train = self._register(Path(fold.train_path), fold.train)
                vali = self._register(Path(fold.vali_path), fold.vali) if with_vali else None
                test = self._register(Path(fold.test_path), fold.test)
                yield FoldData(fold.name, train, vali, test)

    def single_file_note(self) -> str:
        return (
            f"--data is a single file ({self.path}): the model is trained and evaluated on the "
            "same queries (no held-out test set); numbers are in-sample."
        )

    # -- description -----------------------------------------------------------------------
    def describe(self, datasets: Mapping[str, RankingDataset] | None = None) -> dict[str, Any]:
        """The dataset description for the report, with hashes of every file read so far."""
        info: dict[str, Any] = {"name": self.label, "kind": self.kind}
        if self.kind == "synthetic":
            ds = self.synthetic()
            from ..data import synthetic_params

            params = {
                "name": self.synthetic_name,
                "seed": self.seed,
                **_as_dict(synthetic_params(self.synthetic_name)),
            }
            info.update(describe_dataset(ds, self.label))
            info["source"] = format_synthetic_spec(self.synthetic_name, self.seed)
            info["params"] = params
            info["hashes"] = {"arrays_sha256": array_sha256(ds)}
            info["description"] = (
                "embedded synthetic data (ndcglab.data.make_synthetic); hash over "
                "features/labels/boundaries arrays; generator parameters below"
            )
        else:
            root = self.path
            assert root is not None  # a LETOR source always has its path
            info["source"] = str(root)
            info["hashes"] = {
                Path(k).relative_to(root).as_posix()
                if self.kind == "letor-folder"
                else Path(k).name: v
                for k, v in self._files.items()
            }
            info["description"] = (
                "LETOR folder with Fold1..5" if self.kind == "letor-folder" else "single LETOR file"
            )
            if self._files:
                seen_docs: dict[str, Any] = {}
                for k in self._files:
                    ds = self._cache[k]
                    seen_docs[
                        Path(k).relative_to(root).as_posix()
                        if self.kind == "letor-folder"
                        else Path(k).name
                    ] = describe_dataset(ds)
                info["files"] = seen_docs
                if self.kind == "letor-folder":
                    tests = [self._cache[k] for k in self._files if "test" in Path(k).name]
                    if tests:
                        info.update(_merge_descriptions([describe_dataset(d) for d in tests]))
                        info["name"] = self.label
                    collection = self._collection(root)
                    if collection is not None:
                        info["collection"] = collection
                        known = known_collection(collection["queries"], collection["features"])
                        if known:
                            info["sizes_match"] = known
                else:
                    info.update(describe_dataset(self._cache[next(iter(self._files))], self.label))
        if datasets:
            info["derived"] = {k: describe_dataset(v, k) for k, v in datasets.items()}
            info["derived_hashes"] = {k: array_sha256(v) for k, v in datasets.items()}
        return info

    def _collection(self, root: Path) -> dict[str, Any] | None:
        """Sizes of the whole collection: the first fold's training, validation and test parts
        together (LETOR folds partition the queries), when all three were read."""
        first = sorted({Path(k).parent for k in self._files})
        if not first:
            return None
        parts = [k for k in self._files if Path(k).parent == first[0]]
        if not all(any(role in Path(k).name for k in parts) for role in ("train", "vali", "test")):
            return None
        ds = [describe_dataset(self._cache[k]) for k in parts]
        return {
            "from": f"{first[0].relative_to(root).as_posix()}: train + vali + test",
            "queries": sum(d["queries"] for d in ds),
            "docs": sum(d["docs"] for d in ds),
            "features": ds[0]["features"],
        }


#: public LETOR collections by their sizes (queries, features); data are named after one only
#: when both sizes match — the folder's name is never taken as evidence
KNOWN_COLLECTIONS: dict[str, tuple[int, int]] = {
    "LETOR 3.0 OHSUMED": (106, 45),
    "LETOR 3.0 TD2003": (50, 64),
    "LETOR 3.0 TD2004": (75, 64),
    "LETOR 4.0 MQ2007": (1692, 46),
    "LETOR 4.0 MQ2008": (784, 46),
}


def known_collection(queries: int, features: int) -> str | None:
    """The public collection whose sizes (queries, features) the data have, or ``None``."""
    for name, sizes in KNOWN_COLLECTIONS.items():
        if sizes == (int(queries), int(features)):
            return name
    return None


def coverage_text(n_folds: int, total: int = 5) -> str:
    """Which queries the tests of ``n_folds`` of ``total`` LETOR-style folds cover: the whole
    collection only when every fold ran."""
    if total <= 1:
        return "the queries of the one file given, trained and tested on the same queries"
    if n_folds >= total:
        return f"every query of the collection is tested once over the {total} folds"
    return (
        f"the test parts of {n_folds} of the {total} folds: each of these queries is tested "
        f"once; the queries of the other {total - n_folds} test parts are not tested"
    )


def normalize_text(normalize: str) -> str:
    """How the features of every trained model are normalised, for the pages."""
    return {
        "zscore": "z-score features (mean and standard deviation of the training part)",
        "query_minmax": "features scaled to [0, 1] within each query",
        "none": "raw features (no normalisation)",
    }.get(normalize, f"features normalised by {normalize}")


def _merge_descriptions(ds: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    labels: dict[str, int] = {}
    for d in ds:
        for k, v in d["labels"].items():
            labels[k] = labels.get(k, 0) + v
    return {
        "queries": sum(d["queries"] for d in ds),
        "docs": sum(d["docs"] for d in ds),
        "features": ds[0]["features"],
        "labels": labels,
        "list_length": {
            "min": min(d["list_length"]["min"] for d in ds),
            "max": max(d["list_length"]["max"] for d in ds),
        },
        "queries_without_relevant": sum(d["queries_without_relevant"] for d in ds),
        "test_files": len(ds),
        "note": f"totals over the {len(ds)} test file(s) read"
        + (
            " (every query of the collection is tested exactly once)"
            if len(ds) == 5
            else " (not the whole collection: the other folds' test parts were not run)"
        ),
    }


def _as_dict(p: Any) -> dict[str, Any]:
    if isinstance(p, Mapping):
        return dict(p)
    if hasattr(p, "__dataclass_fields__"):
        from dataclasses import asdict

        return asdict(p)
    return {"params": str(p)}


def source_for(settings: Settings) -> DataSource:
    """The data source of a run: ``--data``, else the embedded ``default`` synthetic set (the
    ``small`` one in the test-suite's tiny mode)."""
    return open_source(
        settings.data,
        seed=settings.seed,
        synthetic="small" if settings.mode == "tiny" else "default",
    )


def open_source(
    data: str | Path | None, *, seed: int = 0, synthetic: str = "default"
) -> DataSource:
    """The :class:`DataSource` for ``--data`` (``None``: the embedded synthetic data)."""
    if data is None:
        return DataSource(
            "synthetic", format_synthetic_spec(synthetic), synthetic_name=synthetic, seed=seed
        )
    text = str(data)
    if is_synthetic_spec(text):
        name, s = parse_synthetic_spec(text, default_name=synthetic, default_seed=seed)
        return DataSource("synthetic", format_synthetic_spec(name), synthetic_name=name, seed=s)
    p = Path(data).expanduser().resolve()
    if not p.exists():
        raise DataFormatError(
            "no such file or folder",
            path=p,
            fix="give a LETOR folder with Fold1..5, a LETOR file, or leave --data out for the "
            "embedded synthetic data",
        )
    if p.is_dir():
        if not any((p / f"Fold{i}").is_dir() for i in range(1, 6)):
            inner = sorted(
                c.name
                for c in p.iterdir()
                if c.is_dir() and any((c / f"Fold{i}").is_dir() for i in range(1, 6))
            )
            raise DataFormatError(
                "folder has no Fold1..Fold5 sub-folders",
                path=p,
                fix=(
                    "its sub-folder(s) "
                    + ", ".join(inner)
                    + " have them: point --data at one (e.g. "
                    + str(p / inner[0])
                    + ")"
                    if inner
                    else "point --data at a LETOR folder such as MQ2008 (LETOR 4.0) or "
                    "OHSUMED/QueryLevelNorm (LETOR 3.0)"
                ),
            )
        return DataSource("letor-folder", _folder_label(p), path=p, seed=seed)
    return DataSource("letor-file", p.name, path=p, seed=seed)


def _folder_label(p: Path) -> str:
    if p.name in ("QueryLevelNorm", "Feature-null", "Gov", "NULL") and p.parent.name:
        return f"{p.parent.name}/{p.name}"
    return p.name


def preset_for(source: DataSource) -> str:
    """The evaluation preset for the data: ``letor4`` for MQ2007/MQ2008, else ``letor3``."""
    label = source.label.upper()
    return "letor4" if "MQ2007" in label or "MQ2008" in label else "letor3"


# ---------------------------------------------------------------------------------------- plots
def band_plot(
    ax: Any,
    x: Sequence[float] | np.ndarray,
    mean: Sequence[float] | np.ndarray,
    lo: Sequence[float] | np.ndarray | None,
    hi: Sequence[float] | np.ndarray | None,
    *,
    label: str,
    **kwargs: Any,
) -> None:
    """A line with a shaded band between ``lo`` and ``hi`` (no band when they are ``None``)."""
    (line,) = ax.plot(x, mean, label=label, **kwargs)
    if lo is not None and hi is not None:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.15, linewidth=0)


def subplots(
    n: int, *, ncols: int | None = None, size: tuple[float, float] = (4.6, 3.6)
) -> tuple[Any, Any]:
    """A figure with ``n`` panels (flat array of axes; unused panels hidden)."""
    from .._compat import pyplot

    plt = pyplot()
    ncols = ncols or min(n, 2)
    nrows = (n + ncols - 1) // ncols
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False
    )
    flat = axes.ravel()
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def seeds_for(seed: int, names: Sequence[str]) -> dict[str, int]:
    """Deterministic sub-seeds, one per name, derived from the master seed."""
    ss = np.random.SeedSequence(seed)
    return {name: int(s.generate_state(1)[0]) for name, s in zip(names, ss.spawn(len(names)))}


Progress = Callable[[str], None]
