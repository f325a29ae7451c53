"""Numba kernel of the DBN's expectation step (:mod:`ndcglab.clicks.click_models`)."""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def dbn_expectations(
    docs: np.ndarray, clicks: np.ndarray, shown: np.ndarray, a: np.ndarray, s: np.ndarray,
    gamma: float,
) -> tuple[np.ndarray, np.ndarray, float, float]:  # fmt: skip
    """Expected counts of the DBN's EM over sessions (rows of ``docs``/``clicks``, ``shown``
    documents each): per document the clicks' examinations (a_den; a_num = clicks counted by
    the caller), the probability that each click satisfied (s_num; s_den = clicks), and the
    expected continuations and chances to continue (for gamma)."""
    n_docs = len(a)
    a_den = np.zeros(n_docs)
    s_num = np.zeros(n_docs)
    g_num = 0.0
    g_den = 0.0
    z = np.empty(docs.shape[1] + 2)
    for i in range(docs.shape[0]):
        m = shown[i]
        last = 0  # last clicked position, 1-based; 0: none
        for r in range(m):
            if clicks[i, r]:
                last = r + 1
        # Z[r] = P(no click at r..m | E_r = 1), r 1-based; Z[m+1] = 1
        z[m + 1] = 1.0
        for r in range(m, last, -1):
            ar = a[docs[i, r - 1]]
            z[r] = (1.0 - ar) * (1.0 - gamma + gamma * z[r + 1])
        if last == 0:
            pi = 1.0
            p_sat = 0.0
        else:
            sl = s[docs[i, last - 1]]
            pi = gamma * (1.0 - sl)
            p_obs = 1.0 - pi + pi * z[last + 1]
            p_sat = sl / p_obs if p_obs > 0 else 0.0
            s_num[docs[i, last - 1]] += p_sat
        after = 1.0 - pi + pi * z[last + 1]
        # positions up to the last click: examined; the clicks before it were not satisfying
        for r in range(1, last + 1):
            a_den[docs[i, r - 1]] += 1.0
            if r < last and r < m:
                g_num += 1.0
                g_den += 1.0
        # after the last click l: P(E_r = 1 | clicks) = pi prod_{l<j<r} (1 - a_j) gamma Z_r / after
        reach = pi  # P(E_{last+1} = 1) times the no-click path so far
        prev_exam = 1.0 if last > 0 else 0.0  # P(E_last = 1, S_last = 0 | obs) below
        if last > 0:
            prev_exam = 1.0 - p_sat
        for r in range(last + 1, m + 1):
            e_r = reach * z[r] / after if after > 0 else 0.0
            a_den[docs[i, r - 1]] += e_r
            if r - 1 >= 1:  # the decision at r-1 (examined, not satisfied) led to r
                g_num += e_r
                g_den += prev_exam
            prev_exam = e_r
            reach *= (1.0 - a[docs[i, r - 1]]) * gamma
        # the decision at m is never seen; a decision at last < m is counted in the loop
    return a_den, s_num, g_num, g_den
