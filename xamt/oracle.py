"""Status, crash and internal-error oracles over the outcomes of one group execution.

The value oracle is the comparator (:mod:`xamt.compare`); this module reads what the sandbox says
about each member's call and turns it into signals:

* ``crash``  — the member's process died (signal, timeout or out-of-memory);
* ``internal`` — the member raised an exception that reveals a broken invariant inside the
  library (``INTERNAL ASSERT FAILED``, ``Check failed``, ``InternalError``, XLA ``INTERNAL``);
  a finding even when every member raises, as DeepREL reports them;
* ``status`` — some members raise while others return (DeepREL's status equivalence);
* ``status_benign`` — the same, but the raising member's error is an expected refusal
  (unsupported dtype, out-of-range axis): recorded, not filed.

Which errors are internal or benign is data: ``xamt/data/error_kinds.toml``.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Sequence

from sandbox.outcome import CONFIRMABLE

from xamt.datafiles import read_toml
from xamt.errors import DataFileError

__all__ = ["ErrorKinds", "ErrorRule", "Signal", "SignalKind", "judge_statuses", "error_key"]

#: sandbox statuses that mean the member's process died (the ones the sandbox confirms)
DEATH_STATUSES = frozenset(str(s) for s in CONFIRMABLE)


class OutcomeLike(Protocol):
    """The part of :class:`sandbox.Outcome` the oracle reads."""

    status: str
    error_type: str | None
    error_message: str | None


class SignalKind(str, enum.Enum):
    """What an oracle saw about one member."""

    CRASH = "crash"
    INTERNAL = "internal"
    STATUS = "status"
    STATUS_BENIGN = "status_benign"


@dataclass(frozen=True)
class Signal:
    """One oracle observation: ``kind`` for ``member`` (index into the group), with the reason."""

    kind: SignalKind
    member: int
    why: str


@dataclass(frozen=True)
class ErrorRule:
    """One rule of ``error_kinds.toml``: exception type name and/or message pattern."""

    kind: str
    #: the exception's unqualified class name, or several (any of them)
    type: str | frozenset[str] | None
    message: re.Pattern[str] | None
    why: str

    def matches(self, error_type: str | None, message: str | None) -> bool:
        """True when every condition the rule sets holds for this exception."""
        name = (error_type or "").rsplit(".", 1)[-1]
        if self.type is not None and name not in ({self.type} if isinstance(self.type, str) else self.type):
            return False
        if self.message is not None and not self.message.search(message or ""):
            return False
        return True


class ErrorKinds:
    """The internal/benign error rules, loaded from a TOML data file, and the rules that tell
    a refusal stating the precondition its input breaks (``precondition``)."""

    SECTIONS = ("ordinary", "internal", "benign", "precondition")
    #: the sections :meth:`classify` reads, in order
    KINDS = ("ordinary", "internal", "benign")

    def __init__(self, rules: Sequence[ErrorRule]):
        self.rules = tuple(rules)

    @classmethod
    def load(cls, path: str | Path | None = None) -> "ErrorKinds":
        """Load rules from ``path`` (default: the packaged ``error_kinds.toml``).

        Raises:
            DataFileError: the file is missing, not TOML, or a rule is malformed.
        """
        data, where, _ = read_toml("error_kinds.toml", path)
        unknown = set(data) - set(cls.SECTIONS)
        if unknown:
            raise DataFileError(f"{where}: unknown section(s) {sorted(unknown)}; expected {cls.SECTIONS}")
        rules = []
        for kind in cls.SECTIONS:
            for i, entry in enumerate(data.get(kind, [])):
                extra = set(entry) - {"type", "message", "why"}
                kind_of = entry.get("type")
                bad_type = kind_of is not None and not (isinstance(kind_of, str) or (
                    isinstance(kind_of, list) and kind_of and all(isinstance(t, str) for t in kind_of)))
                if extra or bad_type or not ({"type", "message"} & set(entry)) or "why" not in entry:
                    raise DataFileError(
                        f"{where}: [[{kind}]] #{i + 1} needs 'why' and 'type' (a name or a list of names) "
                        "and/or 'message'"
                        + (f"; unknown keys {sorted(extra)}" if extra else "")
                    )
                try:
                    pattern = re.compile(entry["message"]) if "message" in entry else None
                except re.error as exc:
                    raise DataFileError(f"{where}: [[{kind}]] #{i + 1} bad regex: {exc}") from exc
                types = frozenset(kind_of) if isinstance(kind_of, list) else kind_of
                rules.append(ErrorRule(kind, types, pattern, entry["why"]))
        return cls(rules)

    def classify(self, error_type: str | None, message: str | None) -> tuple[str, str]:
        """``("internal" | "benign" | "other", why)`` for one exception. An ``ordinary`` rule
        wins over the others (an error that only reads like an internal one), and internal rules
        over benign ones."""
        for kind in self.KINDS:
            for rule in self.rules:
                if rule.kind == kind and rule.matches(error_type, message):
                    return ("other" if kind == "ordinary" else kind), rule.why
        return "other", ""

    def precondition(self, error_type: str | None, message: str | None) -> str | None:
        """Why the exception is a refusal that states the precondition its input breaks
        ("a <= 0", "should be between 0 and 1", "expected to be a float tensor"), or None: an
        error that is internal, or that arose inside the computation (a ZeroDivisionError, a
        solver that cannot continue), is no such refusal."""
        if self.classify(error_type, message)[0] == "internal":
            return None
        first = _statement(message)
        return next((r.why for r in self.rules if r.kind == "precondition" and r.matches(error_type, first)), None)


def _statement(message: str | None) -> str:
    """The first line of ``message`` that says something, with the line after it where the
    first is a heading ending in a colon: JAX's "Cannot lower jaxpr with verifier errors:" states
    its reason ("Out-of-bounds dimension -1, expected to be in range [0, 2)") on the next line."""
    lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
    if not lines:
        return ""
    return f"{lines[0]} {lines[1]}" if lines[0].endswith(":") and len(lines) > 1 else lines[0]


_NUMBER = re.compile(r"0x[0-9a-fA-F]+|[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_BRACKETED = re.compile(r"\[[^\[\]]*\]")
# dtype names in error messages vary with the input, not with the rule that refused it
_DTYPE_WORD = re.compile(
    r"\b(?:u?int(?:8|16|32|64)|float(?:16|32|64)|bfloat16|complex(?:64|128)|bool|half|double"
    r"|Int|Long|Short|Char|Byte|Float|Double|Half|BFloat16|ComplexFloat|ComplexDouble|Bool"
    r"|float|int|complex)\b")


def error_key(error_type: str | None, message: str | None) -> str:
    """What identifies one refusal rule, whatever the input that tripped it: the exception's
    class name and the first line of its message with numbers, quoted text and dtype names
    blanked. Status divergences are de-duplicated by it (one rule, one finding)."""
    kind = (error_type or "?").rsplit(".", 1)[-1]
    first = next((line.strip() for line in (message or "").splitlines() if line.strip()), "")
    text = _QUOTED.sub("'…'", first)
    # bracketed text is mostly a printed array or shape ("condition a ([[nan -inf]]) ..."):
    # collapse brackets from the innermost out, each to one mark
    while True:
        collapsed = _BRACKETED.sub("\x00", text)
        if collapsed == text:
            break
        text = collapsed
    text = text.replace("\x00", "[…]")
    text = _NUMBER.sub("#", _DTYPE_WORD.sub("<dtype>", text))
    return f"{kind}: {text[:160]}"


def judge_statuses(outcomes: Sequence[OutcomeLike], kinds: ErrorKinds) -> list[Signal]:
    """Crash, internal-error and status signals for one execution of a group's members.

    ``outcomes[i]`` is member i's sandbox outcome. Members whose result could not be serialised
    (``unserializable``) or that were ``cancelled`` say nothing about the library and are ignored.
    """
    signals: list[Signal] = []
    raised: list[tuple[int, OutcomeLike, str, str]] = []
    any_ok = False
    for i, out in enumerate(outcomes):
        if out.status in DEATH_STATUSES:
            signals.append(Signal(SignalKind.CRASH, i, out.status))
        elif out.status == "raised":
            kind, why = kinds.classify(out.error_type, out.error_message)
            if kind == "internal":
                signals.append(Signal(SignalKind.INTERNAL, i, why))
            else:
                raised.append((i, out, kind, why))
        elif out.status == "ok":
            any_ok = True
    if any_ok:
        for i, out, kind, why in raised:
            if kind == "benign":
                signals.append(Signal(SignalKind.STATUS_BENIGN, i, why))
            else:
                signals.append(Signal(SignalKind.STATUS, i, f"{out.error_type}: raised while others returned"))
    return signals
