"""From a raw divergence to a filed finding: reference, outlier, class, minimal input, reproducer.

:class:`Candidate` is what the fuzz loop hands over: one group, one input, the members' results
and the oracle's signal. :class:`Triage` then

1. picks the **reference** — a float64 evaluation (the member of the library that ranks first
   as a pivot, run on the inputs upcast to float64) where the input holds lower-precision
   floats, else the member that agrees with the element-wise median;
2. names the **outlier** — the member farthest from that reference;
3. **classifies** the divergence from the evidence (:mod:`xamt.triage.classify`); a divergence
   on subnormal inputs that stays with the smallest normal numbers in their place is triaged
   afresh on that input, where no flushing can explain it;
4. **minimises** the input while the same member still diverges (:mod:`xamt.triage.minimise`);
5. writes a **reproducer** and **replays** it in a fresh process (:mod:`xamt.repro`); only a
   reproduced divergence becomes a :class:`~xamt.findings.Finding`.

Every library call goes through the campaign's :class:`~xamt.exec.group.GroupExecutor`.
The candidate and the de-duplication signatures are in :mod:`xamt.triage.dedup`, the choice of
reference and outlier in :mod:`xamt.triage.reference`.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from sandbox import native
from sandbox.errors import PoolClosedError

from xamt import literal, repro
from xamt.compare import compare_group, computation_tolerance
from xamt.findings import Finding, FindingClass, encode_evidence
from xamt.groups.agree import Agreement, input_dtypes
from xamt.exec.group import ExecItem, MemberResult
from xamt.exec.normalise import leaves
from xamt.exec.pools import compatible
from xamt.log import get_logger
from xamt.oracle import DEATH_STATUSES, ErrorKinds, SignalKind
from xamt.triage.classify import classify_value, flush_subnormals, loosely_agree, normal_stand_ins, ties_only
from xamt.triage.dedup import (Candidate, api_family, dominant_dtype, finding_signature, input_signature,
                               lineage_names, numeric_arrays, trigger, validation_family, crash_family,
                               cause_cluster, Lineage, load_lineage, RULE_CLASSES)
from xamt.triage.policy import (Policies, at_edge, computation_dtype, load_policies, narrowed, requested_dtypes,
                                undefined_everywhere, widths_elsewhere, beyond_seed, near_subnormal,
                                overflows_toward, own_check_of, matrix_flags, unseen_shapes,
                                rounded_to_integers)
from xamt.triage.domain import Domain, broken_domain, load_domains, onto_edge, wholly_outside
from xamt.triage.minimise import minimise
from xamt.triage.reference import (
    Conditioning, ReferenceChooser, agreement, call_rank, declared_originals, find_outlier, limit_at_infinity,
    implementation, load_call_order, element_moves, load_conditioning, none_holds, output_leaf, perturbed,
    pivot_order, shared_loss, upcast, within_noise, NO_MAJORITY,
)

__all__ = ["Candidate", "Triage", "TriageOutcome", "input_signature", "upcast", "declared_originals",
           "call_rank", "widen_integers"]

_log = get_logger("triage")
#: the record of a finding triaged afresh on the smallest normal numbers (``summary["moved_from"]``)
_MOVED_FROM_SUBNORMAL = ("the input held subnormal numbers, and the outlier parts from the reference with "
                         "the smallest normal numbers in their place too: the finding is filed on that input")
#: classes a subnormal intermediate flushed to zero can give (a NaN from 0 * inf, a 0 row, a
#: default-like factor), tested with the flushing experiment (:meth:`Triage._flushing_gives`)
_FLUSHABLE = (FindingClass.VALUE, FindingClass.NAN, FindingClass.PRECISION, FindingClass.DEFAULT,
              FindingClass.VALIDATION)
#: a Python extension module's file name (``_mt19937.cpython-311-x86_64-linux-gnu.so``,
#: ``_ccompare.abi3.so``): a package's own compiled code, not a library it ships beside it
_EXTENSION_MODULE = re.compile(r"\.(cpython-[\w-]+|abi3)\.(so|pyd)$")


def _api_label(members: Sequence[Any], index: int) -> str:
    """The outlier's name in a finding's key: the qualified name, with the call style where it
    runs another path than the plain function call (``tensorflow.cumsum [compiled]``,
    ``torch.add [out]``). The same API and path in two groups has one label, so their findings
    are one."""
    m = members[index]
    twins = sum(1 for o in members if o.qualname == m.qualname)
    other_path = m.call in ("compiled", "out") or (twins > 1 and m.call != "function")
    # a device twin's qualified name already names its device (torch.sum@cuda:0)
    return f"{m.qualname} [{m.call}]" if other_path else m.qualname


def structured_slots(inp: Any) -> set[int]:
    """Slots of a group input whose value has a structure (an SPD matrix, a probability vector,
    indices into another slot): the minimiser leaves them whole."""
    values = getattr(inp, "values", None) or {}
    return {slot for slot, v in values.items() if getattr(v, "structure", None)}


def widen_integers(values: Mapping[int, Any]) -> dict[int, Any] | None:
    """``values`` with integer arrays narrower than 64 bits as int64 (the exact result of most
    integer arithmetic on them); None if there are none."""
    out = dict(values)
    changed = False
    for slot, v in values.items():
        if isinstance(v, np.ndarray) and v.dtype.kind in "iu" and v.dtype.itemsize < 8:
            out[slot] = v.astype(np.int64)
            changed = True
    return out if changed else None


@dataclass
class TriageOutcome:
    """What triage made of a candidate: a finding (with evidence blobs) or why not."""

    finding: Finding | None
    inputs_blob: bytes = b""
    outputs_blob: bytes = b""
    dropped: str | None = None
    seconds: float = 0.0
    calls: int = 0


@dataclass
class Triage:
    """Turns candidates into verified findings (see the module docstring)."""

    executor: Any
    adapters: Mapping[str, Any]
    kinds: ErrorKinds
    out_dir: Path
    minimise_budget: int = 24
    verify_timeout: float = 120.0
    verify: bool = True
    #: reference preference among call styles inside one library (``triage.toml``)
    call_order: tuple[str, ...] = field(default_factory=lambda: load_call_order())
    #: documented numerical policies (``policies.toml``): matching findings are filed as such
    policies: Policies = field(default_factory=lambda: load_policies())
    #: how ill-conditioned inputs are told from wrong results (``triage.toml``, [conditioning])
    conditioning: Conditioning = field(default_factory=lambda: load_conditioning())
    #: argument domains the documentation states (``triage.toml`` [[domain]])
    domains: tuple[Domain, ...] = field(default_factory=lambda: load_domains())
    #: how findings of different APIs are told to share a root cause (``triage.toml`` [lineage])
    lineage: Lineage = field(default_factory=lambda: load_lineage())
    #: ``time.monotonic()`` after which minimisation stops (the campaign's budget): shrinking an
    #: input whose calls run into the sandbox timeout can take minutes
    deadline: float | None = None
    #: what replays reproducers (``verify(script, expect=, timeout=, crash_signal=)``): None is
    #: :func:`xamt.repro.verify`, a fresh interpreter per replay; a campaign passes a
    #: :class:`xamt.replay.ReplayServer`
    replayer: Any = None
    #: cross-library groups that referee a group inside one library
    #: (:func:`xamt.triage.reference.referee_index` of the campaign's groups)
    referees: Mapping[tuple[str, str], Sequence[Any]] = field(default_factory=dict)
    _calls: int = field(default=0, init=False)

    # -- helpers ------------------------------------------------------------------------------
    def _run(self, group: Any, values: Mapping[int, Any], members: Sequence[int],
             repeat: int = 1, flush_subnormals: bool = False, wide: bool = False) -> list[MemberResult]:
        self._calls += 1
        run = self.executor.run([ExecItem(group, dict(values), members=list(members), repeat=repeat,
                                          flush_subnormals=flush_subnormals, wide=wide)])[0]
        return run.results

    def _flushing_gives(self, group: Any, values: Mapping[int, Any], outputs: Mapping[int, Any],
                        live: Sequence[int], outlier: int, leaf: int, out_leaf: np.ndarray,
                        ref_leaf: np.ndarray, tol: Any, tries: int = 2) -> int | None:
        """A member of another library on the reference's side, in the outlier's precision,
        that gives the outlier's result once the CPU flushes subnormals to zero
        (:mod:`xamt.exec.fpmode`), or None: then a subnormal intermediate, flushed inside the
        outlier's computation, is the difference (XLA's triangular solve zeroing a row through
        1/3.4e38 under keras' ``cholesky_inverse``, where torch's float32 keeps it). At most
        ``tries`` members are run."""
        library = group.members[outlier].library
        for m in live:
            if m == outlier or group.members[m].library == library:
                continue
            own = output_leaf(outputs, m, leaf)
            if not (isinstance(own, np.ndarray) and own.shape == ref_leaf.shape and compare_group(
                    [ref_leaf, own], reference=0, tol=tol).values_agree):
                continue
            if tries <= 0:
                return None
            tries -= 1
            flushed = self._leaf_on(group, values, m, leaf, flush_subnormals=True)
            if (flushed is not None and flushed.shape == out_leaf.shape
                    and compare_group([out_leaf, flushed], reference=0, tol=tol).values_agree):
                return m
        return None

    def _leaf_on(self, group: Any, values: Mapping[int, Any], member: int, leaf: int,
                 flush_subnormals: bool = False, wide: bool = False) -> np.ndarray | None:
        """Leaf ``leaf`` of ``member``'s output on ``values`` (run with the CPU flushing
        subnormals to zero, or at full width, where asked), or None when it does not return an
        array there."""
        res = self._run(group, values, [member], flush_subnormals=flush_subnormals, wide=wide)
        lv = leaves(res[0].value) if res[0].ok else []
        return lv[leaf] if leaf < len(lv) and isinstance(lv[leaf], np.ndarray) else None

    def _lineage(self, group: Any, outlier: int, values: Mapping[int, Any],
                 cls_name: FindingClass, tied: int | None = None) -> dict[str, Any] | None:
        """What the outlier's finding is compared with other APIs' findings on
        (:func:`~xamt.triage.dedup.same_cause`): the kernels it runs on, its name and its call's
        footprint (:mod:`xamt.exec.footprint`). None for a policy (one cluster already) or a
        refusal (keyed by its namespace and rule); a crash gets a footprint only where the
        library's Python can run without executing (``[lineage.trace]``): else the call would
        crash or hang once more. ``tied``: a reference that no majority chose; its kernels and
        names are the lineage's ``either`` (the cause may be on its side)."""
        if cls_name == FindingClass.POLICY or cls_name in RULE_CLASSES:
            return None
        m = group.members[outlier]
        trace = self.lineage.trace.get(m.library)
        footprint = None
        run = getattr(self.executor, "footprint", None)
        if run is not None and (cls_name != FindingClass.CRASH or trace is not None):
            self._calls += 1
            footprint = run(m, values, trace=trace)
        def side(member: Any) -> dict[str, Any]:
            return {"library": member.library, "kernels": implementation(member, self.adapters),
                    **lineage_names(member, self.adapters.get(member.library))}

        either = side(group.members[tied]) if tied is not None and tied != outlier else None
        return {**side(m), "entry": (footprint or {}).get("entry"), "calls": (footprint or {}).get("calls", []),
                **({"either": either} if either else {})}

    def _bounded(self, still_fails: Callable[[dict[int, Any]], bool]) -> Callable[[dict[int, Any]], bool]:
        """``still_fails`` that answers False, without running anything, once the deadline has
        passed: the minimiser then keeps the smallest input found so far."""
        def bounded(vals: dict[int, Any]) -> bool:
            if self.deadline is not None and time.monotonic() > self.deadline:
                return False
            return still_fails(vals)
        return bounded

    def _agreement(self, group: Any) -> Agreement:
        return agreement(group)

    # -- reference and outlier (:mod:`xamt.triage.reference`) ---------------------------------
    def _pivot_order(self, group: Any, members: Sequence[int]) -> list[int]:
        return pivot_order(group, members, self.adapters, self.call_order)

    def _ranks_before(self, group: Any, members: Sequence[int], a: int, b: int) -> bool:
        """Whether member ``a`` comes before member ``b`` in ``members``' pivot order."""
        order = self._pivot_order(group, members)
        return a in order and b in order and order.index(a) < order.index(b)

    def _reference(self, group: Any, values: Mapping[int, Any], ok: Sequence[int],
                   outputs: Mapping[int, Any]) -> tuple[int, Any, str, dict[int, Any] | None]:
        """See :meth:`ReferenceChooser.choose`."""
        return ReferenceChooser(self.adapters, self.call_order, self._run, self.referees).choose(
            group, values, ok, outputs)

    def _outlier(self, group: Any, outputs: Mapping[int, Any], ok: Sequence[int], ref_member: int,
                 ref_value: Any, *, precise: bool = False,
                 inputs: Sequence[np.dtype] = ()) -> tuple[int | None, int]:
        """See :func:`find_outlier`."""
        return find_outlier(group, outputs, ok, ref_member, ref_value, precise=precise, inputs=inputs)

    def _noise(self, group: Any, values: Mapping[int, Any], ref_values: Mapping[int, Any], ref_member: int,
               leaf: int, ref_leaf: np.ndarray) -> np.ndarray | None:
        """How far the float64 reference's ``leaf`` moves, element by element, when the inputs
        move by one unit roundoff of their own dtype (:func:`perturbed`, the largest move of
        ``conditioning.draws`` random-sign perturbations; inf where it turned non-finite).
        A lower-precision evaluation cannot be expected closer than that.

        Only a move that shrinks with the perturbation counts: each draw runs again at a
        sixteenth of it, and an element that moves as far there (a step of ``floor`` or
        ``sign`` at an exact integer, a branch) is not ill-conditioned but discontinuous, and
        a wrong side of the step is a finding. None when the reference member does not return
        a comparable leaf there."""
        def move(seed: int, scale: float) -> np.ndarray | None:
            rng = np.random.Generator(np.random.PCG64([0xC0D1, seed]))  # the same signs per draw
            moved = self._leaf_on(group, perturbed(values, ref_values, rng, scale), ref_member, leaf)
            return element_moves(moved, ref_leaf) if moved is not None else None

        noise = np.zeros(ref_leaf.shape)
        for draw in range(self.conditioning.draws):
            big, small = move(draw, 1.0), move(draw, 1.0 / 16)
            if big is None or small is None:
                return None
            with np.errstate(all="ignore"):
                linear = (small > 0) & (small * 4 <= big)
            noise = np.maximum(noise, np.where(linear, big, 0.0))
        return noise

    # -- entry point --------------------------------------------------------------------------
    def process(self, cand: Candidate, campaign_id: int) -> TriageOutcome:
        start = time.monotonic()
        self._calls = 0
        try:
            if cand.kind in (SignalKind.CRASH, "crash"):
                out = self._crash(cand, campaign_id)
            elif cand.kind in (SignalKind.INTERNAL, "internal"):
                out = self._raised(cand, campaign_id, internal=True)
            elif cand.kind in (SignalKind.STATUS, "status"):
                out = self._raised(cand, campaign_id, internal=False)
            else:
                out = self._value(cand, campaign_id)
        except PoolClosedError:  # the campaign ended while this candidate was in triage
            out = TriageOutcome(None, dropped="the campaign ended during its triage")
        except Exception as exc:  # a triage bug must not end the campaign; say what broke
            _log.exception("triage of %s failed", cand.prekey)
            out = TriageOutcome(None, dropped=f"triage error: {type(exc).__name__}: {exc}")
        out.seconds = time.monotonic() - start
        out.calls = self._calls
        return out

    # -- value --------------------------------------------------------------------------------
    def _value(self, cand: Candidate, campaign_id: int, moved: bool = False) -> TriageOutcome:
        group = cand.group
        ok = [cand.members[i] for i, r in enumerate(cand.results) if r.ok]
        outputs = {cand.members[i]: r.value for i, r in enumerate(cand.results) if r.ok}
        ref_member, ref_value, ref_label, ref_values = self._reference(group, cand.values, ok, outputs)
        outlier, leaf = self._outlier(group, outputs, ok, ref_member, ref_value,
                                      precise=ref_values is not None, inputs=input_dtypes(cand.values))
        if outlier is None:
            return TriageOutcome(None, dropped="no member diverges from the reference")
        values = cand.values
        # minimise: the outlier still disagrees with the same-precision reference member
        same_ref = ref_member if ref_member != outlier else next(m for m in ok if m != outlier)
        agree = self._agreement(group)
        # called twice on the input it was found on, before minimising: on a minimised input of
        # one element a random draw repeats half the time (torch's feature_alpha_dropout with
        # p=0.5 and train=True was filed on a 1x1 input that two calls had drawn alike)
        if any(r.nondeterministic for r in self._run(group, values, [same_ref, outlier], repeat=2)):
            return TriageOutcome(None, dropped="nondeterministic: two calls on the same input differ")

        def still_fails(vals: dict[int, Any]) -> bool:
            res = self._run(group, vals, [same_ref, outlier])
            return res[0].ok and res[1].ok and not agree.pair(res[0].value, res[1].value,
                                                              input_dtypes(vals))

        if still_fails(values):
            values = minimise(values, self._bounded(still_fails), budget=self.minimise_budget,
                              frozen=structured_slots(cand.input)).inputs
        # evidence on the minimised input; on the input it was found on when another member is
        # the outlier there: the minimiser keeps the outlier apart from one reference member,
        # not the farthest from the reference (a smaller input can part a third member more)
        first_ref = ref_member
        for attempt in (values, cand.values) if values is not cand.values else (values,):
            values = attempt
            # every member called twice: a member that disagrees with itself (dropout validated
            # on p=0, fuzzed with p=0.5) has no value to compare, whatever the registry said
            results = self._run(group, values, ok, repeat=2)
            if any(r.nondeterministic for m, r in zip(ok, results) if m in (outlier, same_ref)):
                return TriageOutcome(None, dropped="nondeterministic: two calls on the same input differ")
            outputs = {m: r.value for m, r in zip(ok, results) if r.ok}
            if outlier not in outputs:
                return TriageOutcome(None, dropped="outlier no longer returns on the minimised input")
            # the members that return here (one may refuse the smaller input) are the voters
            live = [m for m in ok if m in outputs]
            # the reference afresh, in pivot order: a member passed over on the input it was found
            # on (its NaN where the others had numbers) may give it here
            ref_member, ref_value, ref_label, ref_values = self._reference(group, values, live, outputs)
            again, again_leaf = self._outlier(group, outputs, live, ref_member, ref_value,
                                              precise=ref_values is not None, inputs=input_dtypes(values))
            if again == outlier:
                break
            # a member ranked before the input's reference gives the reference on the minimised
            # input: its outlier stands. scipy's cauchy.ppf was passed over for its NaN at the q
            # outside [0, 1], which the minimiser dropped; at q = FLT_MIN its exact -1.35e37 is
            # the reference, and JAX's and torch's q - 0.5 (rounded to -0.5) the outliers
            if (again is not None and attempt is not cand.values and ref_member != first_ref
                    and self._ranks_before(group, live, ref_member, first_ref)
                    and not any(r.nondeterministic for m, r in zip(ok, results) if m == again)):
                outlier, leaf = again, again_leaf
                break
        out_leaf = output_leaf(outputs, outlier, leaf)
        ref_leaf = leaves(ref_value)[leaf] if ref_value is not None and leaf < len(leaves(ref_value)) else None
        arrays_compared = isinstance(out_leaf, np.ndarray) and isinstance(ref_leaf, np.ndarray)
        # the tolerance of the dtype the outlier computed in (its inputs and output), never a
        # float64 reference's own
        own_tol = (computation_tolerance(group.tolerance or None, [*input_dtypes(values), out_leaf.dtype])
                   if arrays_compared else None)
        # an input outside a documented domain: NaN is the answer there (scipy's uniform.ppf of
        # a negative q was blamed by a majority computing a number)
        domain = broken_domain(self.domains, group, values) if arrays_compared else None
        accepts = False  # the outlier returns a number where the reference's NaN is documented
        if (domain is not None and out_leaf.shape == ref_leaf.shape and out_leaf.dtype.kind in "fc"
                and ref_leaf.dtype.kind in "fc"):
            with np.errstate(invalid="ignore"):
                refuses = bool((np.isnan(out_leaf) & ~np.isnan(ref_leaf)).any())
                accepts = bool((~np.isnan(out_leaf) & np.isnan(ref_leaf)).any())
            if refuses and not accepts:
                return TriageOutcome(None, dropped=(
                    f"the input is outside the documented domain ({domain.describe()}: "
                    f"{domain.reason}): the outlier's NaN is the documented answer"))
            edge = onto_edge(domain, group, values) if accepts else None
            if edge is not None:
                # q = -1.2e-38 in float32: torch's Laplace.icdf computes q - 0.5 = -0.5, its
                # value at q = 0 (two readers of campaign 31: no bug); farther out it is NaN
                at_edge = self._leaf_on(group, edge, outlier, leaf)
                if at_edge is not None and np.array_equal(at_edge, out_leaf, equal_nan=True):
                    return TriageOutcome(None, dropped=(
                        f"the input is within its dtype's rounding of the edge of the documented domain "
                        f"({domain.describe()}): the outlier's number is its own value at the edge"))
            if not refuses and not accepts and wholly_outside(domain, group, values):
                # two numbers (JAX's cauchy.ppf of q = 1 + 1 ulp: -2.49e6 compiled, -1.92e6
                # eager, near a pole) where the documentation promises none: neither is wrong
                return TriageOutcome(None, dropped=(
                    f"the input lies wholly outside the documented domain ({domain.describe()}: "
                    f"{domain.reason}): both sides compute a number where none is promised"))
        if not arrays_compared:
            cls_name, why = FindingClass.VALUE, "outputs differ in structure"
        else:
            arrays = {s: v for s, v in values.items() if isinstance(v, np.ndarray)}
            if ties_only(out_leaf, ref_leaf, arrays.values()):
                return TriageOutcome(None, dropped="indices differ only among equal values (the "
                                                   "order of ties, which a sort need not keep)")
            cause = trigger(values)
            if ref_values is not None and domain is None and cause in ("+inf", "-inf", "large"):
                # a finite input that large has a value of its own: there only a limit the
                # outlier holds where the reference gave up (NaN) tells anything
                huge = cause == "large"
                side = limit_at_infinity(lambda vals: self._leaf_on(group, vals, ref_member, leaf),
                                         ref_values, ref_leaf, out_leaf, huge=huge)
                if side == "none" and not huge:
                    return TriageOutcome(None, dropped=(
                        "no limit at the infinite input: the float64 reference at growing finite "
                        "stand-ins for it changes sign or turns NaN, so NaN there is as right as "
                        "its number"))
                if side == "outlier":
                    return TriageOutcome(None, dropped=(
                        "the outlier's number is the float64 reference's own limit toward the huge "
                        "input: the reference gives up (NaN) at inputs that large" if huge else
                        "the outlier's number is the float64 reference's own limit at the infinite "
                        "input: the reference returns NaN for the infinity itself"))

            if (ref_values is not None and out_leaf.dtype.kind in "fc" and ref_leaf.dtype.kind in "fc"
                    and out_leaf.shape == ref_leaf.shape):
                noise = self._noise(group, values, ref_values, ref_member, leaf, ref_leaf)
                if noise is not None and within_noise(out_leaf, ref_leaf, noise, own_tol, self.conditioning.factor):
                    return TriageOutcome(None, dropped=(
                        "within its dtype's rounding: the float64 reference moves as far on inputs "
                        "perturbed by one unit roundoff (an ill-conditioned input)"))

            def rerun(flushed: dict[int, np.ndarray]) -> np.ndarray | None:
                return self._leaf_on(group, {**values, **flushed}, ref_member, leaf)

            has_sub = any(not np.array_equal(a, b, equal_nan=True)
                          for a, b in zip(arrays.values(), flush_subnormals(arrays).values()))
            wide = None
            widened = widen_integers(values) if out_leaf.dtype.kind in "iu" else None
            if widened is not None:
                wide = self._leaf_on(group, widened, ref_member, leaf)
            c = classify_value([out_leaf], 0, ref_leaf, arrays,
                               rerun_reference=rerun if has_sub else None, wide_reference=wide)
            cls_name, why = c.finding_class, c.why
            if accepts:
                cls_name, why = FindingClass.VALIDATION, (
                    f"returns a number where the reference returns NaN for an input outside the "
                    f"documented domain ({domain.describe()}: {domain.reason})")
            if (has_sub and cls_name != FindingClass.SUBNORMAL and ref_values is None
                    and ref_member is not None and ref_member != outlier and not accepts):
                # the reference is a member in the input's precision (a majority, no float64
                # evaluation): when the outlier on flushed inputs gives the reference's result,
                # the reference's side flushes subnormals (XLA and TensorFlow outvoting numpy on
                # nanprod([-1e-45, -inf]): NaN from 0 * inf) and the member that keeps them is
                # right; the flushing one is the outlier
                own = self._leaf_on(group, {**values, **flush_subnormals(arrays)}, outlier, leaf)
                if (own is not None and own.shape == ref_leaf.shape
                        and compare_group([ref_leaf, own], reference=0, tol=own_tol).values_agree):
                    outlier, ref_member = ref_member, outlier
                    out_leaf, ref_leaf = ref_leaf, out_leaf
                    ref_value = outputs[ref_member]
                    ref_label = f"{group.members[ref_member].qualname} (keeps subnormal inputs)"
                    cls_name = FindingClass.SUBNORMAL
                    why = ("the reference's side flushes subnormal inputs to zero: the member that "
                           "keeps them gives the reference's result on flushed inputs")
            if (not accepts and out_leaf.dtype.kind in "fc" and out_leaf.shape == ref_leaf.shape
                    and cls_name in _FLUSHABLE):
                # an intermediate may be subnormal where no input is: a member of the reference's
                # side run the way XLA runs gives the outlier's result (before the float64 test
                # below, which the flushing passes too: 1/3.4e38 is normal in float64). Where an
                # input is subnormal and the reference is the outlier's own float64 run, the
                # rerun above cannot tell (its float32 control is the outlier itself): tnp.log10
                # of [nan, -1.4e-45] keyed by the NaN, -inf from the flushed -0
                flusher = self._flushing_gives(group, values, outputs, live, outlier, leaf, out_leaf,
                                               ref_leaf, own_tol)
                if flusher is not None:
                    cls_name = FindingClass.SUBNORMAL
                    why = (f"{group.members[flusher].qualname}, run with the CPU flushing subnormals to "
                           f"zero (FTZ/DAZ), gives the outlier's result: a subnormal "
                           + ("input is flushed" if has_sub else "intermediate is flushed inside the outlier's "
                              "computation; no input is subnormal"))
            if (has_sub and not accepts and out_leaf.dtype.kind in "fc" and out_leaf.shape == ref_leaf.shape
                    and (cls_name == FindingClass.SUBNORMAL or cls_name in _FLUSHABLE)):
                # the flushed input must be the difference: at the smallest normal numbers in its
                # place nothing flushes. Where the outlier parts from the reference there too, the
                # subnormal is beside the point, and the finding is filed on that input (torch's
                # float32 LogNormal.icdf is 0 at q = 1.4e-45, as scipy's ppf of a flushed q = 0
                # is, and at q = FLT_MIN too, where scipy's is 4e-4: its erfinv(2q - 1) rounds to
                # -1 below q = 3e-8; JAX's expon.logcdf, -inf from 1.4e-45 up to 1e-10, was filed
                # as flush-to-zero)
                stand_in = None if moved else self._beyond_subnormal(cand, values, arrays, live, outlier,
                                                                     ref_member, ref_values, leaf, own_tol)
                if stand_in is not None:
                    stand, stand_results = stand_in
                    refiled = self._value(replace(cand, values=stand, results=stand_results,
                                                  signature=input_signature(stand)), campaign_id, moved=True)
                    if refiled.finding is not None:
                        return refiled
            own64 = ref_values is not None and ref_member == outlier
            # a flushed intermediate changes a result grossly (0, NaN from 0 * inf, inf from
            # 1/0): a difference within the loose tolerance is rounding, whatever the input
            # (JAX's gamma(FLT_MIN) off by 25 ulp is no flushing)
            tiny = near_subnormal(arrays.values()) and not loosely_agree(out_leaf, ref_leaf)
            if ((cls_name == FindingClass.VALUE or (tiny and cls_name in _FLUSHABLE))
                    and ref_values is not None and ref_member != outlier):
                # the outlier itself on the float64 inputs (at full width: JAX truncates them
                # to float32 otherwise): when it then agrees with the reference, its
                # lower-precision evaluation is what lost the result (a float32 intermediate
                # overflowing, underflowing or flushed to zero), not its method
                if loosely_agree(self._leaf_on(group, ref_values, outlier, leaf, wide=True), ref_leaf):
                    own64 = True
                    if cls_name == FindingClass.VALUE:
                        cls_name = FindingClass.PRECISION
                        why = (f"the outlier on float64 inputs agrees with the reference: its "
                               f"{out_leaf.dtype} evaluation loses the result (overflow, underflow or "
                               f"cancellation)")
        # a precision loss another implementation's float result shares: the policy's evidence
        shared = bool(arrays_compared and cls_name == FindingClass.PRECISION and ref_values is not None
                      and shared_loss(group, outputs, live, outlier, leaf, ref_leaf, self.adapters,
                                      input_dtypes(values)))
        rep = compare_group([ref_leaf, out_leaf], reference=0, tol=own_tol) if arrays_compared else None
        summary = {"why": why, "reference": ref_label, "leaf": leaf}
        if moved:
            summary["moved_from"] = _MOVED_FROM_SUBNORMAL
        if rep is not None:
            m = rep.members[1]
            summary.update(m.to_dict())
            summary.update({"rtol": rep.tolerance.rtol, "atol": rep.tolerance.atol,
                            "dispersion": rep.dispersion, "report": rep.summary()})
        return self._finish(cand, campaign_id, cls_name, outlier, values, ok, results, summary,
                            expect="value", ref_member=ref_member, ref_values=ref_values,
                            ref_label=ref_label, ref_output=ref_value,
                            tol=(rep.tolerance.rtol, rep.tolerance.atol) if rep else (1e-5, 1e-8),
                            edge=arrays_compared and self._edge(values, outputs, live, leaf, ref_leaf, ref_values,
                                                                out_leaf, group), shared=shared,
                            tiny=arrays_compared and tiny, own_float64=arrays_compared and own64,
                            documented_domain=accepts)

    def _beyond_subnormal(self, cand: Candidate, values: Mapping[int, Any], arrays: Mapping[int, np.ndarray],
                          live: Sequence[int], outlier: int, ref_member: int, ref_values: Mapping[int, Any] | None,
                          leaf: int, tol: Any) -> tuple[dict[int, Any], list[MemberResult]] | None:
        """``values`` with each subnormal number replaced by the smallest normal number of its
        sign (:func:`normal_stand_ins`) and every member's results there, where the outlier parts
        from the reference on that input too and no member of the reference's side run with the
        CPU flushing gives the outlier's result there (a subnormal intermediate of the new
        input): then flushing is no explanation of the divergence. Else None. The reference runs
        on the new input as it ran: in float64 where it is a float64 evaluation."""
        group = cand.group
        lifted = normal_stand_ins({s: a for s, a in arrays.items() if a.dtype.kind in "fc"})
        stand = {**values, **lifted}
        results = self._run(group, stand, cand.members)
        outputs = {m: r.value for m, r in zip(cand.members, results) if r.ok and m in live}
        out = output_leaf(outputs, outlier, leaf) if outlier in outputs else None
        if ref_values is not None:
            wide = {s: v.astype(ref_values[s].dtype) for s, v in lifted.items()
                    if isinstance(ref_values.get(s), np.ndarray)}
            ref = self._leaf_on(group, {**ref_values, **wide}, ref_member, leaf)
        else:
            ref = output_leaf(outputs, ref_member, leaf) if ref_member in outputs else None
        if not (isinstance(out, np.ndarray) and isinstance(ref, np.ndarray) and out.shape == ref.shape):
            return None
        if compare_group([ref, out], reference=0, tol=tol).values_agree:
            return None
        if self._flushing_gives(group, stand, outputs, list(outputs), outlier, leaf, out, ref, tol) is not None:
            return None
        return stand, results

    @staticmethod
    def _edge(values: Mapping[int, Any], outputs: Mapping[int, Any], ok: Sequence[int], leaf: int,
              ref_leaf: np.ndarray, ref_values: Mapping[int, Any] | None, out_leaf: np.ndarray,
              group: Any) -> bool:
        """At the edge of the float range: the reference's result is, or an input is and no
        member's evaluation in the input's precision holds the float64 result (numpy.cross of
        float32 MAX values: NaN in some libraries, inf in others, 0 in float64), or the outlier
        overflowed to the reference's own sign (:func:`~xamt.triage.policy.overflows_toward`:
        numpy's float32 matvec of [1, 1.0000001] and [MAX, -MAX] is -inf, as IEEE arithmetic
        without a fused multiply-add gives, where JAX's and TensorFlow's fused ones keep the
        float64 -4.06e31). Without a float64 evaluation (a dtype argument fixes float32, a
        referee's call decided), an input at the edge where the float results part, with or
        without a majority: nothing says which side lost it (torch's cumprod of [1, MAX, -MAX, 0]
        accumulates in double and gives -0, the others' float32 products give NaN, and torch was
        filed as accepting what the majority refused; nansum of [1, 1, 1, MAX, -MAX, 1] is 4, 1 or
        0 by summation order; torch.compile's masked.sum of [1, 1, 1, 1, MAX, -MAX] sums in
        another order than eager's, rated "ours")."""
        dtype = computation_dtype([*input_dtypes(values), out_leaf.dtype])
        if at_edge([ref_leaf], dtype):
            return True
        if not at_edge(numeric_arrays(values), dtype):
            return False
        if ref_values is None:
            # (a shape that differs is no order of evaluation)
            return (out_leaf.shape == ref_leaf.shape and out_leaf.dtype.kind in "fc"
                    and ref_leaf.dtype.kind in "fc")
        return (overflows_toward(out_leaf, ref_leaf)
                or none_holds(outputs, ok, leaf, ref_leaf, group.tolerance or None, input_dtypes(values)))

    # -- status and internal errors ------------------------------------------------------------
    def _raised(self, cand: Candidate, campaign_id: int, *, internal: bool) -> TriageOutcome:
        """A status divergence (or an internal error). The suspect usually raises while others
        return; it may instead be the one library that returns where the others raise (the
        campaign's :func:`~xamt.fuzz.campaign.status_suspects`), contrasted with a raising one."""
        group = cand.group
        members = list(cand.members)
        suspect = cand.members[cand.member]
        suspect_res = cand.results[cand.member]

        def signature(res: MemberResult) -> tuple[str, str | None]:
            if res.status != "raised":
                return res.status, None
            kind, _ = self.kinds.classify(res.error_type, res.error_message)
            return "raised", kind

        returns = suspect_res.ok and not internal
        if returns:
            contrast = [m for m, r in zip(cand.members, cand.results)
                        if m != suspect and r.status == "raised" and signature(r)[1] == "other"]
        else:
            contrast = [m for m, r in zip(cand.members, cand.results) if r.ok and m != suspect]
        if returns and not contrast:
            return TriageOutcome(None, dropped="no member refuses the input")
        want = signature(suspect_res)
        want_other = signature(cand.results[cand.members.index(contrast[0])]) if returns else None

        def still_fails(vals: dict[int, Any]) -> bool:
            probe = [suspect] + ([contrast[0]] if contrast and not internal else [])
            res = self._run(group, vals, probe)
            if signature(res[0]) != want:
                return False
            if internal:
                return True
            return signature(res[1]) == want_other if returns else res[1].ok

        values = cand.values
        if still_fails(values):
            values = minimise(values, self._bounded(still_fails), budget=self.minimise_budget,
                              frozen=structured_slots(cand.input)).inputs
        results = self._run(group, values, members)
        idx = members.index(suspect)
        if signature(results[idx]) != want:
            return TriageOutcome(None, dropped="not reproducible in the sandbox on the minimised input")
        if returns:
            ref = next((m for m, r in zip(members, results)
                        if m != suspect and signature(r) == want_other), None)
            if ref is None:
                return TriageOutcome(None, dropped="no member refuses the minimised input")
            res = results[members.index(ref)]
        else:
            ref = next((m for m, r in zip(members, results) if r.ok and m != suspect), None)
            if not internal and ref is None:
                return TriageOutcome(None, dropped="no member returns on the minimised input")
            res = results[idx]
        summary = {"why": cand.why, "error_type": res.error_type,
                   "error_message": (res.error_message or "")[:2000]}
        if getattr(res, "raised_at", ""):
            summary["raised_at"] = res.raised_at
        if returns:
            summary["returns_where_others_raise"] = True
        # the one library that returns where the others refuse accepts an input outside the
        # domain they enforce: a validation finding, blamed on it and never on those refusing
        cls_name = (FindingClass.INTERNAL if internal else
                    FindingClass.VALIDATION if returns else FindingClass.STATUS)
        return self._finish(cand, campaign_id, cls_name, suspect, values, members, results, summary,
                            expect="internal" if internal else "status", ref_member=ref,
                            error_type=res.error_type)

    # -- crashes --------------------------------------------------------------------------------
    def _crash(self, cand: Candidate, campaign_id: int) -> TriageOutcome:
        group = cand.group
        suspect = cand.members[cand.member]
        res = cand.results[cand.member]
        outcome = res.outcome
        if outcome is not None and getattr(outcome, "confirmed", None) is False:
            return TriageOutcome(None, dropped="crash not confirmed in a fresh worker (flaky)")
        # the crashing call runs last in the reproducer; members that died too (two libraries
        # hanging on one input) are their own candidates, and left out here so that this
        # reproducer's death is this member's
        kept = [(m, r) for m, r in zip(cand.members, cand.results)
                if m != suspect and r.status != "skipped" and r.status not in DEATH_STATUSES]
        members = [m for m, _ in kept] + [suspect]
        results = [r for _, r in kept] + [res]
        summary = {"why": cand.why, "status": res.status,
                   "signal": getattr(outcome, "signal_name", None),
                   "exit_code": getattr(outcome, "exit_code", None),
                   "stderr_tail": (getattr(outcome, "stderr_tail", "") or "")[-3000:],
                   "confirmed": getattr(outcome, "confirmed", None)}
        # the innermost Python frames of the dump, before the tail above cuts them off
        frames = native.innermost_frames(getattr(outcome, "stderr_tail", "") or "")
        if frames:
            summary["frames"] = frames
        spots = getattr(outcome, "native", ()) or ()
        if res.status == "timeout" and spots:
            summary.update(self._hang_place(group.members[suspect], spots, frames))
        sig = getattr(outcome, "signal", None)
        crash_signal = 0 if res.status == "timeout" else (sig if res.status == "crashed" else None)
        return self._finish(cand, campaign_id, FindingClass.CRASH, suspect, cand.values, members,
                            results, summary, expect="crash", crash_signal=crash_signal,
                            crash_status=res.status)

    def _native_owner(self, member: Any, summary: Mapping[str, Any]) -> str | None:
        """The library whose own extension module a hang's loop ran in, where that is another
        library than the called API's (scipy.stats.vonmises.rvs spinning in numpy's legacy
        sampler): the fault is that library's, and the finding blames it. None otherwise."""
        native = summary.get("native") or {}
        if not (native.get("outside") and native.get("extension")):
            return None
        return next((name for name, ad in self.adapters.items()
                     if name != member.library and ad.owns(native.get("package"))), None)

    def _hang_place(self, member: Any, spots: Sequence[Any], frames: Sequence[str]) -> dict[str, Any]:
        """What a hang's native samples (:mod:`sandbox.native`) say: the shared object, the
        package that ships it and the function it spun in. The faulthandler dump names only
        the API that was called; when the loop runs in another package's code (a LAPACK routine
        in scipy's OpenBLAS that jaxlib calls, numpy's legacy sampler under scipy.stats), the
        finding says so, for the blame. A loop of Python code (the interpreter sampled) is the
        innermost frame's (``frames``), whatever native code it calls."""
        place = native.describe(spots)
        if place is None:
            return {}
        info: dict[str, Any] = {"object": Path(place.path).name, "package": place.package,
                                "symbol": place.symbol, "share": round(place.share, 2),
                                "python": place.interpreted}
        adapter = self.adapters.get(member.library)
        # a package the API's own library does not own: the loop is the callee's
        info["outside"] = bool(place.package and adapter is not None and not adapter.owns(place.package)
                               and not place.interpreted)
        # one of that package's own extension modules (numpy's _mt19937), not a library it vendors
        # (scipy.libs' OpenBLAS) nor code compiled at run time: the loop is that package's code
        info["extension"] = bool(_EXTENSION_MODULE.search(info["object"]))
        where = f"{info['object']}" + (f", in {place.symbol}" if place.symbol else "")
        if place.interpreted:
            # the library's own frame holds the loop; frames inside it are what each turn calls
            # (scipy's entropy sum calling numpy's sum wrapper)
            own = [f for f in frames if adapter is not None
                   and adapter.owns(f.split(":", 1)[0].removesuffix(".py").replace("/", "."))]
            at = f" ({(own or frames)[0]})" if frames else ""
            calls = "" if place.only_python else (
                f", calling {place.package}'s native code ({where})" if place.package else f", calling {where}")
            why = f"timeout: the loop runs in Python code{at}{calls}"
        elif place.path == native.ANONYMOUS:
            why = "timeout: the loop runs in code compiled at run time (no shared object holds it)"
        elif info["outside"]:
            why = (f"timeout: the loop runs in {place.package}'s native code ({where}), which "
                   f"{member.qualname} calls")
        elif place.package:
            why = f"timeout: the loop runs in {place.package}'s native code ({where})"
        else:
            why = f"timeout: the loop runs in {where}"
        return {"why": why, "native": info}

    # -- filing ----------------------------------------------------------------------------------
    def _finish(self, cand: Candidate, campaign_id: int, cls_name: FindingClass, outlier: int,
                values: dict[int, Any], members: Sequence[int], results: Sequence[MemberResult],
                summary: dict[str, Any], *, expect: str, ref_member: int | None = None,
                ref_values: dict[int, Any] | None = None, ref_label: str | None = None,
                tol: tuple[float, float] = (1e-5, 1e-8), error_type: str | None = None,
                crash_signal: int | None = None, crash_status: str | None = None,
                edge: bool = False, ref_output: Any = None, shared: bool = False, tiny: bool = False,
                own_float64: bool = False, documented_domain: bool = False) -> TriageOutcome:
        """File the finding: its policy (``edge``: the reference's result is at the edge of the
        computation dtype's range, :func:`~xamt.triage.policy.at_edge`), root-cause key,
        reproducer and replay. ``ref_output``: the reference's output (a value finding), which
        the reproducer compares with where the reference cannot run in the outlier's process;
        ``shared``: another implementation's float result is off the float64 reference too
        (:func:`~xamt.triage.reference.shared_loss`); ``tiny``: an input is near the subnormal
        range (:func:`~xamt.triage.policy.near_subnormal`); ``own_float64``: the outlier's own
        float64 evaluation gives the reference's result; ``documented_domain``: the input breaks a
        domain the data documents and the outlier returns a number there."""
        from xamt.matching.model import cpu_twin

        group = cand.group
        out_m = group.members[outlier]
        if out_m.device not in (None, "cpu"):  # the device oracle: a device twin is the outlier
            twin = cpu_twin(group.members, outlier)
            summary = {**summary, "device": out_m.device,
                       "cpu_api": group.members[twin].qualname if twin is not None else None}
        # a documented policy (flush-to-zero, half-precision rounding...) is filed as such; a
        # refusal whose message states the precondition the input breaks is the library's check
        refused_on_purpose = cls_name == FindingClass.STATUS and self.kinds.precondition(
            summary.get("error_type"), summary.get("error_message")) is not None
        # a refusal raised by a raise statement in the API's own function body: its own check
        own_check = cls_name == FindingClass.STATUS and own_check_of(out_m, summary.get("raised_at"))
        out_res = results[list(members).index(outlier)] if outlier in members else None
        out_dtypes = [a.dtype for a in leaves(out_res.value) if isinstance(a, np.ndarray)] \
            if out_res is not None and out_res.ok else []
        computation = computation_dtype([*input_dtypes(values), *out_dtypes])
        # what the other members that returned gave: how wide a result could be, whether any has a value
        others = [r.value for m, r in zip(members, results) if m != outlier and r.ok]
        # the outlier's integer result is the float reference rounded to its input's dtype
        # the first matrix input: singular, ill-conditioned (one SVD for both)
        is_singular, is_ill_conditioned = matrix_flags(values, computation)
        rounded = (cls_name in (FindingClass.VALUE, FindingClass.PRECISION) and out_res is not None and out_res.ok
                   and ref_output is not None and rounded_to_integers(out_res.value, ref_output, values.values()))
        policy = self.policies.match(
            cls_name, group=group, library=out_m.library, computation=computation, trigger=trigger(values),
            narrowed=narrowed([*input_dtypes(values), *requested_dtypes(values),
                               *widths_elsewhere(input_dtypes(values), others)], out_dtypes, numeric_arrays(values)),
            edge=edge, precondition=refused_on_purpose, shared=shared,
            undefined=cls_name == FindingClass.STATUS and undefined_everywhere(others),
            rule=cand.signature if cand.kind in (SignalKind.STATUS, "status") else "",
            scalar=any(a.ndim == 0 for a in numeric_arrays(values)), beyond_seed=beyond_seed(group, values),
            tiny=tiny, own_float64=own_float64, own_check=own_check,
            ill_conditioned=is_ill_conditioned, singular=is_singular, unseen_shapes=unseen_shapes(group, values),
            rounded_to_integers=rounded, documented_domain=documented_domain)
        if policy is not None:
            summary = {**summary, "policy": {"name": policy.name, "reason": policy.reason,
                                             "class": cls_name.value}}
            cls_name = FindingClass.POLICY
        # members whose result is the outlier's: the record must not list them with the
        # reference's side (JAX's scipy.special.zeta NaN beside the blamed lax.zeta)
        alike = self._alike(group, values, members, results, outlier) if expect == "value" else set()
        # the root cause: the refusal rule, the policy, or the kind of input value behind it
        # (a status candidate's signature is its refusal rule; a value candidate's, the input's)
        rule = cand.signature if cand.kind in (SignalKind.STATUS, "status") else ""
        signature = (f"{policy.name}" if policy is not None else
                     finding_signature(cls_name, values, rule, status=crash_status, member=out_m))
        # an inferred relation's similarity score (xamt.matching.inferred): how sure the match was
        score = (getattr(group, "evidence", None) or {}).get("matching", {}).get("score")
        # a validation finding is its namespace's (whether it checks arguments), and so is a
        # refusal (one error message in one namespace is one code path: tnp's integer paths all
        # calling .astype on a tensor), a crash its siblings' (one native routine), others the API's
        family = (validation_family if cls_name in (FindingClass.VALIDATION, FindingClass.STATUS) else
                  crash_family if cls_name == FindingClass.CRASH else api_family)
        # no majority: only the pivot rank chose the reference, so the cause may be its side's
        # (TensorFlow's eager approx_max_k against its compiled form, blamed on the compiled one)
        tied = ref_member if ref_member is not None and (ref_label or "").endswith(f"({NO_MAJORITY})") else None
        lineage = self._lineage(group, outlier, values, cls_name, tied=tied)
        owner = self._native_owner(out_m, summary) if cls_name == FindingClass.CRASH else None
        api_label = _api_label(group.members, outlier)
        if owner is not None:
            summary = {**summary, "called_through": out_m.qualname}
            # the label a maintainer reads first names the routine that spun and its library,
            # not only the API called (a reader of campaign 35 took scipy for the blamed one)
            native_info = summary.get("native") or {}
            api_label = (f"{native_info.get('symbol') or native_info.get('object')} in {owner} "
                         f"(called by {api_label})")
        finding = Finding(
            campaign_id=campaign_id, group_key=group.key, relation=group.relation,
            finding_class=cls_name, outlier_library=owner or out_m.library,
            outlier_api=api_label,
            dtype=dominant_dtype(values), signature=signature,
            members=[{"library": group.members[m].library, "api": group.members[m].qualname,
                      "call": group.members[m].call,
                      "status": r.status, "error_type": r.error_type,
                      "error_message": (r.error_message or "")[:500] or None,
                      "outlier": m == outlier,
                      **({"same_as_outlier": True} if m in alike else {}),
                      **({"device": group.members[m].device} if group.members[m].device else {})}
                     for m, r in zip(members, results)],
            summary={**summary, **({"relation_score": score} if score is not None else {}),
                     # a hang in one native routine is one cause, whichever API reached it
                     "family": (cls_name == FindingClass.CRASH and self.lineage.routine(summary.get("native"))
                                or family(out_m, self.adapters.get(out_m.library))),
                     "cluster": (f"{cls_name.value}: {owner} native code: {signature}" if owner else
                                 cause_cluster(cls_name, out_m, self.adapters.get(out_m.library), signature,
                                               policy.name if policy is not None else None)),
                     "prekey": list(cand.prekey), "reference_api": (
                group.members[ref_member].qualname if ref_member is not None else None),
                     **({"lineage": lineage} if lineage is not None else {})},
            input_recipe=cand.input.to_json() if hasattr(cand.input, "to_json") else {},
        )
        # the reproducer: the members (outlier included), then the float64 reference run if any.
        # It is one process: members that need another interpreter, or a setting that clashes
        # with the outlier's (keras on TensorFlow beside keras on JAX), stay out of it
        in_script = self._fitting(group, outlier, members)
        recorded = None
        if ref_member is not None and ref_member not in in_script:
            old_ref, old_label = ref_member, ref_label
            ref_member, ref_values, ref_label = self._script_reference(group, ref_member, members, results,
                                                                       in_script, outlier)
            if ref_member is None:
                recorded = self._recorded(group, old_ref, old_label, members, results, expect, ref_output)
        left_out = [m for m in members if m not in in_script]
        out_runtime = self.adapters[out_m.library].runtime
        # the replay gets the outlier's runtime settings and interpreter (a fresh process, not
        # the replay server's)
        runtime_env = dict(out_runtime.env) if out_runtime is not None else None
        runtime_python = out_runtime.python() if out_runtime is not None and out_runtime.venv else None
        calls = []
        for m in in_script:
            mem = group.members[m]
            calls.append((_api_label(group.members, m), mem, self.adapters[mem.library], values))
        outlier_pos = in_script.index(outlier)
        reference_pos = in_script.index(ref_member) if ref_member in in_script else None
        if ref_values is not None and ref_member is not None:
            mem = group.members[ref_member]
            calls.append((f"{mem.qualname} [float64 reference]", mem, self.adapters[mem.library], ref_values))
            reference_pos = len(calls) - 1
        title = (f"Xamt finding: {cls_name.value} — {finding.outlier_api} ({finding.outlier_library}) "
                 f"in group {group.key}")
        header = "\n".join(
            [f"Group: {group.key} ({group.relation}"
             + (f", similarity score {score:.2f}" if score is not None else "")
             + f", expects equal {group.equivalence})",
             f"Members: {', '.join(group.members[m].qualname for m in in_script)}",
             *([f"Not run here (another runtime): "
                f"{', '.join(f'{group.members[m].qualname} ({group.members[m].library})' for m in left_out)}"]
               if left_out else []),
             f"Outlier: {finding.outlier_api}",
             f"Why: {summary.get('why', '')}"]
            + ([f"Device: {out_m.device} (the same API on the CPU: {summary.get('cpu_api')})"]
               if "device" in summary else [])
            + ([f"Reference: {ref_label}"] if ref_label else []))
        spec = repro.ReproSpec(
            title=title, header=header, calls=calls,
            normalisation=getattr(group, "normalisation", None) if getattr(group, "normalisation", "none") != "none" else None,
            expect="crash" if expect == "crash" else expect, outlier=outlier_pos,
            reference=reference_pos, rtol=tol[0], atol=tol[1], error_type=error_type,
            hang_limit=self._hang_limit(out_m) if crash_status == "timeout" else None,
            recorded=recorded)
        if recorded is not None:
            finding.summary["reference_recorded"] = recorded[0]
        folder = self._folder(finding)
        # a literal script of a few lines first (the input written out, public calls); the
        # msgpack form where there is none, or where the literal one does not reproduce
        forms = []
        # (none against a recorded reference: that one's output lives in a data file)
        text, why_not = (self._literal(group, finding, outlier, ref_member, ref_values, values, spec, summary)
                         if recorded is None else (None, "the reference's output is recorded in a data file"))
        if text is not None:
            forms.append(("literal", text, []))
        else:
            finding.summary["literal_why_not"] = why_not
        forms.append(("msgpack", repro.render(spec), repro.spec_inputs(spec)))
        for n, (form, text, inputs) in enumerate(forms):
            if n:  # the literal one did not reproduce: its script goes
                (folder / "repro.py").unlink(missing_ok=True)
            script = repro.write(folder, text, inputs)
            finding.reproducer = str(script.relative_to(self.out_dir))
            finding.summary["reproducer_form"] = form
            finding.summary["reproducer_lines"] = text.count("\n")
            if not self.verify:
                break
            v = (self.replayer or repro).verify(script, expect=spec.expect, timeout=self.verify_timeout,
                                                crash_signal=crash_signal, env=runtime_env,
                                                python=runtime_python)
            finding.summary["replay"] = {"returncode": v.returncode, "timed_out": v.timed_out,
                                         "seconds": round(v.seconds, 2), "tail": v.output_tail[-1500:]}
            if v.reproduced:
                finding.verified = True
                break
            if form == "literal":  # why the msgpack form follows, for whoever reads the finding
                finding.summary["literal_why_not"] = (
                    f"its replay did not reproduce (exit {v.returncode}{', timed out' if v.timed_out else ''}): "
                    + " ".join(v.output_tail.split())[-300:])
        if self.verify and not finding.verified:
            if crash_status == "oom":
                finding.summary["replay"]["note"] = "out-of-memory needs the sandbox's memory limit"
            return TriageOutcome(None, dropped="reproducer did not reproduce in a fresh process")
        inputs_blob, outputs_blob = encode_evidence(
            {f"slot{s}:{self._slot_name(group, s)}": v for s, v in values.items()},
            [{"status": r.status, "value": r.value if r.ok else None,
              "error_type": r.error_type, "error_message": r.error_message}
             for r in results])
        return TriageOutcome(finding, inputs_blob, outputs_blob)

    def _alike(self, group: Any, values: Mapping[int, Any], members: Sequence[int],
               results: Sequence[MemberResult], outlier: int) -> set[int]:
        """The members (other than ``outlier``) whose result agrees with the outlier's."""
        by_member = dict(zip(members, results))
        out = by_member.get(outlier)
        if out is None or not out.ok:
            return set()
        test, dtypes = self._agreement(group), input_dtypes(values)
        return {m for m, r in by_member.items() if m != outlier and r.ok and test.pair(out.value, r.value, dtypes)}

    def _fitting(self, group: Any, outlier: int, members: Sequence[int]) -> list[int]:
        """The members a reproducer of ``outlier`` can run in its process (:func:`compatible`)."""
        out_ad = self.adapters[group.members[outlier].library]
        return [m for m in members if compatible(self.adapters[group.members[m].library], out_ad)]

    def _script_reference(self, group: Any, ref_member: int, members: Sequence[int],
                          results: Sequence[MemberResult], in_script: Sequence[int], outlier: int
                          ) -> tuple[int | None, None, str | None]:
        """A reference the reproducer can run, where the fuzzer's own cannot share the outlier's
        process: the first member that can and ended as the reference did (returned, or
        raised), run on the same inputs. None: there is none."""
        status = {m: r.status for m, r in zip(members, results)}
        want = status.get(ref_member, "ok")
        for m in in_script:
            if m != outlier and status.get(m) == want:
                return m, None, f"{group.members[m].qualname} (in the outlier's runtime)"
        return None, None, None

    def _recorded(self, group: Any, ref_member: int, ref_label: str | None, members: Sequence[int],
                  results: Sequence[MemberResult], expect: str, ref_output: Any
                  ) -> tuple[str, str, Any, str | None] | None:
        """What the reference did, for a reproducer it cannot run in (:attr:`repro.ReproSpec.recorded`):
        its output (a value finding) or whether it returned (a status finding), labelled with its
        library's version. None for other findings."""
        mem = group.members[ref_member]
        adapter = self.adapters.get(mem.library)
        version = adapter.version() if adapter is not None else "?"
        label = f"{ref_label or mem.qualname} [{mem.library} {version}, recorded by the fuzzer in another process]"
        if expect == "value" and ref_output is not None:
            return label, "ok", ref_output, None
        if expect == "status" and ref_member in members:
            r = results[list(members).index(ref_member)]
            return (label, "ok", r.value, None) if r.ok else (label, "raised", None, r.error_type)
        return None

    def _literal(self, group: Any, finding: Finding, outlier: int, ref_member: int | None,
                 ref_values: dict[int, Any] | None, values: dict[int, Any], spec: Any,
                 summary: Mapping[str, Any]) -> tuple[str | None, str]:
        """The literal reproducer's text (:mod:`xamt.literal`) and ``""``, or None and why
        there is none."""
        out_m = group.members[outlier]
        out_call = literal.LiteralCall(finding.outlier_api or out_m.qualname, out_m,
                                       self.adapters[out_m.library], values)
        ref_call = None
        # the reference may be the outlier itself on float64 inputs (a float32 overflow where
        # its float64 evaluation is finite): a second call of it, on those inputs
        if ref_member is not None and (ref_member != outlier or ref_values is not None):
            ref_m = group.members[ref_member]
            label = ref_m.qualname + (" on float64 inputs" if ref_values is not None else "")
            ref_call = literal.LiteralCall(label, ref_m, self.adapters[ref_m.library],
                                           ref_values if ref_values is not None else values)
        why = " ".join(str(summary.get("why", "")).split())[:160]
        # the group line names the relation (and an inferred relation's score)
        title = "\n".join([spec.title, spec.header.splitlines()[0], *([f"Why: {why}"] if why else [])])
        return literal.render_or_why(title.replace('"' * 3, "'" * 3), out_call, ref_call, expect=spec.expect,
                                     rtol=spec.rtol, atol=spec.atol, error_type=spec.error_type,
                                     hang_limit=spec.hang_limit, normalisation=spec.normalisation)

    def _hang_limit(self, member: Any) -> float:
        """Seconds a timeout reproducer lets the hanging call run: well above the sandbox's
        allowance, since a fresh process also compiles (JIT) what a warm worker had cached."""
        allowance = getattr(self.executor, "member_timeout", None)
        base = allowance(member) if callable(allowance) else 10.0
        return max(30.0, 3.0 * float(base))

    @staticmethod
    def _slot_name(group: Any, slot: int) -> str:
        for s in getattr(group, "slots", []):
            if s.index == slot:
                return s.name
        return str(slot)

    def _folder(self, finding: Finding) -> Path:
        """A new folder for this finding's reproducer, named by its de-duplication key. A
        folder of that name may already hold a filed finding's reproducer (a later hit of the
        same finding is triaged again before the store says it is a duplicate): that one is
        never overwritten; the new attempt gets ``-2``, ``-3``... and the campaign removes it
        when the finding turns out to be a duplicate."""
        import hashlib

        digest = hashlib.blake2b(repr(finding.dedup_key()).encode(), digest_size=6).hexdigest()
        base = self.out_dir / "findings" / f"{finding.finding_class.value}-{digest}"
        folder, n = base, 1
        while folder.exists():
            n += 1
            folder = base.with_name(f"{base.name}-{n}")
        return folder
