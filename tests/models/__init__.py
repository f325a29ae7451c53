"""Tests of ndcglab.models: the scoring models, AdaRank and the model file."""
