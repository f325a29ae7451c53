"""Slow, obviously-correct references for the data tests (pure Python loops, no ndcglab code)."""

from __future__ import annotations

import math
import random

import numpy as np


def comment_pairs(comment: str) -> dict[str, str]:
    """``key = value`` / ``key=value`` pairs of a comment; the last value of a key wins."""
    toks = comment.split()
    out: dict[str, str] = {}
    i = 0
    while i < len(toks):
        t = toks[i]
        if "=" in t:
            k, _, v = t.partition("=")
            if k and v:
                out[k] = v
            i += 1
        elif i + 2 < len(toks) and toks[i + 1] == "=":
            out[t] = toks[i + 2]
            i += 3
        else:
            i += 1
    return out


def parse_letor(text: str) -> dict:
    """Parse LETOR text line by line with ``str.split`` and ``float``."""
    labels, qids, feats, comments = [], [], [], []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        body, _, comment = s.partition("#")
        toks = body.split()
        labels.append(float(toks[0]))
        qids.append(toks[1][4:])
        row = {}
        for t in toks[2:]:
            k, v = t.split(":", 1)
            row[int(k)] = math.nan if v == "NULL" else float(v)
        feats.append(row)
        comments.append(comment_pairs(comment))
    width = max((max(r) for r in feats if r), default=0)
    X = np.zeros((len(feats), width), dtype=np.float32)
    for i, r in enumerate(feats):
        for k, v in r.items():
            X[i, k - 1] = np.float32(v)
    starts = [0] + [i for i in range(1, len(qids)) if qids[i] != qids[i - 1]]
    return {
        "labels": np.array(labels),
        "X": X,
        "qids": [qids[i] for i in starts],
        "boundaries": np.array([*starts, len(qids)]),
        "comments": comments,
    }


def fill_missing(X: np.ndarray, boundaries, mode: str) -> np.ndarray:
    """Per-query NaN filling with explicit loops: 'min' (all NaN -> 0), 'zero', 'nan'."""
    X = X.copy()
    if mode == "nan":
        return X
    for q in range(len(boundaries) - 1):
        lo, hi = int(boundaries[q]), int(boundaries[q + 1])
        for j in range(X.shape[1]):
            present = [float(X[r, j]) for r in range(lo, hi) if not math.isnan(X[r, j])]
            fill = 0.0 if mode == "zero" or not present else min(present)
            for r in range(lo, hi):
                if math.isnan(X[r, j]):
                    X[r, j] = fill
    return X


def random_value(rng: random.Random) -> str:
    """A feature value in one of many spellings."""
    v = rng.uniform(-1000, 1000) * 10 ** rng.randint(-6, 3)
    kind = rng.randrange(10)
    if kind == 0:
        return "NULL"
    if kind == 1:
        return repr(v)
    if kind == 2:
        return f"{v:.3e}"
    if kind == 3:
        return str(rng.randint(-5, 5))
    if kind == 4:
        return f"{v:+.4f}"
    if kind == 5:
        return f".{rng.randint(0, 999):03d}"
    if kind == 6:
        return "0.12345678901234567890123"
    if kind == 7:
        return f"{v:.6f}"
    if kind == 8:
        return f"{rng.randint(0, 9)}."
    return f"{v:.9g}"


def random_letor(rng: random.Random, n_queries: int = 8, width: int = 12, crlf: bool = False,
                 sparse: bool = True) -> str:  # fmt: skip
    """Random LETOR text: sparse rows, odd spacing, comments with keys, blank/comment lines."""
    nl = "\r\n" if crlf else "\n"
    lines = ["# a header comment"]
    for q in range(n_queries):
        for i in range(rng.randint(1, 6)):
            label = rng.choice(["0", "1", "2", "3", "0.5", "1e0", "2.25"])
            parts = [label, f"qid:q{q}"]
            for j in range(1, width + 1):
                if not sparse or rng.random() < 0.6:
                    parts.append(f"{j}:{random_value(rng)}")
            sep = rng.choice([" ", "  ", "\t"])
            line = sep.join(parts)
            c = rng.randrange(4)
            if c == 1:
                line += f" #docid = D{q}-{i} inc = {rng.random()!r} prob = {rng.random():.5f}"
            elif c == 2:
                line += f"#docid=X{q}_{i} note free words"
            elif c == 3:
                line += " # just words"
            lines.append(line + rng.choice(["", " ", "\t"]))
            if rng.random() < 0.1:
                lines.append(rng.choice(["", "   ", "# comment line"]))
    return nl.join(lines) + nl
