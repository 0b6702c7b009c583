"""Registration templates: parse, validate and render them.

Two templates, each a list of ``Label: value`` fields in plain text: the URN namespace
registration of RFC 8141 Appendix A (:class:`NamespaceRegistration`) and the URI scheme
registration of RFC 4395 §5.4 (:class:`SchemeRegistration`). :func:`parse` reads either (it tells
them apart by their first field), :func:`validate` says what is wrong with one as
:class:`~urnkit.findings.Finding` objects whose ``position`` is the 0-based index in the text of
the line at fault, and :func:`render` writes one back. :func:`check` is :func:`parse` then
:func:`validate`; :func:`blank` is a template to fill in.

>>> text = blank("uri-scheme").replace("URI scheme name:", "URI scheme name: Web+Cat")
>>> for finding in check(text)[:2]:
...     print(finding)
warning at position 0: the scheme name "Web+Cat" must be registered in lower case: "web+cat" [...]
error at position 26: the field "Status" is empty [template.empty-field, RFC 4395 §5.4]
"""

from __future__ import annotations

import datetime
import itertools
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal, TypeAlias, overload

from urnkit.findings import Finding, Severity
from urnkit.namespaces import NIDClass, classify_nid, reservation

Kind = Literal["urn-namespace", "uri-scheme"]
KINDS: Final[tuple[Kind, ...]] = ("urn-namespace", "uri-scheme")

# Finding codes; stable, tools may match on them.
MISSING_FIELD: Final = "template.missing-field"
EMPTY_FIELD: Final = "template.empty-field"
DUPLICATE_FIELD: Final = "template.duplicate-field"
FIELD_ORDER: Final = "template.field-order"
UNRECOGNIZED: Final = "template.unrecognized"
VERSION: Final = "template.version"
DATE: Final = "template.date"
NID: Final = "template.nid"
REVISION_INFORMATION: Final = "template.revision-information"
SCHEME_NAME: Final = "scheme.name"
SCHEME_NAME_CASE: Final = "scheme.name-case"
SCHEME_STATUS: Final = "scheme.status"
SCHEME_CONTACT: Final = "scheme.contact"

APPENDIX_A: Final = "RFC 8141 Appendix A"
INDENT: Final = "   "  # how :func:`render` indents values written below their label


@dataclass(frozen=True, slots=True)
class Location:
    """Where a field's label stands in the parsed text: ``line`` from 1, ``offset`` from 0."""

    line: int
    offset: int


@dataclass(frozen=True, slots=True)
class NamespaceRegistration:
    """A URN namespace registration, RFC 8141 Appendix A: one attribute per field, in order.

    A value is the field's text (lines joined by "\\n", common indentation removed), "" for a
    field that is present but empty, None for one that is absent. ``locations`` (field name to
    :class:`Location`) and ``duplicates`` (fields given again) come from :func:`parse` and take
    no part in equality.

    >>> NamespaceRegistration(namespace_identifier="NBN\\nAssigned in 2001.").nid
    'NBN'
    """

    namespace_identifier: str | None = None
    version: str | None = None
    date: str | None = None
    registrant: str | None = None
    purpose: str | None = None
    syntax: str | None = None
    assignment: str | None = None
    security_and_privacy: str | None = None
    interoperability: str | None = None
    resolution: str | None = None
    documentation: str | None = None
    additional_information: str | None = None
    revision_information: str | None = None
    locations: Mapping[str, Location] = field(default_factory=dict, compare=False, repr=False)
    duplicates: tuple[tuple[str, Location], ...] = field(default=(), compare=False, repr=False)

    @property
    def nid(self) -> str | None:
        """The NID: the first word of "Namespace Identifier", quotes and end punctuation off."""
        words = (self.namespace_identifier or "").split()
        return words[0].strip("\"'\u201c\u201d.,;") or None if words else None


@dataclass(frozen=True, slots=True)
class SchemeRegistration:
    """A URI scheme registration, RFC 4395 §5.4: one attribute per field, in order.

    Values as in :class:`NamespaceRegistration`.

    >>> SchemeRegistration(uri_scheme_name="urn", status="permanent").status
    'permanent'
    """

    uri_scheme_name: str | None = None
    status: str | None = None
    uri_scheme_syntax: str | None = None
    uri_scheme_semantics: str | None = None
    encoding_considerations: str | None = None
    applications_protocols: str | None = None
    interoperability_considerations: str | None = None
    security_considerations: str | None = None
    contact: str | None = None
    author_change_controller: str | None = None
    references: str | None = None
    locations: Mapping[str, Location] = field(default_factory=dict, compare=False, repr=False)
    duplicates: tuple[tuple[str, Location], ...] = field(default=(), compare=False, repr=False)


Registration: TypeAlias = NamespaceRegistration | SchemeRegistration


@dataclass(frozen=True, slots=True)
class _Field:
    name: str  # the dataclass attribute
    label: str  # as the RFC writes it
    aliases: tuple[str, ...] = ()  # other spellings seen in published templates


# RFC 8141 Appendix A, in its order.
_NAMESPACE_FIELDS: Final = (
    _Field("namespace_identifier", "Namespace Identifier"),
    _Field("version", "Version"),
    _Field("date", "Date"),
    _Field("registrant", "Registrant"),
    _Field("purpose", "Purpose"),
    _Field("syntax", "Syntax"),
    _Field("assignment", "Assignment"),
    _Field("security_and_privacy", "Security and Privacy"),
    _Field("interoperability", "Interoperability"),
    _Field("resolution", "Resolution"),
    _Field("documentation", "Documentation"),
    _Field("additional_information", "Additional Information"),
    _Field("revision_information", "Revision Information"),
)
# RFC 4395 §5.4, in its order. The alias is rfc2141bis §7.1's spelling.
_SCHEME_FIELDS: Final = (
    _Field("uri_scheme_name", "URI scheme name"),
    _Field("status", "Status"),
    _Field("uri_scheme_syntax", "URI scheme syntax"),
    _Field("uri_scheme_semantics", "URI scheme semantics"),
    _Field("encoding_considerations", "Encoding considerations"),
    _Field(
        "applications_protocols",
        "Applications/protocols that use this URI scheme name",
        ("Applications/protocols that use this URI scheme",),
    ),
    _Field("interoperability_considerations", "Interoperability considerations"),
    _Field("security_considerations", "Security considerations"),
    _Field("contact", "Contact"),
    _Field("author_change_controller", "Author/Change controller"),
    _Field("references", "References"),
)
_FIELDS: Final[dict[Kind, tuple[_Field, ...]]] = {
    "urn-namespace": _NAMESPACE_FIELDS,
    "uri-scheme": _SCHEME_FIELDS,
}
_LABEL_LINE = re.compile(r"(?P<indent>[ \t]*)(?P<label>[^:]+?)[ \t]*:(?P<rest>.*)")


def _key(label: str) -> str:
    """A label as compared: case, runs of spaces and spaces around "/" do not count."""
    return re.sub(r"\s*/\s*", "/", " ".join(label.split())).lower()


_BY_LABEL: Final[dict[str, tuple[Kind, _Field]]] = {
    _key(label): (kind, spec)
    for kind, specs in _FIELDS.items()
    for spec in specs
    for label in (spec.label, *spec.aliases)
}


def _lines(text: str) -> Iterator[tuple[int, int, str]]:
    """Each line's number (from 1), the offset of its first non-blank character, and its text
    with leading tabs expanded and "\\r" dropped."""
    offset = 0
    for number, line in enumerate(text.split("\n"), 1):
        body = line.removesuffix("\r")
        stripped = body.lstrip(" \t")
        lead = len(body) - len(stripped)
        yield number, offset + lead, body[:lead].expandtabs() + stripped
        offset += len(line) + 1


def _label(line: str) -> tuple[int, Kind, _Field, str] | None:
    """A field label at the start of ``line``: indentation, kind, field and the rest."""
    match = _LABEL_LINE.fullmatch(line)
    if match is None or _key(match["label"]) not in _BY_LABEL:
        return None
    kind, spec = _BY_LABEL[_key(match["label"])]
    return len(match["indent"]), kind, spec, match["rest"]


def _value(first: str, rest: list[str]) -> str:
    """A field's value: its first line, then the lines below, their common indentation removed."""
    lines = [line.rstrip() for line in rest]
    while lines and not lines[-1]:
        lines.pop()
    indent = min((len(line) - len(line.lstrip()) for line in lines if line), default=0)
    lines = [line[indent:] for line in lines]
    if first.strip():
        lines.insert(0, first.strip())
    while lines and not lines[0]:
        lines.pop(0)
    return "\n".join(lines)


def detect(text: str) -> Kind | None:
    """Which template ``text`` is, from its first field label; None if it has none.

    >>> detect("URI Scheme Name:  urn"), detect("Namespace Identifier: NBN"), detect("hello")
    ('uri-scheme', 'urn-namespace', None)
    """
    for _, _, line in _lines(text):
        found = _label(line)
        if found is not None:
            return found[1]
    return None


def _fields(
    text: str, kind: Kind
) -> tuple[dict[str, str], dict[str, Location], tuple[tuple[str, Location], ...]]:
    """The values, locations and duplicates of ``kind``'s fields in ``text``.

    A field starts at a line that begins with one of its labels and ":", indented no deeper
    than the first label; it runs to the next such line. Text before the first field is ignored.
    """
    values: dict[str, str] = {}
    locations: dict[str, Location] = {}
    duplicates: list[tuple[str, Location]] = []
    base: int | None = None
    current: tuple[str, Location, str, list[str]] | None = None

    def close() -> None:
        if current is None:
            return
        name, where, first, rest = current
        if name in values:
            duplicates.append((name, where))
        else:
            values[name], locations[name] = _value(first, rest), where

    for number, offset, line in _lines(text):
        found = _label(line)
        if found is not None and found[1] == kind and (base is None or found[0] <= base):
            close()
            indent, _, spec, rest = found
            base = indent if base is None else base
            current = (spec.name, Location(number, offset), rest, [])
        elif current is not None:
            current[3].append(line)
    close()
    return values, locations, tuple(duplicates)


@overload
def parse(text: str, kind: Literal["urn-namespace"]) -> NamespaceRegistration: ...
@overload
def parse(text: str, kind: Literal["uri-scheme"]) -> SchemeRegistration: ...
@overload
def parse(text: str, kind: Kind | None = None) -> Registration: ...
def parse(text: str, kind: Kind | None = None) -> Registration:
    """Read a registration template from plain text; ``kind`` None means :func:`detect` it.

    Labels are matched regardless of case and spacing; values may start on the label's line or
    below it, indented as they like. Raises ValueError if ``text`` has no field of either kind.

    >>> registration = parse("   URI Scheme Name:  urn\\n   Status:  permanent\\n")
    >>> registration.status, registration.locations["status"]
    ('permanent', Location(line=2, offset=28))
    """
    kind = kind or detect(text)
    if kind is None:
        raise ValueError("no field of a URN namespace or URI scheme registration template")
    values, locations, duplicates = _fields(text, kind)
    return _factory(kind)(**values, locations=locations, duplicates=duplicates)


def _factory(kind: Kind) -> Callable[..., Registration]:
    return NamespaceRegistration if kind == "urn-namespace" else SchemeRegistration


def kind_of(registration: Registration) -> Kind:
    """``"urn-namespace"`` or ``"uri-scheme"``.

    >>> kind_of(SchemeRegistration())
    'uri-scheme'
    """
    return "urn-namespace" if isinstance(registration, NamespaceRegistration) else "uri-scheme"


def _get(registration: Registration, name: str) -> str | None:
    value = getattr(registration, name)
    assert value is None or isinstance(value, str)
    return value


def render(registration: Registration) -> str:
    """The template as plain text: fields in the RFC's order, absent ones left out.

    A one-line value follows its label; longer values go below it, indented. ``parse(render(r))
    == r`` for any registration whose values are as :func:`parse` makes them.

    >>> print(render(SchemeRegistration(uri_scheme_name="urn", references="RFC 8141\\nRFC 8458")))
    URI scheme name: urn
    <BLANKLINE>
    References:
       RFC 8141
       RFC 8458
    <BLANKLINE>
    """
    blocks = []
    for spec in _FIELDS[kind_of(registration)]:
        value = _get(registration, spec.name)
        if value is None:
            continue
        if "\n" in value:
            lines = (INDENT + line if line else "" for line in value.split("\n"))
            blocks.append(f"{spec.label}:\n" + "\n".join(lines))
        else:
            blocks.append(f"{spec.label}: {value}".rstrip())
    return "\n\n".join(blocks) + "\n"


def blank(kind: Kind) -> str:
    """A template of ``kind`` with every field present and empty, to fill in.

    >>> print(blank("urn-namespace").splitlines()[:3])
    ['Namespace Identifier:', '', 'Version:']
    """
    return render(_factory(kind)(**{spec.name: "" for spec in _FIELDS[kind]}))


# --- validation ----------------------------------------------------------------------------------


class _Report:
    """Findings about one registration, placed at its fields' lines."""

    def __init__(self, registration: Registration) -> None:
        self.registration = registration
        self.findings: list[Finding] = []

    def where(self, name: str) -> int | None:
        location = self.registration.locations.get(name)
        return None if location is None else location.offset

    def add(self, code: str, severity: Severity, message: str, name: str, section: str) -> None:
        self.findings.append(Finding(code, severity, message, self.where(name), section))

    def require(self, spec: _Field, severity: Severity, section: str) -> bool:
        """Report ``spec``'s field if absent or empty; whether it has a value."""
        value = _get(self.registration, spec.name)
        if value:
            return True
        if value is None:
            message = f'the field "{spec.label}" is missing'
            self.findings.append(
                Finding(MISSING_FIELD, severity, message, self._slot(spec.name), section)
            )
        else:
            self.add(
                EMPTY_FIELD, severity, f'the field "{spec.label}" is empty', spec.name, section
            )
        return False

    def _slot(self, name: str) -> int | None:
        """Where an absent field belongs: at the next present field, else after the last one."""
        names = [spec.name for spec in _FIELDS[kind_of(self.registration)]]
        after = names[names.index(name) + 1 :]
        following = [self.where(other) for other in after if other in self.registration.locations]
        if following:
            return following[0]
        offsets = [location.offset for location in self.registration.locations.values()]
        return max(offsets, default=None)

    def sorted(self) -> list[Finding]:
        """The findings in the order of the text; those about no place first."""
        return sorted(self.findings, key=lambda f: -1 if f.position is None else f.position)

    def layout(self, section: str) -> None:
        """Fields given twice, and fields out of the template's order."""
        specs = {spec.name: spec for spec in _FIELDS[kind_of(self.registration)]}
        for name, location in self.registration.duplicates:
            message = f'the field "{specs[name].label}" is given again; only the first counts'
            self.findings.append(
                Finding(DUPLICATE_FIELD, "error", message, location.offset, section)
            )
        order = list(specs)
        seen = sorted(self.registration.locations.items(), key=lambda item: item[1].offset)
        for (before, _), (name, location) in itertools.pairwise(seen):
            if order.index(name) < order.index(before):
                message = (
                    f'the field "{specs[name].label}" comes after "{specs[before].label}"; '
                    "the template has it before"
                )
                self.findings.append(
                    Finding(FIELD_ORDER, "warning", message, location.offset, section)
                )


def validate(registration: Registration) -> list[Finding]:
    """Every finding about a registration, errors and warnings, in field order.

    >>> [f.code for f in validate(NamespaceRegistration(namespace_identifier="X-foo"))][:3]
    ['template.missing-field', 'template.missing-field', 'template.missing-field']
    >>> [f.message for f in validate(parse("Namespace Identifier: X-foo")) if f.code == NID]
    ['the NID "X-foo" is reserved: "X-" marked the experimental namespaces of RFC 3406, ...']
    """
    if isinstance(registration, NamespaceRegistration):
        return _validate_namespace(registration)
    return _validate_scheme(registration)


def check(text: str, kind: Kind | None = None) -> list[Finding]:
    """:func:`validate` of :func:`parse`; a text with no template field is one error.

    >>> [f.code for f in check("Dear IANA, please register ...")]
    ['template.unrecognized']
    """
    try:
        registration = parse(text, kind)
    except ValueError as error:
        return [
            Finding(UNRECOGNIZED, "error", str(error), None, "RFC 8141 Appendix A, RFC 4395 §5.4")
        ]
    return validate(registration)


# The matters RFC 8141 §6.4 asks a section of the template to cover, as patterns that a text
# covering the matter is all but sure to match. They are heuristics: a miss is a warning that
# asks a person to look, never an error. Matters no pattern can honestly detect are left out.
@dataclass(frozen=True, slots=True)
class _Matter:
    name: str  # the field
    code: str
    pattern: re.Pattern[str]
    message: str
    section: str


def _words(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# Appendix A, Registrant: "the name and contact information (email, phone number, or postal
# address) of the designated contact person". RFC 4395 §3 asks the same of a scheme's Contact.
_CONTACT_INFORMATION = _words(
    r"@|\(at\)|(?-i:\bAT\b)|mailto:|https?://|\bphone\b|\btel\b|\+\d|\baddress\b|\bpostal\b"
    r"|\bP\.? ?O\.? Box\b"
)
_MATTERS: Final = (
    _Matter(
        "registrant",
        "template.registrant-contact",
        _CONTACT_INFORMATION,
        "gives no contact information (email, phone number or postal address)",
        APPENDIX_A,
    ),
    # §6.4.1 (1): "The kinds of resources identified by URNs assigned within the URN namespace."
    _Matter(
        "purpose",
        "template.purpose-resources",
        _words(r"resource|identif"),
        "does not say what kinds of resources the URNs identify",
        "RFC 8141 §6.4.1",
    ),
    # §6.4.1 (2): "The scope and applicability of the URNs assigned within the URN namespace;
    # this might include information about the community of use".
    _Matter(
        "purpose",
        "template.purpose-scope",
        _words(r"communit|scope|applicab|\busers?\b|\bused (by|in|for|on|within)\b|public|private"),
        "does not say what community the URNs serve, or their scope",
        "RFC 8141 §6.4.1",
    ),
    # §6.4.1 (3)-(5) and (7) (benefits, relation to other systems, software, standardization)
    # have no words a pattern could rely on; (6), resolution, is the Resolution section's check.
    # §6.4.2 (1): "A description of the structure of URNs within the URN namespace ... in terms of
    # a formal definition (e.g., using ABNF [RFC5234]), an algorithm ..., or a regular
    # expression ...; alternatively, the structure might be opaque."
    _Matter(
        "syntax",
        "template.syntax-structure",
        _words(
            r"abnf|::=|\bsyntax\b|structure|regular expression|\bregex|opaque|grammar|format"
            r"|consists? of|\bnss\b"
        ),
        "does not describe the structure of the NSS (ABNF, an algorithm, a regular expression, "
        "or that it is opaque)",
        "RFC 8141 §6.4.2",
    ),
    # §6.4.2 (3): "Rules for determining URN-equivalence between two names in the URN
    # namespace." Case is what most such rules are about ("equivalence between uppercase and
    # lowercase characters in the NSS"), so saying how case is treated counts.
    _Matter(
        "syntax",
        "template.syntax-equivalence",
        _words(r"equivalen|compar|lexical|\bcase\b|upper ?case|lower ?case|case-"),
        "gives no rules for URN-equivalence (how case, hyphens or quotes compare, or "
        "RFC 8141 §3 alone)",
        "RFC 8141 §6.4.2",
    ),
    # §6.4.2 (2), (4), (5) ask for "any" special rules: when there are none, there is nothing
    # to say, so their absence proves nothing.
    # §6.4.3 (1): "Mechanisms or authorities for assigning URNs to resources."
    _Matter(
        "assignment",
        "template.assignment-authority",
        _words(r"assign|authorit|delegat|regist|allocat|\bissue|creat|generat"),
        "does not say who assigns the URNs, or how",
        "RFC 8141 §6.4.3",
    ),
    # §6.4.3 (2): "Methods for ensuring that URNs within the URN namespace are unique."
    _Matter(
        "assignment",
        "template.assignment-uniqueness",
        _words(r"uniq|re-?assign|sequential|duplicat|collision|never (be )?re-?used"),
        "does not say how the URNs are kept unique",
        "RFC 8141 §6.4.3",
    ),
    # §6.4.4: "describes any potential issues related to security and privacy with regard to
    # assignment, use, and resolution of names" - both, even if only to say there are none.
    _Matter(
        "security_and_privacy",
        "template.security",
        _words(r"secur|spoof|attack|threat|risk|integrity|authentic"),
        "says nothing about security",
        "RFC 8141 §6.4.4",
    ),
    _Matter(
        "security_and_privacy",
        "template.privacy",
        _words(r"privacy|private|personal|confidential|harvest"),
        "says nothing about privacy",
        "RFC 8141 §6.4.4",
    ),
    # §6.4.5: "MUST specify any known potential issues related to interoperability." When none
    # are known, "None" is the answer, so nothing beyond a value can be checked.
    # §6.4.6: "The "Resolution" section MUST specify whether resolution mechanisms are intended
    # or anticipated for URNs assigned within the URN namespace." A plain "None" says they are
    # not.
    _Matter(
        "resolution",
        "template.resolution-intent",
        _words(r"resol|intend|anticipat|\bnone\b|not applicable|\bn/?a\b"),
        "does not say whether resolution is intended or anticipated",
        "RFC 8141 §6.4.6",
    ),
    # Documentation ("A pointer to an RFC, a specification ..., or another stable document") can
    # be a title, which no pattern tells from prose; §6.4.7, Additional Information, is optional.
)

# A value that sends the reader elsewhere ("See Section 4.2 of RFC 8458") may cover every matter
# there; only the document can tell, so such values are not searched for matters.
_POINTER = re.compile(
    r"(see|described in|defined in|specified in|as (described|defined|specified) in)\b"
    r".*\b(section|rfc|https?://|appendix)",
    re.IGNORECASE | re.DOTALL,
)
_VERSION = re.compile(r"[0-9]+")
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _validate_namespace(registration: NamespaceRegistration) -> list[Finding]:
    report = _Report(registration)
    report.layout(APPENDIX_A)
    labels = {spec.name: spec for spec in _NAMESPACE_FIELDS}
    for spec in _NAMESPACE_FIELDS:
        # §6.4.7: Additional Information "is optional"; Revision Information is "Applicable only
        # when earlier registrations have been revised" (checked with Version below).
        if spec.name not in ("additional_information", "revision_information"):
            report.require(spec, "error", APPENDIX_A)

    version = _version(report, registration.version)
    if registration.date and not _is_date(registration.date):
        message = f'the date "{registration.date}" is not a real date as YYYY-MM-DD'
        report.add(DATE, "error", message, "date", APPENDIX_A)
    _check_nid(report, registration.nid, version)
    # Appendix A: "Revision Information: Description of changes from prior version(s)."
    if version is not None and version > 1 and not registration.revision_information:
        message = f"version {version} needs Revision Information: the changes from earlier versions"
        where = "revision_information" if registration.revision_information == "" else "version"
        report.add(REVISION_INFORMATION, "error", message, where, APPENDIX_A)

    for matter in _MATTERS:
        value = _get(registration, matter.name)
        if value and not _POINTER.match(value) and not matter.pattern.search(value):
            message = f'"{labels[matter.name].label}" {matter.message}'
            report.add(matter.code, "warning", message, matter.name, matter.section)
    return report.sorted()


def _version(report: _Report, text: str | None) -> int | None:
    """The version as a number, reporting one that is not a positive integer."""
    if not text:
        return None
    if _VERSION.fullmatch(text) and int(text) > 0:
        return int(text)
    message = f'the version "{text}" is not a positive integer (1 for a first registration)'
    report.add(VERSION, "error", message, "version", APPENDIX_A)
    return None


def _is_date(text: str) -> bool:
    if not _DATE.fullmatch(text):
        return False
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _check_nid(report: _Report, nid: str | None, version: int | None) -> None:
    """The NID rules of RFC 8141 §2, §5.1 and §5.2."""
    if nid is None:
        return
    try:
        nid_class = classify_nid(nid)
    except ValueError:
        message = (
            f'"{nid}" is not a NID: 2 to 32 letters, digits and hyphens, beginning and ending '
            "with a letter or digit"
        )
        report.add(NID, "error", message, "namespace_identifier", "RFC 8141 §2")
        return
    reserved = reservation(nid)
    if reserved is not None:
        message = f'the NID "{nid}" is reserved: {reserved.reason}'
        report.add(NID, "error", message, "namespace_identifier", reserved.section)
    elif nid_class in (NIDClass.FORMAL, NIDClass.INFORMAL) and version == 1:
        # §5.1: "It MUST NOT be an already-registered NID." A warning: version 1 of a namespace
        # registered long ago is that namespace's own template, not a new request.
        message = (
            f'the NID "{nid}" is already registered ({nid_class.value}); a new registration '
            "must not use it unless this is that namespace's own template"
        )
        report.add(NID, "warning", message, "namespace_identifier", "RFC 8141 §5.1")
    elif nid_class is NIDClass.UNREGISTERED and nid.lower().startswith("urn-"):
        # §5.2: "the registrant does not designate the NID; instead, IANA assigns the NID".
        message = f'"{nid}" is an informal NID: IANA assigns those, the registrant does not'
        report.add(NID, "warning", message, "namespace_identifier", "RFC 8141 §5.2")


# RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+\-.]*")
_STATUSES: Final = ("permanent", "provisional", "historical")


def _scheme_requirements(status: str | None) -> dict[str, tuple[Severity, str]]:
    """For each field, how bad its absence is and why, given the requested status."""
    every: dict[str, tuple[Severity, str]] = {
        spec.name: ("error", "RFC 4395 §5.4") for spec in _SCHEME_FIELDS
    }
    required = dict(every)  # permanent, or status unknown
    if status == "provisional":
        # §3: "While the guidelines in Section 2 are REQUIRED for permanent registration, they
        # are RECOMMENDED for provisional registration. For a provisional registration, the
        # following are REQUIRED: ... The scheme name meets the syntactic requirements of
        # Section 2.8. ... Contact information ... is included. ... A valid Security
        # Considerations section". References: "If no permanent, citable specification ... is
        # included, credible reasons for not providing it should be given" - a SHOULD.
        required = dict.fromkeys(every, ("warning", "RFC 4395 §3"))
        for name in ("uri_scheme_name", "status", "contact", "security_considerations"):
            required[name] = ("error", "RFC 4395 §3")
    elif status == "historical":
        # §4 asks only that "the registration should contain some indication to where the
        # scheme was previously defined or documented": the name and status, then References.
        required = dict.fromkeys(every, ("warning", "RFC 4395 §4"))
        for name in ("uri_scheme_name", "status"):
            required[name] = ("error", "RFC 4395 §5.4")
    return required


def _validate_scheme(registration: SchemeRegistration) -> list[Finding]:
    report = _Report(registration)
    report.layout("RFC 4395 §5.4")
    status = _status(registration.status)
    requirements = _scheme_requirements(status)
    for spec in _SCHEME_FIELDS:
        severity, section = requirements[spec.name]
        report.require(spec, severity, section)

    name = registration.uri_scheme_name
    if name and not _SCHEME.fullmatch(name):
        message = f'"{name}" is not a scheme name: a letter, then letters, digits, "+", "-" and "."'
        report.add(SCHEME_NAME, "error", message, "uri_scheme_name", "RFC 4395 §2.8, RFC 3986 §3.1")
    elif name and name != name.lower():
        message = f'the scheme name "{name}" must be registered in lower case: "{name.lower()}"'
        report.add(SCHEME_NAME_CASE, "warning", message, "uri_scheme_name", "RFC 4395 §2.8")
    if registration.status and status is None:
        message = f'the status "{registration.status}" is not permanent, provisional or historical'
        report.add(SCHEME_STATUS, "error", message, "status", "RFC 4395 §5.4")
    contact = registration.contact
    if contact and not _CONTACT_INFORMATION.search(contact):
        # §3: "Contact information identifying the person supplying the registration".
        message = '"Contact" gives no contact information (email, phone number or address)'
        report.add(SCHEME_CONTACT, "warning", message, "contact", "RFC 4395 §3, §5.4")
    return report.sorted()


def _status(text: str | None) -> str | None:
    """The requested status in lower case (§5.4 quotes them: 'permanent'), or None."""
    status = (text or "").strip().strip("'\"").rstrip(".").lower()
    return status if status in _STATUSES else None


__all__ = [
    "KINDS",
    "Kind",
    "Location",
    "NamespaceRegistration",
    "Registration",
    "SchemeRegistration",
    "blank",
    "check",
    "detect",
    "kind_of",
    "parse",
    "render",
    "validate",
]
