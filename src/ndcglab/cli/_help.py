"""Help texts of the sub-commands as plain text: module docstrings are written in
reStructuredText, the terminal shows them without its markup."""

from __future__ import annotations

import re

__all__ = ["description", "plain"]

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`]+)`")
_LITERAL = re.compile(r"``([^`]+)``")
_EMPHASIS = re.compile(r"`([^`]+)`")


def plain(text: str) -> str:
    """``text`` without reStructuredText markup: ````x```` and ```x``` become ``x``, roles such as
    ``:func:`~a.b``` become ``a.b``, ``**x**`` becomes ``x``."""
    text = _ROLE.sub(r"\1", text)
    text = _LITERAL.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    return text.replace("**", "")


def description(doc: str | None, paragraph: int = 1) -> str | None:
    """Paragraph ``paragraph`` (0-based) of a module docstring, as plain text, for ``--help``."""
    if not doc:
        return None
    parts = doc.split("\n\n")
    return plain(parts[paragraph]) if len(parts) > paragraph else None
