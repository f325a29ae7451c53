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

from ..errors import DataFormatError
from ._files import PathLike
from .dataset import RankingDataset

__all__ = ["Fold", "load_letor_folder"]

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
