"""The execution layer: the one way a group member is called, and running groups in the sandbox.

* :mod:`xamt.exec.member` — a member's call, from its argument plan to its normalised output:
  the adapter hooks it needs, fixed-argument and slot conversion, binding (``Member.task``),
  the call itself (device scope included). The sandbox workers run members through it
  (:func:`~xamt.exec.member.run_members`), and the reproducer renderer (:mod:`xamt.repro`) has
  it describe the call it writes out, so a script calls a member as the worker did;
* :mod:`xamt.exec.probe` — which dtypes a member accepts (worker side of dtype probing);
* :mod:`xamt.exec.group` — the parent side: :class:`~xamt.exec.group.GroupExecutor` turns
  ``(group, input)`` pairs into sandbox tasks and their outcomes into member results;
* :mod:`xamt.exec.normalise` — output normalisation (library outputs to numpy trees, the named
  normalisers, the per-group rules);
* :mod:`xamt.exec.schedule` — keeping the pool busy with many step generators at once.

The layer sits just below :mod:`xamt.groups`: it imports the libraries' adapters, the member
model (:mod:`xamt.matching.model`) and the inputs, never groups, fuzz, triage or report.
Importing the package imports none of its modules (the workers load only what they run).
"""
