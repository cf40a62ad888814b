"""Triage of raw divergences: reference, classification, deduplication, minimisation."""
