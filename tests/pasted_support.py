"""URNs as readers paste them (issue 32; docs/resolution.md, "Pasted URNs"): what copying a URN
off a PDF or a web page adds around and inside it, shared by the tests of ``urnkit.pasted`` and
of the resolver's paths.

Example::

    for text in pasted_forms("urn:nbn:fi-fe2019-1234"):
        assert cleaned(text) == cleaned(sent(text)) == "urn:nbn:fi-fe2019-1234"
"""

from __future__ import annotations

from urllib.parse import quote


def pasted_forms(urn: str) -> list[str]:
    """``urn`` as readers paste it: followed by a space, a newline, a tab, ".", "/", ">" or
    ")." (the end of a sentence); after a zero-width space; with a soft hyphen after its 15th
    character; with U+2010 HYPHEN for its first or every hyphen-minus (a PDF's hyphenation),
    also followed by a space; followed by a no-break space; in angle brackets (RFC 3986,
    Appendix C) within a sentence and a line; between a byte order mark and a word joiner.
    ``urn`` has more than 15 characters, hyphen-minus among them."""
    return [
        urn + " ",
        urn + "\n",
        urn + "\t",
        urn + ".",
        urn + "/",
        urn + ">",
        urn + ").",
        "\u200b" + urn,
        urn[:15] + "\u00ad" + urn[15:],
        urn.replace("-", "\u2010", 1),
        urn.replace("-", "\u2010"),
        urn.replace("-", "\u2010") + " ",
        urn + "\u00a0",
        "\u00a0<" + urn + ">).\r\n",
        "\ufeff" + urn + "\u2060",
    ]


def sent(text: str) -> str:
    """``text`` percent-encoded as a browser sends it in a path: ``sent("urn:a:b\\u00a0")`` is
    ``"urn:a:b%C2%A0"``."""
    return quote(text, safe=":")
