"""Warnings attributed to the user's code: :func:`warn_user`; and :func:`terminal_safe`, the one
helper that makes a message (and the paths in it) safe to print on a terminal.

A warning's file and line (what Python prints, and what ``-W`` / ``warnings.filterwarnings(...,
module=...)`` match) are those of the first caller outside the ndcglab package, however deep
inside ndcglab the warning arises: the same for ``read_letor``, ``load_dataset``, a cached read
or the command line.
"""

from __future__ import annotations

import os
import re
import sys
import warnings

__all__ = ["terminal_safe", "warn_user"]

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn_user(message: str | Warning, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn(message, category)`` at the first frame whose file is not in ndcglab."""
    frame = sys._getframe(1)
    level = 1
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level + 1)


#: characters a terminal may act on: C0 controls (ESC starts colour and title sequences, BEL
#: ends them, CR and BS overwrite what was printed), DEL, C1 controls (CSI U+009B, OSC U+009D),
#: the bidirectional overrides and isolates that reorder the text shown, and the line and
#: paragraph separators (a pattern compiled on first use, by ``re``'s cache: not at start-up)
_UNSAFE = "[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]"


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group(0))
    if c == 0x1B:
        return "\\e"
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def terminal_safe(text: object, *, keep_layout: bool = False) -> str:
    """``text`` with every character a terminal would act on written as an escape: ESC as
    ``\\e``, other controls as ``\\xNN`` (tab ``\\x09``, newline ``\\x0a``), bidirectional
    controls as ``\\uNNNN``; so a file name such as ``$'\\e[31mred.txt'`` or one holding a
    title-setting sequence (``ESC ] 0 ; ... BEL``) is shown, not obeyed, and a message stays one
    line. Printable text (any script) is kept. Paths are decoded from bytes as the file system
    encodes them (undecodable bytes become ``\\udcNN`` surrogates, shown as ``\\udcNN``).
    ``keep_layout=True`` keeps newlines and tabs (a table or a multi-line report printed as a
    whole) and escapes everything else the same way."""
    if isinstance(text, bytes):
        text = os.fsdecode(text)
    if keep_layout:
        return "\n".join(
            "\t".join(terminal_safe(cell) for cell in line.split("\t"))
            for line in str(text).split("\n")
        )
    out = re.sub(_UNSAFE, _escape, str(text))
    if any("\ud800" <= c <= "\udfff" for c in out):
        out = "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in out)
    return out
