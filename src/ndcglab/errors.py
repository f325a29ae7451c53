"""Exception types of ndcglab.

Every error a user can trigger is one of these. Each subclasses the matching built-in
(``ValueError``, ``KeyError``, ``ImportError``) so generic handlers keep working, and each
message says *what* was wrong, *where* (file and line for data) and *how to fix it*.
"""

from __future__ import annotations

from os import PathLike

# typing only for the type checker: ``ndcglab --version`` imports this module, and typing costs
# a few milliseconds of start-up
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

__all__ = [
    "ConventionError",
    "DataFormatError",
    "EmptyQueryError",
    "MissingDependencyError",
    "ModelMismatchError",
    "NdcglabError",
    "SpecError",
]


if TYPE_CHECKING:
    _E = TypeVar("_E", bound="NdcglabError")


class NdcglabError(Exception):
    """Base class of every error raised on purpose by ndcglab.

    A message that says which argument to change names it as a Python caller passes it
    (``lr=``, ``normalize='zscore'``, ``resume=True``: the name, ``=``, and a value as Python
    writes it, if any) and lists the names in ``parameters`` (:meth:`naming`); the command line
    prints its own option in their place (``--lr``, ``--normalize zscore``, ``--resume``).
    """

    #: the Python parameters the message names, in the form ``name=`` or ``name=value``
    parameters: tuple[str, ...] = ()

    def naming(self: _E, *parameters: str) -> _E:
        """Record the parameters the message names and return the error:
        ``raise SpecError("... Fix: give validation=").naming("validation")``."""
        self.parameters = tuple(parameters)
        return self


class DataFormatError(NdcglabError, ValueError):
    """A data file (LETOR/SVMlight, qrels, run, score file) could not be read.

    The message has the form ``PATH:LINE: what was wrong (token 'TOK'). Fix: what to do``.
    The parts are also kept as attributes for programs that want them.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | PathLike[str] | None = None,
        line: int | None = None,
        token: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.path = None if path is None else str(path)
        self.line = line
        self.token = token
        self.fix = fix
        self.reason = message
        where = ""
        if self.path is not None:
            from ._warn import terminal_safe  # a file name's control characters, escaped

            where = terminal_safe(self.path) + (f":{line}" if line is not None else "") + ": "
        elif line is not None:
            where = f"line {line}: "
        text = where + message
        if token is not None:
            shown = token if len(token) <= 60 else token[:57] + "..."
            text += f" (token {shown!r})"
        if fix:
            text += f". Fix: {fix}"
        super().__init__(text)


class SpecError(NdcglabError, ValueError):
    """A measure, loss or preset specification string could not be understood."""


class ConventionError(NdcglabError, ValueError):
    """A convention option (gain, discount, ties, empty-query rule, cut-off) is invalid."""


class EmptyQueryError(ConventionError):
    """Raised under ``empty=error`` when a query has no relevant document (IDCG = 0)."""


class ModelMismatchError(NdcglabError, ValueError):
    """A saved model does not fit the data it is applied to (features, normalisation)."""


class MissingDependencyError(NdcglabError, ImportError):
    """An optional dependency (torch, lightgbm, matplotlib, dask) is not installed."""
