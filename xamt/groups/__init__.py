"""The execution-validated group registry.

Candidate groups from matching (:mod:`xamt.matching`) are run in the sandbox on canonical inputs
(:mod:`xamt.inputs`); pairs that agree are joined (union-find), each component is checked as a
whole, members' dtypes are probed, and the result is stored as :class:`RegisteredGroup` s
(:mod:`.model`), which the fuzzer loads with :func:`load_registry`.
"""
