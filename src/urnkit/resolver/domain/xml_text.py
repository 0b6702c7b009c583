"""The characters an XML 1.0 document can hold (XML 1.0 §2.2, production ``Char``).

>>> first_unfit("a\\x1fb")
'\\x1f'
>>> first_unfit("Łódź\\n") is None
True
"""

from __future__ import annotations

import re

NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""One character outside XML 1.0's ``Char`` production: C0 controls but TAB, LF and CR,
surrogates, U+FFFE and U+FFFF."""


def first_unfit(text: str) -> str | None:
    """The first character of ``text`` that no XML 1.0 document can hold, or None."""
    found = NOT_XML.search(text)
    return None if found is None else found.group()
