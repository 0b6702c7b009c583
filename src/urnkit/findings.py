"""Findings: what :func:`urnkit.validate` says about a text, one rule at a time.

A text is *acceptable* when no finding is an error; warnings inform and never reject.

>>> f = Finding("nid.unregistered", "warning", 'the NID "foo" is not registered', 4, "RFC 8141 §1")
>>> print(f)
warning at position 4: the NID "foo" is not registered [nid.unregistered, RFC 8141 §1]
>>> is_acceptable([f])
True
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final, Literal

Severity = Literal["error", "warning"]

# The codes urnkit's core reports; namespace modules add their own, prefixed with their NID
# (``nbn.check-digit``). Codes are stable: tools may match on them.
SYNTAX_INVALID: Final = "syntax.invalid"
NID_UNREGISTERED: Final = "nid.unregistered"
NID_RESERVED: Final = "nid.reserved"


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a rule says about a text.

    ``code`` is a stable dotted name (``syntax.invalid``, ``nid.reserved``, ``nbn.check-digit``);
    ``severity`` "error" (the text is not an acceptable URN) or "warning"; ``position`` the
    0-based index in the text the finding is about, or None when it is about no one place;
    ``section`` the RFC section that states the rule.

    >>> Finding("nid.reserved", "error", "reserved", 4, "RFC 8141 §5.1").severity
    'error'
    """

    code: str
    severity: Severity
    message: str
    position: int | None
    section: str

    def __str__(self) -> str:
        where = "" if self.position is None else f" at position {self.position}"
        return f"{self.severity}{where}: {self.message} [{self.code}, {self.section}]"


def is_acceptable(findings: Iterable[Finding]) -> bool:
    """Whether no finding is an error: the text is a URN, warnings notwithstanding.

    >>> is_acceptable([]), is_acceptable([Finding("x.y", "error", "bad", None, "RFC 8141 §1")])
    (True, False)
    """
    return all(finding.severity != "error" for finding in findings)


__all__ = [
    "NID_RESERVED",
    "NID_UNREGISTERED",
    "SYNTAX_INVALID",
    "Finding",
    "Severity",
    "is_acceptable",
]
