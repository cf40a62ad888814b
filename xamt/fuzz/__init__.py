"""Fuzzing: input values, search and campaigns."""
