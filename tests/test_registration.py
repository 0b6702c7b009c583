"""Registration templates: RFC 8141 Appendix A (URN namespaces) and RFC 4395 §5.4 (URI schemes)."""

from __future__ import annotations

import io
import re
import sys
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from urnkit import registration
from urnkit.cli import main
from urnkit.findings import Finding, is_acceptable
from urnkit.namespaces import NIDClass, classify_nid, reservation
from urnkit.registration import (
    Location,
    NamespaceRegistration,
    SchemeRegistration,
    blank,
    check,
    detect,
    parse,
    render,
    validate,
)

# RFC 8141 §7.1, verbatim: the "urn" URI scheme registration.
RFC_8141_URN_SCHEME = """\
   URI Scheme Name:  urn

   Status:  permanent

   URI Scheme Syntax:  See Section 2 of RFC 8141.

   URI Scheme Semantics:  The "urn" scheme identifies Uniform Resource
      Names, which are persistent, location-independent resource
      identifiers.

   Encoding Considerations:  See Section 2 of RFC 8141.

   Applications/Protocols That Use This URI Scheme Name:  Uniform
      Resource Names are used in a wide variety of applications,
      including bibliographic reference systems and as names for
      Extensible Markup Language (XML) namespaces.

   Interoperability Considerations:  See Section 4 of RFC 8141.

   Security Considerations:  See Sections 6.4.4 and 8 of RFC 8141.

   Contact:  URNBIS working group [mailto:urn@ietf.org]

   Author/Change Controller:  This scheme is registered under the IETF
      tree.  As such, the IETF maintains change control.

   References:  None.

"""

# draft-ietf-urnbis-rfc2141bis-urn-03 §7.1, verbatim (from its first field to its last line,
# page break included): the "urn" URI scheme registration as the draft had it.
RFC2141BIS_URN_SCHEME = """\
   URI scheme name:  urn

   Status:  permanent

   URI scheme syntax:

      See Section 2 of RFC XXXX.

   URI scheme semantics:

      'urn' URIs, known as Universal Resource Names (URNs), serve as
      persistent, location-independent, resource identifiers for
      concrete and abstract objects ("resource") that have network
      accessible instances and/or metadata.

      URNs are structured hierarchically into URN Namespaces, the
      management of which is delegated to namespace-specific
      authorities.  Each such URN Namespace is founded in an independent
      specification and registered with IANA, following the guidelines
      and procedures of BCP 66 (at the time of this registration: RFC
      3406, an update is in progress as RFC 3406bis
      [I-D.ietf-urnbis-rfc3406bis-urn-ns-reg]).

   Encoding considerations:

      All URNs are ASCII strings conforming to the general URI syntax
      from STD 66.  As described in Sections 2.2 and 2.5.2 of RFC XXXX,
      there may be characters allowed by the syntax and semantics of the
      identifier system underlying the URN Namespace but not contained
      in the US-ASCII charset.  Such characters MUST first be
      represented in Unicode and encoded in UTF-8 according to STD 63.
      Any octets outside the allowed character set MUST then be percent-
      encoded.

      Note that it is perfectly possible that the syntax and semantics
      of an underlying identifier system does not admit specific
      characters allowed by the syntax rules in RFC XXXX.

   Applications/protocols that use this URI scheme:

      URNs that serve to identify abstract resources for protocol
      purposes are expected to be recognized directly by the
      implementations of these portocols.

      In general, resolution systems for URNs are specified on a per-
      namespace basis.  If appropriate for the namespace, these systems
      resolve URNs to (possibly multiple) URIs that allow the network
      access to the identified object or metadata on it.



Hoenes                   Expires April 19, 2013                [Page 20]


Internet-Draft                 URN Syntax                   October 2012


      "Architectural Principles of Uniform Resource Name Resolution"
      (RFC 2276) explains the basic concepts.  Some resolution systems
      laid down in IETF specifications are:

      *  Trivial HTTP-based URN Resolution (RFC 2169)

      *  Dynamic Delegation Discovery System (DDDS, RFCs 3401-3404)

      *  Service Location Protocol (SLPv2, RFC 2608)

   Interoperability Considerations:

      Persistence and stability of URNs require appropriate resolution
      systems.

   Security Considerations:

      See Section 8 of RFC XXXX.

   Contact:

      The IETF URNbis working group.
      This registration will be discussed on the following IETF lists:
      urn and uri-review (AT ietf.org).

   Author / Change controller:

      The authors of RFC XXXX.
      Change control is with the IESG.

   References:

      RFC XXXX.

      Procedures for the specification and registration of URN
      Namespaces are detailed in BCP 66 (at the time of this writing:
      RFC 3406; an update is in progress in the URNbis WG as RFC 3406bis
      [I-D.ietf-urnbis-rfc3406bis-urn-ns-reg]).

"""

# RFC 8458 §5, the URN:NBN namespace registration. The only copy urnkit has is a scan; this is
# its text with the scanning errors put right ("Nanespace ldentifier" -> "Namespace Identifier")
# and the colon after "Revision Information" that the scan lost.
RFC_8458_NBN = """\
Namespace Identifier: NBN
   This namespace ID was formally assigned to the National
   Bibliography Number in October 2001, when the namespace was
   registered officially [RFC3188].  Utilization of URN:NBNs had
   started in demo systems already in 1998.  Since 2001, tens of
   millions of URN:NBNs have been assigned.  The number of users of
   the namespace has grown in two ways: new national libraries have
   started using NBNs, and many national libraries using the system
   have formed new liaisons.

Version: 4

Date: 2018-04-09

Registrant:
   Name: Juha Hakala
   Affiliation: Senior Adviser, The National Library of Finland
   Email: juha.hakala@helsinki.fi
   Postal: P.O. Box 15, 00014 Helsinki University, Finland
   Web URL: http://www.nationallibrary.fi/

   The National Library of Finland registered the namespace on behalf
   of the Conference of the European National Librarians (CENL) and
   Conference of Directors of National Libraries (CDNL).  The NBN
   namespace is available for free for the national libraries.  They
   can allow other organizations to assign URN:NBNs and use the
   resolution services established by the library for free or for a
   fee.  The fees, if collected, can be based on, e.g., the
   maintenance costs of the system.

Purpose: See Section 3 of RFC 8458

Syntax: See Section 4.2 of RFC 8458

Assignment: See Section 4.1 of RFC 8458

Security and Privacy: See Section 7 of RFC 8458

Interoperability:
   National libraries and their partners usually apply URN:NBNs if a
   standard identifier such as ISBN is not applicable for the
   resource to be identified.  Some overlap with other URN namespaces
   is possible.

   URN:NBNs may contain characters which must be percent-encoded, but
   usually they consist of printable ASCII characters only.

Resolution: See Section 4.4 of RFC 8458

Documentation: RFC 8458

Revision Information:
   This version of the URN:NBN namespace registration has been
   updated to use the revised definition of URN syntax from RFC 8141,
   although usage of r-components is not specified yet.  In addition,
   non-ISO 3166 (country code) based NBNs have been deleted due to
   lack of deployment.  The entire NBN prefix is now specified to be
   case insensitive in accordance with established practice.  This
   version also includes numerous clarifications based on actual
   usage of URN:NBNs.
"""

# A complete first registration written out in full, every matter of RFC 8141 §6.4 covered in
# the template itself: a national bibliography number-like namespace, "natbib".
NATBIB = """\
   Namespace Identifier:  natbib

   Version:  1

   Date:  2026-03-14

   Registrant:  Nordic Union Catalogue Consortium, Box 26, FI-00014
      Helsinki, Finland.  Contact: Aino Virtanen, aino.virtanen@example.org,
      +358 9 1912 3456.

   Purpose:  URNs in this namespace identify catalogue records and the
      digital resources they describe in the union catalogue of the
      Nordic national libraries.  The community of use is the libraries
      and archives of the Nordic countries; the URNs are used on public
      networks, and resolution services are available.

   Syntax:  The NSS is a two-letter library code, a hyphen and a
      record number:

         natbib-nss = library "-" record
         library    = 2ALPHA
         record     = 1*DIGIT

      Two natbib URNs are equivalent when they are equivalent under
      RFC 8141 §3 and their library codes match case-insensitively;
      record numbers have no case.  No q-component or f-component has
      a meaning specific to this namespace.

   Assignment:  Each member library assigns record numbers within its
      own library code, which the consortium delegates.  Numbers are
      assigned sequentially and never reassigned, so every URN is
      unique.

   Security and Privacy:  The records are public bibliographic data;
      no personal information appears in the URNs, so there is no
      privacy issue.  The security considerations are those of URNs in
      general (RFC 8141 §8).

   Interoperability:  None known.  The record numbers do not overlap
      with ISBN or ISSN syntax.

   Resolution:  Resolution is intended: the consortium operates an
      HTTP resolver at https://resolver.example.org/ for all URNs.

   Documentation:  Nordic Union Catalogue Identifier Specification,
      version 2, https://example.org/natbib-spec

   Additional Information:  See also the "nbn" namespace (RFC 8458),
      which identifies the same kind of resources by country.
"""

# RFC 4395 §5.4 and §3: a complete provisional registration of a vendor scheme, named as §2.8
# suggests ("a prefix based on their domain name, expressed in reverse order").
COM_EXAMPLE_CATALOG = """\
URI scheme name: com-example-catalog

Status: provisional

URI scheme syntax:
   com-example-catalog:<record-number>, record-number = 1*DIGIT

URI scheme semantics:
   Names a record of the Example Corp. catalogue; retrieval is by the
   catalogue's own client.

Encoding considerations:
   The URIs are ASCII only; nothing is percent-encoded.

Applications/protocols that use this URI scheme name:
   The Example Corp. catalogue client.

Interoperability considerations:
   None known.

Security considerations:
   Record numbers are public; dereferencing one reveals nothing
   private.

Contact:
   Jane Doe <jane.doe@example.com>

Author/Change controller:
   Example Corp., catalogue@example.com

References:
   Example Catalogue URI Specification, https://example.com/catalog-uri
"""

NAMESPACE_FIELDS = [f.name for f in fields(NamespaceRegistration) if f.compare]
SCHEME_FIELDS = [f.name for f in fields(SchemeRegistration) if f.compare]
NAMESPACE_REQUIRED = [
    name
    for name in NAMESPACE_FIELDS
    if name not in ("additional_information", "revision_information")
]


def codes(findings: list[Finding]) -> list[str]:
    return [finding.code for finding in findings]


def errors(findings: list[Finding]) -> list[Finding]:
    return [finding for finding in findings if finding.severity == "error"]


def natbib_text(**changes: Any) -> str:
    """The natbib registration with some fields changed (None: removed)."""
    return render(replace(parse(NATBIB, "urn-namespace"), **changes))


def natbib(**changes: Any) -> list[Finding]:
    """The findings on the natbib registration with some fields changed (None: removed)."""
    return check(natbib_text(**changes))


def catalog(**changes: Any) -> list[Finding]:
    """The findings on the com-example-catalog registration with some fields changed."""
    return check(render(replace(parse(COM_EXAMPLE_CATALOG, "uri-scheme"), **changes)))


# --- the registrations published in the RFCs pass -------------------------------------------------


def test_rfc8458_nbn_registration_passes() -> None:
    # RFC 8458 §5, RFC 8141 Appendix A
    registration_ = parse(RFC_8458_NBN)
    assert isinstance(registration_, NamespaceRegistration)
    assert registration_.nid == "NBN"
    assert registration_.version == "4"
    assert registration_.documentation == "RFC 8458"
    assert registration_.registrant is not None
    assert registration_.registrant.startswith("Name: Juha Hakala\nAffiliation:")
    assert registration_.additional_information is None
    # Fields that point to RFC 8458 leave the §6.4 matters to it; nothing else is wrong.
    assert check(RFC_8458_NBN) == []


def test_rfc8141_urn_scheme_registration_passes() -> None:
    # RFC 8141 §7.1, RFC 4395 §5.4: labels in title case, values on the label's line.
    registration_ = parse(RFC_8141_URN_SCHEME)
    assert isinstance(registration_, SchemeRegistration)
    assert registration_.uri_scheme_name == "urn"
    assert registration_.status == "permanent"
    assert registration_.uri_scheme_semantics == (
        'The "urn" scheme identifies Uniform Resource\n'
        "Names, which are persistent, location-independent resource\n"
        "identifiers."
    )
    assert registration_.references == "None."
    assert check(RFC_8141_URN_SCHEME) == []


def test_rfc2141bis_urn_scheme_registration_passes() -> None:
    # rfc2141bis §7.1, RFC 4395 §5.4: "Applications/protocols that use this URI scheme" and
    # "Author / Change controller" are spelled differently; values start below their labels.
    registration_ = parse(RFC2141BIS_URN_SCHEME)
    assert isinstance(registration_, SchemeRegistration)
    assert all(getattr(registration_, name) for name in SCHEME_FIELDS)
    assert registration_.author_change_controller == (
        "The authors of RFC XXXX.\nChange control is with the IESG."
    )
    assert check(RFC2141BIS_URN_SCHEME) == []


def test_complete_examples_have_no_findings() -> None:
    # RFC 8141 Appendix A and §6.4; RFC 4395 §3 and §5.4
    assert check(NATBIB) == []
    assert check(COM_EXAMPLE_CATALOG) == []
    assert classify_nid("natbib") is NIDClass.UNREGISTERED  # so a new registration may take it


# --- parsing --------------------------------------------------------------------------------------


def test_parse_keeps_multiline_values_without_their_indentation() -> None:
    # RFC 8141 Appendix A: values run over several lines, indented as the author likes.
    registration_ = parse(NATBIB)
    assert isinstance(registration_, NamespaceRegistration)
    assert registration_.syntax is not None
    assert registration_.syntax.splitlines()[:4] == [
        "The NSS is a two-letter library code, a hyphen and a",
        "record number:",
        "",
        '   natbib-nss = library "-" record',
    ]
    assert registration_.namespace_identifier == "natbib"


def test_parse_keeps_line_numbers_and_offsets() -> None:
    registration_ = parse(NATBIB)
    assert registration_.locations["namespace_identifier"] == Location(1, 3)
    assert registration_.locations["version"].line == 3
    assert registration_.locations["date"].line == 5
    offset = registration_.locations["resolution"].offset
    assert NATBIB[offset:].startswith("Resolution:")


def test_labels_match_regardless_of_case_and_spacing() -> None:
    # RFC 4395 §5.4 writes "URI scheme name", RFC 8141 §7.1 "URI Scheme Name".
    text = "uri SCHEME  name :  foo\nAuthor / Change Controller: me@example.org\n"
    registration_ = parse(text)
    assert registration_ == SchemeRegistration(
        uri_scheme_name="foo", author_change_controller="me@example.org"
    )


def test_only_lines_indented_like_the_first_label_start_fields() -> None:
    text = "Version: 1\nPurpose:\n   Syntax: is not a field here\nDate: 2020-01-01\n"
    registration_ = parse(text)
    assert registration_ == NamespaceRegistration(
        version="1", purpose="Syntax: is not a field here", date="2020-01-01"
    )


def test_text_before_the_first_field_is_ignored_and_crlf_is_read() -> None:
    text = "To IANA:\r\n\r\nURI scheme name: foo\r\nStatus: permanent\r\n"
    assert parse(text) == SchemeRegistration(uri_scheme_name="foo", status="permanent")


def test_detect_and_unrecognized_text() -> None:
    assert detect(NATBIB) == "urn-namespace"
    assert detect(RFC_8141_URN_SCHEME) == "uri-scheme"
    assert detect("Nothing here: at all") is None
    with pytest.raises(ValueError, match="no field"):
        parse("Nothing here: at all")
    [finding] = check("Nothing here: at all")
    assert (finding.code, finding.severity, finding.position) == (
        "template.unrecognized",
        "error",
        None,
    )


def test_a_kind_can_be_forced() -> None:
    assert parse("Status: permanent\nVersion: 2\n", "urn-namespace") == NamespaceRegistration(
        version="2"
    )


# --- RFC 8141 Appendix A: fields ---------------------------------------------------------------


@pytest.mark.parametrize("name", NAMESPACE_REQUIRED)
def test_each_missing_namespace_field_is_an_error(name: str) -> None:
    # RFC 8141 Appendix A
    findings = natbib(**{name: None})
    [finding] = errors(findings)
    assert finding.code == "template.missing-field"
    assert finding.section == "RFC 8141 Appendix A"
    label = next(s.label for s in registration._NAMESPACE_FIELDS if s.name == name)
    assert finding.message == f'the field "{label}" is missing'


@pytest.mark.parametrize("name", NAMESPACE_REQUIRED)
def test_each_empty_namespace_field_is_an_error(name: str) -> None:
    # RFC 8141 Appendix A
    text = natbib_text(**{name: ""})
    [finding] = errors(check(text))
    assert finding.code == "template.empty-field"
    assert finding.position is not None
    assert text[finding.position :].split(":")[0] == next(
        s.label for s in registration._NAMESPACE_FIELDS if s.name == name
    )


def test_a_missing_field_is_reported_where_it_belongs() -> None:
    # RFC 8141 Appendix A: Date comes between Version and Registrant.
    text = natbib_text(date=None)
    [finding] = check(text)
    assert finding.position == text.index("Registrant:")


def test_additional_information_is_optional() -> None:
    # RFC 8141 §6.4.7: "This section of the template is optional."
    assert natbib(additional_information=None) == []


@pytest.mark.parametrize("version", ["0", "-1", "1.0", "one", "v2", "1 (first)", "\u0663"])
def test_version_must_be_a_positive_integer(version: str) -> None:
    # RFC 8141 Appendix A: "starting with 1 and incrementing by 1 with each new version"
    [finding] = natbib(version=version)
    assert (finding.code, finding.severity, finding.section) == (
        "template.version",
        "error",
        "RFC 8141 Appendix A",
    )
    assert version in finding.message


@pytest.mark.parametrize(
    "date",
    [
        "2018-02-30",
        "2018-13-01",
        "18-04-09",
        "2018/04/09",
        "20180409",
        "2018-4-9",
        "April 2018",
        "2018-04-09T00:00",
    ],
)
def test_date_must_be_a_real_yyyy_mm_dd_date(date: str) -> None:
    # RFC 8141 Appendix A: "using the format YYYY-MM-DD"
    [finding] = natbib(date=date)
    assert (finding.code, finding.severity) == ("template.date", "error")


def test_leap_day_is_a_date() -> None:
    # RFC 8141 Appendix A
    assert natbib(date="2024-02-29") == []


@pytest.mark.parametrize("nid", ["X-foo", "xn--a", "fi-x", "urn-0", "urn", "urn-01", "ab"])
def test_reserved_nids_are_errors(nid: str) -> None:
    # RFC 8141 §5.1, §5.2: reserved NIDs can never be registered.
    [finding] = natbib(namespace_identifier=nid)
    reserved = reservation(nid)
    assert reserved is not None
    assert (finding.code, finding.severity, finding.section) == (
        "template.nid",
        "error",
        reserved.section,
    )
    assert reserved.reason in finding.message


@pytest.mark.parametrize("nid", ["a_b", "-abc", "abc-", "a", "a" * 33, "n\u00e4b"])
def test_what_is_not_a_nid_is_an_error(nid: str) -> None:
    # RFC 8141 §2: NID = (alphanum) 0*30(ldh) (alphanum)
    [finding] = natbib(namespace_identifier=nid)
    assert (finding.code, finding.severity, finding.section) == (
        "template.nid",
        "error",
        "RFC 8141 §2",
    )


def test_nid_is_the_first_word_of_the_field() -> None:
    # RFC 8458 §5 follows the NID with a paragraph of history.
    assert parse(RFC_8458_NBN, "urn-namespace").nid == "NBN"
    assert NamespaceRegistration(namespace_identifier='"natbib".').nid == "natbib"
    assert NamespaceRegistration(namespace_identifier="").nid is None


def test_version_1_of_a_registered_nid_is_a_warning() -> None:
    # RFC 8141 §5.1: "It MUST NOT be an already-registered NID." (or it is that namespace's own)
    [finding] = natbib(namespace_identifier="isbn")
    assert (finding.code, finding.severity, finding.section) == (
        "template.nid",
        "warning",
        "RFC 8141 §5.1",
    )
    assert natbib(namespace_identifier="isbn", version="2", revision_information="New.") == []


def test_an_informal_nid_chosen_by_the_registrant_is_a_warning() -> None:
    # RFC 8141 §5.2: "the registrant does not designate the NID; instead, IANA assigns the NID"
    [finding] = natbib(namespace_identifier="urn-99")
    assert (finding.code, finding.severity, finding.section) == (
        "template.nid",
        "warning",
        "RFC 8141 §5.2",
    )


def test_version_2_without_revision_information_is_an_error() -> None:
    # RFC 8141 Appendix A: Revision Information, "Description of changes from prior version(s)"
    text = natbib_text(version="2")
    [finding] = check(text)
    assert (finding.code, finding.severity, finding.section) == (
        "template.revision-information",
        "error",
        "RFC 8141 Appendix A",
    )
    assert finding.position == text.index("Version:")
    text = natbib_text(version="2", revision_information="")
    [finding] = check(text)
    assert finding.code == "template.revision-information"
    assert finding.position == text.index("Revision Information:")
    assert natbib(version="2", revision_information="Changed the syntax.") == []


def test_revision_information_is_not_needed_for_version_1() -> None:
    # RFC 8141 Appendix A: "Applicable only when earlier registrations have been revised."
    assert natbib(revision_information=None) == []


def test_a_field_given_twice_is_an_error() -> None:
    # RFC 8141 Appendix A: one value per field
    text = NATBIB + "\n   Version:  2\n"
    findings = check(text)
    [finding] = findings
    assert (finding.code, finding.severity) == ("template.duplicate-field", "error")
    assert finding.position == text.rindex("Version:")
    assert parse(text, "urn-namespace").version == "1"


def test_fields_out_of_order_are_a_warning() -> None:
    # RFC 8141 Appendix A gives the order.
    text = "Date: 2026-03-14\nVersion: 1\n"
    findings = [f for f in check(text) if f.code == "template.field-order"]
    assert [(f.severity, f.position) for f in findings] == [("warning", text.index("Version"))]


# --- RFC 8141 §6.4: the matters each section covers -------------------------------------------


@pytest.mark.parametrize(
    ("name", "value", "code", "section"),
    [
        (
            "registrant",
            "Aino Virtanen, Nordic Union Catalogue",
            "template.registrant-contact",
            "RFC 8141 Appendix A",
        ),
        (
            "purpose",
            "For the Nordic libraries' community.",
            "template.purpose-resources",
            "RFC 8141 §6.4.1",
        ),
        ("purpose", "Identifies catalogue records.", "template.purpose-scope", "RFC 8141 §6.4.1"),
        (
            "syntax",
            "Names compare case-insensitively.",
            "template.syntax-structure",
            "RFC 8141 §6.4.2",
        ),
        (
            "syntax",
            'natbib-nss = 2ALPHA "-" 1*DIGIT',
            "template.syntax-equivalence",
            "RFC 8141 §6.4.2",
        ),
        (
            "assignment",
            "Each library assigns numbers to its records.",
            "template.assignment-uniqueness",
            "RFC 8141 §6.4.3",
        ),
        ("assignment", "Every URN is unique.", "template.assignment-authority", "RFC 8141 §6.4.3"),
        (
            "security_and_privacy",
            "No personal data appears in the URNs.",
            "template.security",
            "RFC 8141 §6.4.4",
        ),
        (
            "security_and_privacy",
            "No security issues beyond RFC 8141 §8.",
            "template.privacy",
            "RFC 8141 §6.4.4",
        ),
        (
            "resolution",
            "An HTTP service at https://example.org/",
            "template.resolution-intent",
            "RFC 8141 §6.4.6",
        ),
    ],
)
def test_section_matters_left_out_are_warnings(
    name: str, value: str, code: str, section: str
) -> None:
    # RFC 8141 §6.4 (and Appendix A for the registrant's contact information)
    findings = natbib(**{name: value})
    assert [(f.code, f.severity, f.section) for f in findings] == [(code, "warning", section)]
    assert is_acceptable(findings)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("syntax", "Case-insensitive digits, structure opaque."),
        ("resolution", "None."),
        ("resolution", "No resolution is anticipated."),
        ("security_and_privacy", "None: the URNs carry no private data and no security risk."),
        ("registrant", "Aino Virtanen (aino AT example.org)"),
    ],
)
def test_section_matters_covered_in_few_words_are_fine(name: str, value: str) -> None:
    # RFC 8141 §6.4
    assert natbib(**{name: value}) == []


@pytest.mark.parametrize(
    "value", ["See Section 4.2 of RFC 8458", "Described in RFC 8458.", "See https://example.org/x"]
)
def test_pointers_to_other_documents_leave_the_matters_to_them(value: str) -> None:
    # RFC 8141 Appendix A: "Purpose: Described in Section 6.4.1 of this document." - a template
    # may point to the document that covers a matter.
    assert natbib(purpose=value, syntax=value, assignment=value, resolution=value) == []


# --- RFC 4395 §5.4: URI scheme registrations ---------------------------------------------------


@pytest.mark.parametrize("name", ["1abc", "a_b", "web cat", "caf\u00e9", "-abc", "+a"])
def test_scheme_name_must_follow_rfc3986(name: str) -> None:
    # RFC 4395 §2.8, RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )
    [finding] = catalog(uri_scheme_name=name)
    assert (finding.code, finding.severity, finding.section) == (
        "scheme.name",
        "error",
        "RFC 4395 §2.8, RFC 3986 §3.1",
    )


@pytest.mark.parametrize("name", ["a", "a+b-c.d", "z39.50r", "com-example-catalog"])
def test_scheme_names_that_follow_rfc3986_are_fine(name: str) -> None:
    # RFC 3986 §3.1
    assert catalog(uri_scheme_name=name) == []


def test_scheme_name_in_upper_case_is_a_warning() -> None:
    # RFC 4395 §2.8: "scheme names MUST be registered using lowercase letters"
    [finding] = catalog(uri_scheme_name="Com-Example-Catalog")
    assert (finding.code, finding.severity, finding.section) == (
        "scheme.name-case",
        "warning",
        "RFC 4395 §2.8",
    )
    assert '"com-example-catalog"' in finding.message


@pytest.mark.parametrize("status", ["permanent", "Provisional", "'historical'", "HISTORICAL."])
def test_status_is_one_of_three(status: str) -> None:
    # RFC 4395 §5.4: "should be one of 'permanent', 'provisional', or 'historical'"
    assert errors(catalog(status=status)) == []


@pytest.mark.parametrize("status", ["temporary", "perm", "permanent or provisional"])
def test_other_statuses_are_errors(status: str) -> None:
    # RFC 4395 §5.4
    findings = catalog(status=status)
    assert ("scheme.status", "error", "RFC 4395 §5.4") in [
        (f.code, f.severity, f.section) for f in findings
    ]


@pytest.mark.parametrize("name", SCHEME_FIELDS)
def test_each_missing_field_of_a_permanent_registration_is_an_error(name: str) -> None:
    # RFC 4395 §5.4: "the fields that must be supplied in a URI scheme registration request"
    if name == "status":
        findings = catalog(status=None)  # no status: judged as permanent, the strictest
    else:
        findings = catalog(status="permanent", **{name: None})
    [finding] = errors(findings)
    assert (finding.code, finding.section) == ("template.missing-field", "RFC 4395 §5.4")


@pytest.mark.parametrize(
    "name", ["uri_scheme_name", "status", "contact", "security_considerations"]
)
def test_fields_a_provisional_registration_requires(name: str) -> None:
    # RFC 4395 §3: "For a provisional registration, the following are REQUIRED: ..."
    findings = catalog(**{name: None})
    [finding] = errors(findings)
    assert finding.code == "template.missing-field"
    assert finding.section == ("RFC 4395 §5.4" if name == "status" else "RFC 4395 §3")


@pytest.mark.parametrize(
    "name",
    [
        "uri_scheme_syntax",
        "uri_scheme_semantics",
        "encoding_considerations",
        "applications_protocols",
        "interoperability_considerations",
        "author_change_controller",
        "references",
    ],
)
def test_other_fields_of_a_provisional_registration_are_recommended(name: str) -> None:
    # RFC 4395 §3: the guidelines of §2 "are RECOMMENDED for provisional registration"; for
    # References, "credible reasons for not providing it should be given".
    [finding] = catalog(**{name: None})
    assert (finding.code, finding.severity, finding.section) == (
        "template.missing-field",
        "warning",
        "RFC 4395 §3",
    )


def test_a_historical_registration_needs_a_name_and_status() -> None:
    # RFC 4395 §4: "should contain some indication to where the scheme was previously defined"
    text = "URI scheme name: oldscheme\nStatus: historical\n"
    findings = check(text)
    assert errors(findings) == []
    assert {(f.severity, f.section) for f in findings} == {("warning", "RFC 4395 §4")}
    assert len(findings) == len(SCHEME_FIELDS) - 2


def test_scheme_contact_without_contact_information_is_a_warning() -> None:
    # RFC 4395 §3: "Contact information identifying the person supplying the registration"
    [finding] = catalog(contact="Jane Doe")
    assert (finding.code, finding.severity) == ("scheme.contact", "warning")


# --- rendering and round trips -------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", [RFC_8458_NBN, RFC_8141_URN_SCHEME, RFC2141BIS_URN_SCHEME, NATBIB, COM_EXAMPLE_CATALOG]
)
def test_render_of_parse_keeps_the_field_values(text: str) -> None:
    # RFC 8141 Appendix A, RFC 4395 §5.4
    parsed = parse(text)
    assert parse(render(parsed)) == parsed
    assert render(parse(render(parsed))) == render(parsed)


def test_render_writes_the_template_in_order_with_labels_as_the_rfc() -> None:
    # RFC 4395 §5.4
    text = render(SchemeRegistration(references="RFC 8141", uri_scheme_name="urn", contact=""))
    assert text == "URI scheme name: urn\n\nContact:\n\nReferences: RFC 8141\n"


_CHARACTERS = st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs", "Zl", "Zp"))
_LINE = st.lists(st.text(_CHARACTERS, min_size=1, max_size=6), min_size=1, max_size=4).map(" ".join)


@st.composite
def values(draw: st.DrawFn) -> str | None:
    """A field value as parse makes them: None, "", or lines without common indentation and
    with no blank line at either end or whitespace at the end of a line."""
    kind = draw(st.sampled_from(["absent", "empty", "text"]))
    if kind == "absent":
        return None
    if kind == "empty":
        return ""
    first = draw(st.tuples(st.integers(0, 4), _LINE))
    rest = draw(st.lists(st.tuples(st.integers(0, 4), _LINE | st.just("")), max_size=4))
    lines = [first, *rest]
    while not lines[-1][1]:
        lines.pop()
    least = min(indent for indent, text in lines if text)
    return "\n".join(" " * (indent - least) + text if text else "" for indent, text in lines)


@given(st.fixed_dictionaries({name: values() for name in NAMESPACE_FIELDS}))
def test_namespace_registrations_render_and_parse_back_equal(chosen: dict[str, Any]) -> None:
    # RFC 8141 Appendix A
    template = NamespaceRegistration(**chosen)
    assert parse(render(template), "urn-namespace") == template
    if any(value is not None for value in chosen.values()):
        assert parse(render(template)) == template


@given(st.fixed_dictionaries({name: values() for name in SCHEME_FIELDS}))
def test_scheme_registrations_render_and_parse_back_equal(chosen: dict[str, Any]) -> None:
    # RFC 4395 §5.4
    template = SchemeRegistration(**chosen)
    assert parse(render(template), "uri-scheme") == template


@pytest.mark.parametrize("kind", registration.KINDS)
def test_blank_templates_have_every_field_empty(kind: registration.Kind) -> None:
    # RFC 8141 Appendix A, RFC 4395 §5.4
    blank_ = parse(blank(kind))
    assert registration.kind_of(blank_) == kind
    names = NAMESPACE_FIELDS if kind == "urn-namespace" else SCHEME_FIELDS
    assert all(getattr(blank_, name) == "" for name in names)


def test_validate_works_without_locations() -> None:
    # A registration made in code has no text: findings have no position.
    findings = validate(NamespaceRegistration(namespace_identifier="natbib", version="x"))
    assert {f.position for f in findings} == {None}
    assert "template.version" in codes(findings)


# --- the command line ----------------------------------------------------------------------------


_FINDING_LINE = re.compile(
    r"(?P<file>[^:]+):(?P<line>\d+): (?P<severity>error|warning): .+ \[[^,\]]+, [^\]]+\]"
)


def test_cli_check_of_a_valid_template(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "nbn.txt"
    path.write_text(RFC_8458_NBN, encoding="utf-8")
    assert main(["template", "check", str(path)]) == 0
    assert capsys.readouterr().out == ""


def test_cli_check_prints_findings_by_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # RFC 8141 Appendix A: Version 2 without Revision Information, and a reserved NID.
    text = NATBIB.replace("natbib", "X-natbib", 1).replace("Version:  1", "Version:  2")
    path = tmp_path / "reg.txt"
    path.write_text(text, encoding="utf-8")
    assert main(["template", "check", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f'{path}:1: error: the NID "X-natbib" is reserved: "X-" marked the experimental namespaces '
        "of RFC 3406, which RFC 8141 removed; names in them are not valid URNs "
        "[template.nid, RFC 8141 §5.1, Appendix C]",
        f"{path}:3: error: version 2 needs Revision Information: the changes from earlier "
        "versions [template.revision-information, RFC 8141 Appendix A]",
    ]


def test_cli_check_exits_0_with_warnings_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "reg.txt"
    path.write_text(COM_EXAMPLE_CATALOG.replace("com-example", "Com-Example", 1), "utf-8")
    assert main(["template", "check", str(path)]) == 0
    [line] = capsys.readouterr().out.splitlines()
    match = _FINDING_LINE.fullmatch(line)
    assert match is not None
    assert (match["line"], match["severity"]) == ("1", "warning")


def test_cli_check_of_a_missing_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["template", "check", str(tmp_path / "absent.txt")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_cli_check_reads_stdin(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"Version: 1\n")))
    assert main(["template", "check", "-"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith('<stdin>:1: error: the field "Namespace Identifier" is missing')


@pytest.mark.parametrize("kind", registration.KINDS)
def test_cli_new_prints_a_blank_template_whose_check_lists_what_is_missing(
    kind: registration.Kind, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["template", "new", "--kind", kind]) == 0
    text = capsys.readouterr().out
    assert text == blank(kind)
    path = tmp_path / "new.txt"
    path.write_text(text, encoding="utf-8")
    assert main(["template", "check", str(path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert all(_FINDING_LINE.fullmatch(line) for line in lines)
    assert all("template.empty-field" in line for line in lines)
    required = NAMESPACE_REQUIRED if kind == "urn-namespace" else SCHEME_FIELDS
    assert len(lines) == len(required)
    assert lines[0].startswith(f"{path}:1: error: the field ")


def test_cli_new_needs_a_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["template", "new"]) == 2
    assert main(["template", "new", "--kind", "mime-type"]) == 2


def test_tab_indented_labels_are_located_at_their_first_character() -> None:
    text = "\tVersion:\t1\n\tDate: 2020-01-01\n"
    registration_ = parse(text, "urn-namespace")
    assert registration_.locations["date"] == Location(2, text.index("Date"))
    assert (registration_.version, registration_.date) == ("1", "2020-01-01")
