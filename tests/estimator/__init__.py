"""Tests of ndcglab.estimator: the scikit-learn style NDCGRanker."""
