"""The torch device of a training run: :func:`resolve_device`."""

from __future__ import annotations

from typing import Any

from .._compat import torch as _torch
from ..errors import SpecError

torch = _torch()

__all__ = ["resolve_device"]


def resolve_device(device: str | Any) -> Any:
    """``"cpu"``, ``"cuda"``, ``"cuda:N"`` or ``"auto"`` (CUDA if available) -> ``torch.device``."""
    if isinstance(device, torch.device):
        dev = device
    else:
        name = str(device).lower()
        if name == "auto":
            return torch.device("cuda" if torch.cuda.is_available() else "cpu")
        try:
            dev = torch.device(name)
        except RuntimeError:
            raise SpecError(f"unknown device {device!r}; known: cpu, cuda, cuda:N, auto") from None
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise SpecError(
            f"device {str(device)!r} was requested but CUDA is not available to torch "
            f"{torch.__version__}. Fix: use device='cpu' or 'auto'"
        )
    if dev.type not in ("cpu", "cuda"):
        raise SpecError(f"unsupported device {device!r}; known: cpu, cuda, auto")
    return dev
