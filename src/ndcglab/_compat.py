"""The one place that imports optional heavy dependencies.

Heavy libraries (torch, lightgbm, matplotlib, dask) are imported lazily by the modules that need
them, through these helpers, so ``import ndcglab`` and measuring stay light.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

from .errors import MissingDependencyError

_EXTRA_OF = {
    "torch": "torch",
    "lightgbm": "gbdt",
    "matplotlib": "plot",
    "dask": "distributed",
    "distributed": "distributed",
    "pandas": "distributed",
    "onnx": "onnx",
    "onnxruntime": "onnx",
    "onnxmltools": "onnx",
    "xgboost": "xgboost",
}


def require(module: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        top = module.split(".")[0]
        extra = _EXTRA_OF.get(top, "all")
        raise MissingDependencyError(
            f"{module!r} is needed for this feature but is not installed. "
            f"Fix: pip install 'ndcglab[{extra}]'"
            + (" (with torch==2.13.0 first for the CPU build)" if top == "torch" else "")
        ) from exc


#: Seconds a scatter of data to the Dask workers (one object to every worker, or blocks spread
#: over them) may take before ndcglab gives up on it and lets Dask ship the data with the tasks
#: that use it (same results, more traffic).
BROADCAST_TIMEOUT = 30.0


def _scatter(client: Any, value: Any, fallback: Callable[[Any], Any], **how: Any) -> Any:
    """``client.scatter(value, **how)`` under keys of its own (``hash=False``: with distributed's
    default hashed keys two scatters of equal data share keys, and releasing the first loses the
    second's data, "lost dependencies"), or ``fallback(value)`` after
    :data:`BROADCAST_TIMEOUT` seconds."""
    import asyncio

    try:
        return client.scatter(value, timeout=BROADCAST_TIMEOUT, hash=False, **how)
    except (TimeoutError, asyncio.TimeoutError):
        return fallback(value)


def broadcast(client: Any, value: Any, fallback: Callable[[Any], Any] = lambda v: v) -> Any:
    """``value`` on every worker of the Dask ``client``: ``client.scatter(value, broadcast=True)``
    (one copy per worker, a future in the task graph). distributed's scatter can stall for good
    on a loaded machine (dask/distributed issue 4907); after :data:`BROADCAST_TIMEOUT` seconds
    this returns ``fallback(value)`` instead — the value itself by default, or e.g.
    ``dask.delayed`` of it — which Dask sends along with the tasks (the same numbers)."""
    return _scatter(client, value, fallback, broadcast=True)


def scatter(
    client: Any, values: list[Any], fallback: Callable[[list[Any]], list[Any]] = lambda v: v
) -> list[Any]:
    """``values`` spread over the workers of the Dask ``client``: ``client.scatter(values)``
    (one future per value, each under a key of its own). As :func:`broadcast`, a scatter that
    has not finished after :data:`BROADCAST_TIMEOUT` seconds gives ``fallback(values)`` instead
    (e.g. one ``dask.delayed`` per value), which Dask ships with the tasks."""
    return list(_scatter(client, values, fallback))


def torch() -> ModuleType:
    """Return the ``torch`` module (the ``torch`` extra)."""
    return require("torch")


def lightgbm() -> ModuleType:
    """Return the ``lightgbm`` module (the ``gbdt`` extra)."""
    return require("lightgbm")


def pyplot() -> ModuleType:
    """Return ``matplotlib.pyplot`` with the non-interactive Agg backend (the ``plot`` extra)."""
    mpl = require("matplotlib")
    mpl.use("Agg", force=False)
    return require("matplotlib.pyplot")


def has(module: str) -> bool:
    """True when ``module`` can be imported."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def lazy_names(
    package: str, where: dict[str, str], public: list[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for a package whose names load on first use (PEP 562).

    ``where`` maps each lazily loaded name to the absolute module that defines it, so importing the
    package itself pulls in nothing heavy (torch loads only when a torch-backed name is used).
    """

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(where[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(public)

    return __getattr__, __dir__


def available_cores() -> int:
    """The cores this process may run on: ``len(os.sched_getaffinity(0))`` (a container's or
    ``taskset``'s limit), else ``os.cpu_count()``, at least 1."""
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Torch's intra-op threads set to ``n`` for the block in the calling thread, then put
    back (``None`` or 0: left as they are).

    :func:`torch.set_num_threads` (OpenMP builds) sets the number of the calling thread, which
    in the main thread is also the number threads started later begin with, and MKL's number
    for the process; a block within another gives the outer block its number back."""
    th = torch()
    before = th.get_num_threads()
    change = bool(n) and n != before
    if change:
        th.set_num_threads(int(n))  # type: ignore[arg-type]
    try:
        yield
    finally:
        if change:
            th.set_num_threads(before)


def kernel_threads() -> int:
    """Threads of the NumPy/Numba kernels (measures, scoring): ``NDCGLAB_NUM_THREADS`` when
    set (at least 1), else :func:`available_cores`."""
    import os

    env = os.environ.get("NDCGLAB_NUM_THREADS")
    if env:
        return max(1, int(env))
    return available_cores()


#: the environment variables through which OpenBLAS (NumPy's BLAS) takes its number of threads
BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")


def import_numpy_one_blas_thread() -> None:
    """Import NumPy with its OpenBLAS on one thread, for a process that does no BLAS work (the
    command line's ``evaluate``, ``trec_eval`` and ``list``).

    OpenBLAS starts one thread per core when it is loaded, and each thread spins for a while
    before it sleeps: CPU time that a process which never multiplies a matrix pays for nothing
    (20 to 40 ms of CPU per process on 2 cores, a sixth to a quarter of a small evaluation).
    Nothing is done when NumPy is already imported or when the user set one of
    :data:`BLAS_THREAD_VARIABLES` (their choice stands); otherwise ``OPENBLAS_NUM_THREADS=1``
    is set for the import only and removed after it, so child processes (Dask workers) and
    libraries loaded later (SciPy's own OpenBLAS) keep their defaults."""
    import os
    import sys

    if "numpy" in sys.modules or any(v in os.environ for v in BLAS_THREAD_VARIABLES):
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        del os.environ["OPENBLAS_NUM_THREADS"]


class FrozenFields:
    """What ``@dataclass(frozen=True)`` adds to a class, without compiling code at import.

    ``dataclass`` builds ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``
    and ``__delattr__`` of each class from source text (``exec``), about 0.5 ms a class, which
    every process that imports the class pays: two dozen of them were a quarter of the command
    line's own start-up. A class on that path is declared instead as
    ``@dataclass(init=False, repr=False, eq=False)`` (its fields stay dataclass fields:
    :func:`dataclasses.fields`, :func:`dataclasses.replace` and :func:`dataclasses.asdict` work
    as before) with this base and an explicit ``__init__`` that sets each field with
    ``object.__setattr__``. The methods here behave as the generated ones: ``repr`` is
    ``Name(field=value, ...)``, two objects are equal when they are of the same class and their
    fields are equal, the hash is that of the tuple of fields, and assigning or deleting an
    attribute raises :class:`dataclasses.FrozenInstanceError`.
    """

    __slots__ = ()

    def _field_values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _field_names(type(self)))

    def __repr__(self) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in _field_names(type(self)))
        return f"{type(self).__qualname__}({inner})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenFields) and other.__class__ is self.__class__:
            return self._field_values() == other._field_values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._field_values())

    def _frozen(self, name: str) -> bool:
        """As the generated methods: every attribute of the declared class itself, the fields
        only on an instance of a plain subclass."""
        own = "__dataclass_fields__" in type(self).__dict__
        return own or name in _field_names(type(self))

    def __setattr__(self, name: str, value: Any) -> None:
        if self._frozen(name):
            import dataclasses

            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if self._frozen(name):
            import dataclasses

            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super().__delattr__(name)


#: each :class:`FrozenFields` class's field names, in order (``dataclasses.fields`` builds a tuple
#: of Field objects on every call; hashing a measure is frequent)
_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(cls)
    if names is None:
        import dataclasses

        names = tuple(f.name for f in dataclasses.fields(cls))
        _FIELD_NAMES[cls] = names
    return names
