"""Crash-safe forked executor pool."""
