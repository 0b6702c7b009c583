"""Validity under RFC 8141 and RFC 2141 side by side, and why they differ (RFC 8141 Appendix B).

>>> print(explain("urn:ex:a~b"))
urn:ex:a~b
  RFC 8141: valid
  RFC 2141: invalid at position 8: '~' is not in the RFC 2141 NSS repertoire [NSS, RFC 2141 §2.4]
  differs: RFC 8141 allows '/', '~' and '&' in the NSS (RFC 8141 Appendix B.1)
"""

from __future__ import annotations

from dataclasses import dataclass

from urnkit.syntax import Diagnosis, Mode, diagnose
from urnkit.urn import URN


@dataclass(frozen=True, slots=True)
class Explanation:
    """The verdict of each grammar on one text, and the reasons they differ."""

    text: str
    rfc8141: Diagnosis | None
    rfc2141: Diagnosis | None
    differences: tuple[str, ...]

    def valid(self, mode: Mode) -> bool:
        """Whether the text is a URN under ``mode``."""
        return (self.rfc8141 if mode == "rfc8141" else self.rfc2141) is None

    def __str__(self) -> str:
        lines = [self.text]
        for name, diagnosis in (("RFC 8141", self.rfc8141), ("RFC 2141", self.rfc2141)):
            if diagnosis is None:
                lines.append(f"  {name}: valid")
            else:
                lines.append(
                    f"  {name}: invalid at position {diagnosis.position}: {diagnosis.reason} "
                    f"[{diagnosis.rule}, {diagnosis.section}]"
                )
        lines.extend(f"  differs: {reason}" for reason in self.differences)
        return "\n".join(lines)


def _rfc8141_only(urn: URN) -> tuple[str, ...]:
    """Why a URN valid under RFC 8141 is not one under RFC 2141."""
    reasons = []
    if urn.nid.lower() == "urn":
        reasons.append(
            'RFC 2141 §2 reserves the NID "urn" in its grammar; RFC 8141 §2\'s ABNF admits it'
        )
    if any(ch in urn.nss for ch in "/~&"):
        reasons.append("RFC 8141 allows '/', '~' and '&' in the NSS (RFC 8141 Appendix B.1)")
    for component, value in (
        ("r-components ('?+')", urn.r_component),
        ("q-components ('?=')", urn.q_component),
        ("f-components ('#')", urn.f_component),
    ):
        if value is not None:
            reasons.append(
                f"RFC 8141 allows {component}; RFC 2141 has none (RFC 8141 Appendix B.2)"
            )
    return tuple(reasons)


def _rfc2141_only(urn: URN) -> tuple[str, ...]:
    """Why a URN valid under RFC 2141 is not one under RFC 8141 (only its NID can be why)."""
    if len(urn.nid) == 1:
        return ("RFC 2141 allowed a one-character NID; RFC 8141 §2 requires at least 2 characters",)
    return (
        "RFC 8141 disallows '-' at the end of the NID; RFC 2141 allowed it (RFC 8141 Appendix B.1)",
    )


def explain(text: str) -> Explanation:
    """Judge ``text`` under both grammars and say why the verdicts differ.

    >>> explain("urn:a:b").differences
    ('RFC 2141 allowed a one-character NID; RFC 8141 §2 requires at least 2 characters',)
    """
    modern, legacy = diagnose(text, mode="rfc8141"), diagnose(text, mode="rfc2141")
    differences: tuple[str, ...] = ()
    if modern is None and legacy is not None:
        differences = _rfc8141_only(URN(text, "rfc8141"))
    elif legacy is None and modern is not None:
        differences = _rfc2141_only(URN(text, "rfc2141"))
    return Explanation(text, modern, legacy, differences)
