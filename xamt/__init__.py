"""Xamt: differential fuzzing of deep-learning and array libraries."""

__version__ = "0.1.0"
