"""Atomic training checkpoints.

One file, ``<dir>/checkpoint.pt``, rewritten after every epoch through a temporary file and
``os.replace`` (an interruption leaves the previous epoch's checkpoint intact). It holds the model
and optimiser ``state_dict``s, the number of finished epochs, the RNG states (torch's global RNG
and the loss's ``torch.Generator``), the best-so-far (validation score, epoch, weights), the history
and the stopping state, plus a *fingerprint* of the training options and data so that
``resume=True`` never continues a different run. Read back with ``weights_only=True``.

A folder serves one run at a time: :func:`lock_checkpoint_dir` takes an exclusive ``flock`` on
``<dir>/.ndcglab-lock`` (the command line takes it before reading data, :func:`save_checkpoint`
takes it too), held until the process exits, so a second run on the same folder is refused
rather than interleaved with the first.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from .._compat import torch as _torch
from ..errors import NdcglabError

torch = _torch()

__all__ = [
    "CHECKPOINT_NAME",
    "CheckpointError",
    "load_checkpoint",
    "lock_checkpoint_dir",
    "save_checkpoint",
]

CHECKPOINT_NAME = "checkpoint.pt"
LOCK_NAME = ".ndcglab-lock"
_LOCKS: dict[str, int] = {}  # folder (real path) -> the descriptor holding its lock
FORMAT = "ndcglab-checkpoint"


class CheckpointError(NdcglabError, ValueError):
    """A checkpoint cannot be resumed (another run's, or unreadable)."""


def checkpoint_path(directory: str | os.PathLike[str]) -> Path:
    return Path(directory) / CHECKPOINT_NAME


def lock_checkpoint_dir(directory: str | os.PathLike[str]) -> None:
    """Take this process's exclusive lock on the checkpoint folder ``directory`` (created when
    missing), held until the process exits; a no-op when this process holds it already. Raises
    :class:`CheckpointError` when another process holds it (where ``flock`` is unavailable, the
    folder is not locked)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        return
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(folder)
    if key in _LOCKS:
        return
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise CheckpointError(
            f"{directory} is in use: another training run holds its lock "
            f"({folder / LOCK_NAME}). Fix: wait for that run to finish, or give this run "
            "another --checkpoint folder"
        ) from None
    except OSError:  # a file system without locks: go on unlocked
        os.close(fd)
        return
    _LOCKS[key] = fd


def save_checkpoint(directory: str | os.PathLike[str], state: dict[str, Any]) -> Path:
    """Write ``state`` atomically to ``directory/checkpoint.pt``."""
    from .._atomic import write_bytes_atomic

    lock_checkpoint_dir(directory)
    buf = io.BytesIO()
    torch.save({"format": FORMAT, **state}, buf)
    return write_bytes_atomic(checkpoint_path(directory), buf.getvalue())


def load_checkpoint(directory: str | os.PathLike[str], fingerprint: str) -> dict[str, Any] | None:
    """The checkpoint in ``directory`` (``None`` if there is none); refuses another run's."""
    path = checkpoint_path(directory)
    if not path.exists():
        return None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # corrupt, truncated or foreign file; nothing of it is executed
        # torch's own message suggests loading with weights_only=False, which would run any
        # code pickled in the file: it is not passed on
        raise CheckpointError(
            f"{path}: the checkpoint is unreadable (damaged, truncated, or not written by "
            f"ndcglab; {type(exc).__name__}). Fix: restart training from scratch - delete "
            f"{path} (or give a new checkpoint= folder) and run the same command again, with "
            "or without resume=True"
        ).naming("checkpoint", "resume") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise CheckpointError(
            f"{path} is not an ndcglab training checkpoint. Fix: use another checkpoint= folder"
        ).naming("checkpoint")
    if state.get("fingerprint") != fingerprint:
        raise CheckpointError(
            f"{path} was written by a run with other training options or data "
            f"({state.get('fingerprint_text', '?')}). Fix: resume with the same options and data, "
            "or use a new checkpoint= folder"
        ).naming("checkpoint")
    return state
