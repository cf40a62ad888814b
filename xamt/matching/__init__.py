"""Candidate matching: cross-library groups and relational APIs inside one library.

See :mod:`xamt.matching.model` for the data model the later stages consume and
:mod:`xamt.matching.engine` for how groups are built.
"""
