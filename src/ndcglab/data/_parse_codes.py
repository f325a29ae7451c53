"""Status codes and qid modes shared by the LETOR parser's Numba kernels and its Python side.

They live apart from :mod:`._parse_kernels` so that reading them does not load Numba.
"""

# ----------------------------------------------------------------------------- status codes
EXACT = 0
APPROX = 1
INVALID = 2
NULL = 3

# parse_block statuses
S_OK = 0
S_BAD_LABEL = 1
S_MISSING_QID = 2
S_UNEXPECTED_QID = 3
S_EMPTY_QID = 4
S_BAD_PAIR = 5
S_BAD_INDEX = 6
S_DUP_INDEX = 7
S_BAD_VALUE = 8
S_INDEX_TOO_LARGE = 9
S_NEED_WIDER = 10
S_UNKNOWN_KEY = 11
S_VALUE_RANGE = 12

# qid modes
QID_UNKNOWN = -1
QID_NO = 0
QID_YES = 1
