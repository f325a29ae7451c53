"""Cross-validation folds laid out as the LETOR packages do.

A *fold folder* holds one file per part, under either naming scheme (each possibly ``.gz``):

* ``train.txt``, ``vali.txt``, ``test.txt`` (LETOR 4.0, MSLR, OHSUMED QueryLevelNorm), or
* ``trainingset.txt``, ``validationset.txt``, ``testset.txt`` (LETOR 3.0 raw "Feature-null").

:func:`load_letor_folder` accepts the dataset folder (with ``Fold1``, ``Fold2``, ... inside, in
numeric order) or one fold folder. Parts load lazily on first access and stay cached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import DataFormatError
from ._files import PathLike
from .dataset import RankingDataset

__all__ = [
    "Fold",
    "fold_parts",
    "load_letor_folder",
    "rotation_folds",
    "rotation_indices",
    "write_letor_folder",
]

_NAMES = {
    "train": ("train", "trainingset"),
    "vali": ("vali", "validationset", "valid", "validation"),
    "test": ("test", "testset"),
}
_FOLD_RE = re.compile(r"^fold(\d+)$", re.IGNORECASE)


@dataclass
class Fold:
    """One fold: its name and the paths of its parts; ``.train/.vali/.test`` read on demand.

    ``read_options`` are passed to :func:`ndcglab.data.read_letor` (e.g. ``missing="min"``).
    A part whose file is absent has path ``None``; reading it raises :class:`DataFormatError`.
    """

    name: str
    train_path: Path | None
    vali_path: Path | None
    test_path: Path | None
    read_options: dict[str, Any] = field(default_factory=dict, repr=False)
    _cache: dict[str, RankingDataset] = field(default_factory=dict, repr=False, compare=False)

    def _load(self, part: str) -> RankingDataset:
        if part not in self._cache:
            p = getattr(self, f"{part}_path")
            if p is None:
                raise DataFormatError(
                    f"fold {self.name!r} has no {part} file",
                    fix=f"add {part}.txt (or .txt.gz) to the fold folder",
                )
            from .letor import read_letor

            self._cache[part] = read_letor(p, **self.read_options)
        return self._cache[part]

    @property
    def train(self) -> RankingDataset:
        """The training part (read on first access, then cached)."""
        return self._load("train")

    @property
    def vali(self) -> RankingDataset:
        """The validation part (read on first access, then cached)."""
        return self._load("vali")

    @property
    def test(self) -> RankingDataset:
        """The test part (read on first access, then cached)."""
        return self._load("test")

    @property
    def paths(self) -> dict[str, Path | None]:
        """``{"train": ..., "vali": ..., "test": ...}``."""
        return {"train": self.train_path, "vali": self.vali_path, "test": self.test_path}

    def clear_cache(self) -> None:
        """Forget the parts read so far (to free memory)."""
        self._cache.clear()


def rotation_indices(
    n_queries: int, n_folds: int = 5, *, seed: int = 0
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """LETOR-style rotation over ``n_folds`` query parts: ``(train, vali, test)`` query indices.

    Queries are shuffled with ``seed`` (``numpy.random.default_rng``) and cut into ``n_folds``
    parts P1..Pn (``numpy.array_split``); fold i trains on the parts i..i+n−3, selects on part
    i+n−2 and tests on part i+n−1 (indices mod n), so every query is tested exactly once over
    the folds. Each index array is sorted (queries keep their order in the dataset).
    """
    if n_folds < 3:
        raise DataFormatError(
            f"need at least 3 folds (train/vali/test), got {n_folds}", fix="use 3 or more folds"
        )
    rng = np.random.default_rng(seed)
    order = rng.permutation(n_queries)
    parts = np.array_split(order, n_folds)
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for i in range(n_folds):
        idx = [(i + j) % n_folds for j in range(n_folds)]
        train = np.sort(np.concatenate([parts[j] for j in idx[: n_folds - 2]]))
        out.append((train, np.sort(parts[idx[-2]]), np.sort(parts[idx[-1]])))
    return out


def rotation_folds(ds: RankingDataset, n_folds: int = 5, *, seed: int = 0) -> list[Fold]:
    """The folds of :func:`rotation_indices` over one dataset, as :class:`Fold` objects
    (``Fold1`` …, parts held in memory, no paths)."""
    folds = []
    for i, (train, vali, test) in enumerate(rotation_indices(ds.n_queries, n_folds, seed=seed)):
        fold = Fold(f"Fold{i + 1}", None, None, None)
        fold._cache.update(train=ds.subset(train), vali=ds.subset(vali), test=ds.subset(test))
        folds.append(fold)
    return folds


def _find_part(folder: Path, part: str) -> Path | None:
    for stem in _NAMES[part]:
        for suffix in (".txt", ".txt.gz", ".gz", ""):
            p = folder / f"{stem}{suffix}"
            if p.is_file():
                return p
    return None


def _fold_from_dir(folder: Path, name: str, options: dict[str, Any]) -> Fold | None:
    parts = {k: _find_part(folder, k) for k in _NAMES}
    if all(v is None for v in parts.values()):
        return None
    return Fold(name, parts["train"], parts["vali"], parts["test"], dict(options))


def load_letor_folder(path: PathLike, **read_options: Any) -> list[Fold]:
    """The folds under ``path`` (``Fold1..FoldN`` sub-folders, or ``path`` itself as one fold).

    ``read_options`` go to :func:`ndcglab.data.read_letor` when a part is read.
    Raises :class:`DataFormatError` when no fold is found.
    """
    root = Path(path)
    if not root.is_dir():
        raise DataFormatError(
            "not a folder", path=root, fix="give the dataset folder holding Fold1..Fold5"
        )
    subs = []
    for d in root.iterdir():
        m = _FOLD_RE.match(d.name)
        if m and d.is_dir():
            subs.append((int(m.group(1)), d))
    folds = []
    for _, d in sorted(subs):
        f = _fold_from_dir(d, d.name, read_options)
        if f is not None:
            folds.append(f)
    if not folds:
        single = _fold_from_dir(root, root.name, read_options)
        if single is not None:
            folds.append(single)
    if not folds:
        raise DataFormatError(
            "no LETOR folds found (no Fold1..FoldN folders with train/vali/test files, and no "
            "such files here)",
            path=root,
            fix="point to the dataset folder (e.g. MQ2008/ with Fold1..Fold5 inside) or to one "
            "FoldN folder holding train.txt, vali.txt, test.txt (or trainingset.txt, "
            "validationset.txt, testset.txt), optionally .gz",
        )
    return folds


def fold_parts(n_queries: int, n_folds: int = 5, *, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """The query indices of each fold's train, vali and test parts: the folds of
    :func:`rotation_indices` (LETOR's rotation over shuffled query parts, the folds
    ``ndcglab cv synthetic:NAME --seed SEED`` builds), as dicts. Each query is tested in exactly
    one fold."""
    if n_folds < 3:
        raise DataFormatError(
            f"{n_folds} folds cannot hold a train, a validation and a test block",
            fix="use 3 folds or more (LETOR uses 5)",
        )
    if n_queries < n_folds:
        raise DataFormatError(
            f"{n_queries} queries cannot fill {n_folds} folds",
            fix=f"generate at least {n_folds} queries, or fewer folds",
        )
    return [
        {"train": train, "vali": vali, "test": test}
        for train, vali, test in rotation_indices(n_queries, n_folds, seed=seed)
    ]


def write_letor_folder(
    path: PathLike, dataset: RankingDataset, n_folds: int = 5, *, sparse: bool = False
) -> Path:
    """Write ``dataset`` as a LETOR fold folder ``path/Fold1..Foldk/{train,vali,test}.txt``
    (parts from :func:`fold_parts`), readable by :func:`load_letor_folder` and ``ndcglab cv``.

    The folder is written whole to a temporary folder beside ``path`` and renamed into place,
    so an interruption leaves nothing half-written; ``path`` must not exist or be an empty
    folder (an existing folder with content is refused, never replaced)."""
    import os
    import shutil
    import tempfile

    from .._atomic import remove_stale_temporaries, temporary_prefix
    from .writers import write_svmlight

    target = Path(path)
    parts = fold_parts(dataset.n_queries, n_folds)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise DataFormatError(
            "the fold folder exists and is not empty (nothing was written)",
            path=target,
            fix="give a new folder name, or remove the old folder first",
        )
    parent = target.parent if str(target.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(parent, target.name)
    tmp = Path(tempfile.mkdtemp(prefix=temporary_prefix(target.name) + "tmp-", dir=parent))
    try:
        for i, fold in enumerate(parts, start=1):
            d = tmp / f"Fold{i}"
            d.mkdir()
            for part, queries in fold.items():
                write_svmlight(d / f"{part}.txt", dataset.subset(queries), sparse=sparse)
        os.chmod(tmp, 0o777 & ~_umask())
        if target.is_dir():
            target.rmdir()  # empty: checked above
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _umask() -> int:
    import os

    mask = os.umask(0)
    os.umask(mask)
    return mask
