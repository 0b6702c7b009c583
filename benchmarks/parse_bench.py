"""CPU time per URN of urnkit's validation and parsing, beside its peers', on one URN mix.

Usage::

    .venv/bin/python benchmarks/parse_bench.py [--count N] [--rounds R] [--seed S] [--json]

The mix is generated deterministically (``random.Random(seed)``, fixed default seed): URN:NBN of
several national libraries, ISBN-10 and ISBN-13, UUID, IETF, OID and ``example`` URNs with
percent-encoded UTF-8, in varied case of ``URN:`` and the NID; 15% carry r-, q- and/or
f-components and 10% are invalid, each with one realistic mistake. :func:`generate_samples`
records which ones were made invalid, so a test can check the grammar against the intent.

Every operation runs over the whole list (``equivalence_key`` over the valid part) in one loop,
``--rounds`` times, the systems alternated round by round (the order turned each round) so that
whatever else the machine does falls on all of them alike. A figure is CPU time per URN (user
and system, ``time.process_time``) with the garbage collector on, as in a program that parses:
the median over the rounds, with the least and the most. The peers, ``urnparse`` and
``rfc3986`` (the ``bench`` extra), are optional: when one is not installed it is reported as
skipped.

The anchor outside Python is Go's ``github.com/leodido/go-urn``, Debian's only packaged URN
parser (``golang-github-leodido-go-urn-dev``; version 1.2 follows RFC 2141, so it rejects the
r-, q- and f-components of RFC 8141): ``benchmarks/anchors/go_urn_parse`` is built into a
temporary directory when ``go`` and that source are found (``go env GOPATH``, then ``dpkg -L``),
and parses the same texts, a round at a time, in the same alternation; the output says when
it is left out, and why. No Rust URN crate is compared: Debian packages none, and crates.io
was not reachable where this benchmark was written.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import math
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import urnkit
from urnkit import URN, URNSyntaxError
from urnkit.namespaces import nbn

SEED: Final = 8141
DEFAULT_COUNT: Final = 100_000
DEFAULT_ROUNDS: Final = 7
INVALID_SHARE: Final = 0.10
COMPONENT_SHARE: Final = 0.15

# The targets of the performance issue.
TARGET_IS_VALID_RATE: Final = 1_500_000
TARGET_IS_VALID_RATIO: Final = 10.0
TARGET_PARSE_RATE: Final = 500_000


@dataclass(frozen=True, slots=True)
class Sample:
    """One generated text and what the generator meant by it."""

    text: str
    family: str  # e.g. "nbn:de", "isbn-13", "uuid", "example"
    mistake: str | None  # None for a valid URN, else the kind of mistake, e.g. "space"
    components: bool  # whether a valid URN carries r-, q- and/or f-components

    @property
    def valid(self) -> bool:
        """Whether the generator meant this text to be a valid RFC 8141 URN."""
        return self.mistake is None


# --- the generator ----------------------------------------------------------------------------

_DIGITS = "0123456789"
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_UNRESERVED = frozenset(_ALNUM + "-._~")


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(_DIGITS, k=n))


def _date_stamp(rng: random.Random) -> str:
    year, month, day = rng.randint(2000, 2024), rng.randint(1, 12), rng.randint(1, 28)
    return f"{year}{month:02d}{day:02d}"


def _nbn(rng: random.Random) -> tuple[str, str]:
    """A national-bibliography-number NSS: (country, NSS)."""
    country = rng.choice(("fi", "de", "de", "se", "cz", "nl", "hr", "no", "at", "ch"))
    if country == "fi":
        if rng.random() < 0.6:
            return country, f"fi-fe{_date_stamp(rng)}{_digits(rng, 4)}"
        org = rng.choice(("jyu", "hulib", "uef", "tuni", "aalto", "amk"))
        return country, f"fi:{org}-{_date_stamp(rng)}{_digits(rng, 4)}"
    if country == "de":
        sub = rng.choice(("gbv:089", "bvb:19", "hbz:6", "bsz:21", "kobv:83", "hebis:30", "101:1"))
        body = f"de:{sub}-{_digits(rng, rng.randint(6, 11))}"
        return country, body + nbn.dnb_check_digit(f"urn:nbn:{body}")
    if country == "se":
        org = rng.choice(("uu", "kth", "liu", "su", "lnu", "umu", "oru", "mdh"))
        return country, f"se:{org}:diva-{rng.randint(1, 499_999)}"
    if country == "cz":
        registrar = rng.choice(("mzk", "nkp", "aba001", "boa001", "tub001", "vkol"))
        return country, f"cz:{registrar}-{''.join(rng.choices(_BASE36, k=6))}"
    if country == "nl":
        suffix = "".join(rng.choices(_BASE36, k=rng.randint(6, 9)))
        return country, f"nl:ui:{rng.choice(('13', '17', '25', '29', '31'))}-{suffix}"
    if country == "hr":
        return country, f"hr:{rng.randint(100, 300)}:{_digits(rng, 6)}"
    if country == "no":
        if rng.random() < 0.5:
            return country, f"no-{rng.randint(1000, 99_999)}"
        kind = rng.choice(("digibok", "digavis", "digitidsskrift"))
        return country, f"no-nb_{kind}_{_date_stamp(rng)}{_digits(rng, 5)}"
    if country == "at":
        library = rng.choice(("ubi", "ubw", "ubg", "ubs"))
        return country, f"at:at-{library}:{rng.randint(1, 3)}-{_digits(rng, rng.randint(4, 6))}"
    return country, f"ch:{rng.choice(('bel', 'rero', 'zb'))}-{_digits(rng, rng.randint(6, 7))}"


def _isbn10(rng: random.Random) -> str:
    body = _digits(rng, 9)
    check = -sum(int(d) * w for w, d in zip(range(10, 1, -1), body, strict=True)) % 11
    digits = body + ("X" if check == 10 else str(check))
    if rng.random() < 0.5:
        return digits
    return f"{digits[0]}-{digits[1:4]}-{digits[4:9]}-{digits[9]}"


def _isbn13(rng: random.Random) -> str:
    body = rng.choice(("978", "979")) + _digits(rng, 9)
    check = -sum(int(d) * (3 if i % 2 else 1) for i, d in enumerate(body)) % 10
    digits = f"{body}{check}"
    if rng.random() < 0.5:
        return digits
    return f"{digits[:3]}-{digits[3]}-{digits[4:7]}-{digits[7:12]}-{digits[12]}"


_IETF_PARAMS = (
    "xml:ns:yang:ietf-interfaces",
    "xml:ns:yang:ietf-ip",
    "xml:ns:netconf:base:1.0",
    "xml:ns:xmpp-stanzas",
    "xml:ns:caldav",
    "xml:ns:vcard-4.0",
    "oauth:grant-type:jwt-bearer",
    "oauth:grant-type:token-exchange",
    "oauth:token-type:id_token",
    "scim:schemas:core:2.0:User",
    "acme:error:badNonce",
)


def _ietf(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.45:
        return f"rfc:{rng.randint(1, 9700)}"
    if roll < 0.55:
        return f"{rng.choice(('bcp', 'std'))}:{rng.randint(1, 240)}"
    return "params:" + rng.choice(_IETF_PARAMS)


def _oid(rng: random.Random) -> str:
    roll = rng.random()
    tail = ".".join(str(rng.randint(1, 40)) for _ in range(rng.randint(1, 4)))
    if roll < 0.5:
        return f"1.3.6.1.4.1.{rng.randint(1, 60_000)}.{tail}"
    if roll < 0.8:
        return f"2.16.840.1.113883.{tail}"
    if roll < 0.9:
        return f"1.2.840.113549.1.{tail}"
    return f"2.25.{rng.getrandbits(128)}"


_NAMES = (
    "Müller",
    "Zürich",
    "Göteborg",
    "Ålesund",
    "Øresund",
    "Škoda",
    "Łódź",
    "Kraków",
    "São Paulo",
    "Straße",
    "naïve-café",
    "Ελλάδα",
    "Москва",
    "Jyväskylä",
)


def _percent_encode(text: str, upper: bool) -> str:
    hex_format = "%{:02X}" if upper else "%{:02x}"
    return "".join(
        ch if ch in _UNRESERVED else "".join(hex_format.format(b) for b in ch.encode("utf-8"))
        for ch in text
    )


def _example(rng: random.Random) -> str:
    upper = rng.random() < 0.5  # both hex cases: %C3%BC and %c3%bc
    name = _percent_encode(rng.choice(_NAMES), upper)
    roll = rng.random()
    if roll < 0.4:
        return name
    if roll < 0.7:
        return f"person:{name}"
    return f"place:{name}/{rng.randint(1, 99)}"


def _assigned_name(rng: random.Random) -> tuple[str, str, str]:
    """A valid assigned-name as (family, NID, NSS), the NID in lower case."""
    roll = rng.random()
    if roll < 0.35:
        country, nss = _nbn(rng)
        return f"nbn:{country}", "nbn", nss
    if roll < 0.43:
        return "isbn-10", "isbn", _isbn10(rng)
    if roll < 0.50:
        return "isbn-13", "isbn", _isbn13(rng)
    if roll < 0.65:
        text = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        return "uuid", "uuid", text.upper() if rng.random() < 0.1 else text
    if roll < 0.75:
        return "ietf", "ietf", _ietf(rng)
    if roll < 0.85:
        return "oid", "oid", _oid(rng)
    return "example", "example", _example(rng)


def _vary_case(rng: random.Random, word: str) -> str:
    roll = rng.random()
    if roll < 0.72:
        return word
    if roll < 0.94:
        return word.upper()
    return word.capitalize()


_R_COMPONENTS = ("CCResolve:cc=uk", "resolver=n2t", "https://nbn-resolving.org", "a=1&b=2")
_Q_COMPONENTS = ("lang=fi", "version=2&format=pdf", "page=12", "=", "x=1/2?y", "format=xml")
_F_COMPONENTS = ("section-2", "page=12", "", "p.3", "toc", "chapter/4?draft")


def _components(rng: random.Random) -> str:
    which = rng.choice(("r", "q", "f", "f", "rq", "qf", "rf", "rqf"))
    text = ""
    if "r" in which:
        text += "?+" + rng.choice(_R_COMPONENTS)
    if "q" in which:
        text += "?=" + rng.choice(_Q_COMPONENTS)
    if "f" in which:
        text += "#" + rng.choice(_F_COMPONENTS)
    return text


_MISTAKES = (
    "space",
    "non-ascii",
    "bad-percent",
    "bare-question-mark",
    "one-letter-nid",
    "nid-ends-in-hyphen",
    "missing-nss",
    "scheme-typo",
)
_DASHES = "\u2013\u2014\u2010"  # en dash, em dash, Unicode hyphen: what word processors insert
_SCHEME_TYPOS = ("uri:", "urm:", "um:", "rn:", "nrn:", "ur:", "urn;", "urn.", "urn=", "urn :")


def _spoil(rng: random.Random, scheme: str, nid: str, nss: str) -> tuple[str, str]:
    """One realistic mistake made to a valid URN: (mistake, text)."""
    mistake = rng.choice(_MISTAKES)
    at = rng.randint(0, len(nss))
    if mistake == "space":
        roll = rng.random()
        if roll < 0.6:
            return mistake, f"{scheme}:{nid}:{nss[:at]} {nss[at:]}"
        if roll < 0.9:
            return mistake, f"{scheme}:{nid}:{nss} "  # copied with a trailing blank
        return mistake, f" {scheme}:{nid}:{nss}"
    if mistake == "non-ascii":
        if "-" in nss and rng.random() < 0.5:  # a word processor's dash
            dashed = nss.replace("-", rng.choice(_DASHES), 1)
            return mistake, f"{scheme}:{nid}:{dashed}"
        return mistake, f"{scheme}:{nid}:{nss[:at]}{rng.choice('üéøåšł')}{nss[at:]}"
    if mistake == "bad-percent":
        roll = rng.random()
        if roll < 0.4:  # the escape itself is malformed wherever it stands
            escape = rng.choice(("%u00FC", "%G1", "%%", "%-2", "%zz", "% 2"))
            return mistake, f"{scheme}:{nid}:{nss[:at]}{escape}{nss[at:]}"
        return mistake, f"{scheme}:{nid}:{nss}{rng.choice(('%', '%2', '%C'))}"  # cut short
    if mistake == "bare-question-mark":
        query = rng.choice(("lang=fi", "format=pdf", "download", "", "v=2"))
        return mistake, f"{scheme}:{nid}:{nss}?{query}"
    if mistake == "one-letter-nid":
        return mistake, f"{scheme}:{rng.choice('axni')}:{nss}"
    if mistake == "nid-ends-in-hyphen":
        return mistake, f"{scheme}:{nid}-:{nss}"
    if mistake == "missing-nss":
        return mistake, f"{scheme}:{nid}:" if rng.random() < 0.7 else f"{scheme}:{nid}"
    typo = rng.choice(_SCHEME_TYPOS)
    typo = typo.upper() if scheme.isupper() else typo
    return mistake, f"{typo}{nid}:{nss}"


def generate_samples(count: int = DEFAULT_COUNT, seed: int = SEED) -> list[Sample]:
    """``count`` URN texts with their intent: exactly ``round(count * INVALID_SHARE)`` invalid
    ones and ``round(count * COMPONENT_SHARE)`` valid ones with components, in random order."""
    rng = random.Random(seed)
    n_invalid = round(count * INVALID_SHARE)
    n_components = round(count * COMPONENT_SHARE)
    order = rng.sample(range(count), count)
    invalid = set(order[:n_invalid])
    with_components = set(order[n_invalid : n_invalid + n_components])
    samples: list[Sample] = []
    for i in range(count):
        family, nid, nss = _assigned_name(rng)
        scheme, nid = _vary_case(rng, "urn"), _vary_case(rng, nid)
        if i in invalid:
            mistake, text = _spoil(rng, scheme, nid, nss)
            samples.append(Sample(text, family, mistake, components=False))
        elif i in with_components:
            text = f"{scheme}:{nid}:{nss}{_components(rng)}"
            samples.append(Sample(text, family, None, components=True))
        else:
            samples.append(Sample(f"{scheme}:{nid}:{nss}", family, None, components=False))
    return samples


def generate(count: int = DEFAULT_COUNT, seed: int = SEED) -> list[str]:
    """The texts of :func:`generate_samples` (same ``count`` and ``seed``, same list)."""
    return [sample.text for sample in generate_samples(count, seed)]


# --- the operations ---------------------------------------------------------------------------
# Each runs one plain loop over the list, nothing else, so loop overhead is the same for all.
# try/except rather than contextlib.suppress: suppress costs a context manager per item.

Loop = Callable[[Sequence[str]], None]


def _urnkit_is_valid(texts: Sequence[str]) -> None:
    is_valid = urnkit.is_valid
    for text in texts:
        is_valid(text)


def _urnkit_parse(texts: Sequence[str]) -> None:
    parse = URN.parse
    for text in texts:
        try:  # noqa: SIM105
            parse(text)
        except URNSyntaxError:
            pass


def _urnkit_equivalence_key(texts: Sequence[str]) -> None:
    parse = URN.parse
    for text in texts:
        parse(text).equivalence_key()


@dataclass(frozen=True)
class Peer:
    """A peer library's validating call, as a timed loop and as a predicate."""

    name: str
    call: str  # what is measured, for the table
    loop: Loop
    accepts: Callable[[str], bool]


def _urnparse_peer() -> Peer | None:
    try:
        from urnparse import URN8141, InvalidURNFormatError
    except ImportError:
        return None
    from_string = URN8141.from_string  # parses and validates NID and NSS; raises if invalid

    def loop(texts: Sequence[str]) -> None:
        for text in texts:
            try:  # noqa: SIM105
                from_string(text)
            except InvalidURNFormatError:
                pass

    def accepts(text: str) -> bool:
        try:
            from_string(text)
        except InvalidURNFormatError:
            return False
        return True

    return Peer("urnparse", "URN8141.from_string(s)", loop, accepts)


def _rfc3986_peer() -> Peer | None:
    try:
        import rfc3986
        from rfc3986 import exceptions, validators
    except ImportError:
        return None
    # rfc3986 2.x's documented validation (uri.is_valid() is deprecated since 1.1): a Validator
    # that requires a scheme and a path (a URN has no authority) and checks every component.
    # Note that uri_reference() percent-encodes what it parses (a space becomes %20, "%zz"
    # becomes %25zz), so spaces, non-ASCII and broken escapes pass: a baseline, not a URN check.
    validate = (
        validators.Validator()
        .require_presence_of("scheme", "path")
        .check_validity_of("scheme", "path", "query", "fragment")
        .validate
    )
    uri_reference = rfc3986.uri_reference
    error: type[Exception] = exceptions.ValidationError

    def loop(texts: Sequence[str]) -> None:
        for text in texts:
            try:  # noqa: SIM105
                validate(uri_reference(text))
            except error:
                pass

    def accepts(text: str) -> bool:
        try:
            validate(uri_reference(text))
        except error:
            return False
        return True

    return Peer("rfc3986", "Validator().validate(uri_reference(s))", loop, accepts)


# --- the Go anchor ---------------------------------------------------------------------------

GO_ANCHOR: Final = Path(__file__).parent / "anchors" / "go_urn_parse"
GO_PACKAGE: Final = "golang-github-leodido-go-urn-dev"  # Debian's go-urn source
GO_IMPORT: Final = Path("src", "github.com", "leodido", "go-urn")
RUST: Final = (
    "Rust: no URN crate compared (Debian packages none; crates.io was not reachable where "
    "this benchmark was written)"
)


def go_path() -> str | None:
    """A GOPATH holding go-urn's source: ``go env GOPATH``'s entries, then the directory
    Debian's package installs it under (from ``dpkg -L``); None when neither has it."""
    found = subprocess.run(["go", "env", "GOPATH"], capture_output=True, text=True, check=False)
    for entry in found.stdout.strip().split(os.pathsep):
        if entry and (Path(entry) / GO_IMPORT / "urn.go").is_file():
            return entry
    if shutil.which("dpkg") is None:
        return None
    listed = subprocess.run(["dpkg", "-L", GO_PACKAGE], capture_output=True, text=True)
    suffix = f"/{GO_IMPORT.as_posix()}/urn.go"
    for line in listed.stdout.splitlines():
        if line.endswith(suffix):
            return line.removesuffix(suffix)
    return None


def build_go_anchor(directory: Path) -> tuple[Path | None, str]:
    """The Go anchor built into ``directory`` (GOPATH mode, against go-urn's source as
    :func:`go_path` finds it), and what was built; or None and why not."""
    if shutil.which("go") is None:
        return None, "go is not on PATH (Debian: apt-get install golang-go)"
    gopath = go_path()
    if gopath is None:
        return None, f"go-urn's source was not found (Debian: apt-get install {GO_PACKAGE})"
    binary = directory / "go_urn_parse"
    environment = os.environ | {"GO111MODULE": "off", "GOPATH": gopath, "GOFLAGS": ""}
    built = subprocess.run(
        ["go", "build", "-o", str(binary), "."],
        cwd=GO_ANCHOR,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        return None, f"the Go anchor did not build: {built.stderr.strip()}"
    return binary, f"github.com/leodido/go-urn from {gopath}"


class GoAnchor:
    """The built Go anchor, running over ``texts``: a round at a time, on command."""

    def __init__(self, binary: Path, texts: Sequence[str], directory: Path) -> None:
        if any("\n" in text for text in texts):
            raise ValueError("the Go anchor reads one text a line")
        inputs = directory / "urns.txt"
        inputs.write_text("".join(f"{text}\n" for text in texts), encoding="utf-8")
        self._process = subprocess.Popen(
            [str(binary), str(inputs)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def _ask(self, command: str) -> str:
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        self._process.stdin.write(command + "\n")
        self._process.stdin.flush()
        return self._process.stdout.readline().strip()

    def run(self) -> float:
        """Parse every text once; the Go process's CPU seconds for it."""
        nanoseconds, _ = self._ask("run").split()
        return int(nanoseconds) / 1e9

    def verdicts(self) -> list[bool]:
        """Whether go-urn accepts each text."""
        return [flag == "1" for flag in self._ask("verdicts")]

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait()


# --- measuring --------------------------------------------------------------------------------


def cpu_seconds(loop: Loop, texts: Sequence[str]) -> float:
    """The CPU time (user and system) of this process for one ``loop(texts)``, the garbage
    collector on, as in a program that parses; garbage left by earlier runs is collected
    first so that it is not charged to this one."""
    gc.collect()
    start = time.process_time()
    loop(texts)
    return time.process_time() - start


@dataclass(frozen=True)
class Result:
    operation: str
    items: int
    seconds: tuple[float, ...]  # CPU seconds, one a round

    def per_item_us(self) -> tuple[float, float, float]:
        """CPU µs per URN: the median over the rounds, the least and the most."""
        low, middle, high = min(self.seconds), statistics.median(self.seconds), max(self.seconds)
        return tuple(value / self.items * 1e6 for value in (middle, low, high))  # type: ignore[return-value]

    @property
    def rate(self) -> float:
        """URNs per CPU second, at the median."""
        middle = statistics.median(self.seconds)
        return self.items / middle if middle > 0 else math.inf


Timed = Callable[[], float]  # one round of one system: the CPU seconds it took


def alternated(systems: Sequence[tuple[str, int, Timed]], rounds: int) -> list[Result]:
    """Every system once a round, the order turned round by round (A, B, …, then …, B, A)."""
    seconds: dict[str, list[float]] = {name: [] for name, _, _ in systems}
    for number in range(rounds):
        for name, _, timed in systems if number % 2 == 0 else list(reversed(systems)):
            seconds[name].append(timed())
    return [Result(name, items, tuple(seconds[name])) for name, items, _ in systems]


def _agreement(theirs: Sequence[bool], ours: Sequence[bool]) -> dict[str, int]:
    pairs = list(zip(theirs, ours, strict=True))
    return {
        "accepted": sum(theirs),
        "both_accept": sum(a and b for a, b in pairs),
        "only_peer_accepts": sum(a and not b for a, b in pairs),
        "only_urnkit_accepts": sum(b and not a for a, b in pairs),
    }


def run(count: int, rounds: int, seed: int) -> dict[str, Any]:
    """Generate the mix, time every system round by round and count what each accepts."""
    samples = generate_samples(count, seed)
    texts = [sample.text for sample in samples]
    valid = [text for text in texts if urnkit.is_valid(text)]
    peers = {"urnparse": _urnparse_peer(), "rfc3986": _rfc3986_peer()}
    skipped = {
        name: "not installed; pip install -e '.[bench]'"
        for name, peer in peers.items()
        if peer is None
    }
    systems: list[tuple[str, int, Timed]] = [
        (name, len(items), functools.partial(cpu_seconds, loop, items))
        for name, loop, items in (
            ("urnkit.is_valid(s)", _urnkit_is_valid, texts),
            ("urnkit.URN.parse(s)", _urnkit_parse, texts),
            ("urnkit.URN.parse(s), valid only", _urnkit_parse, valid),
            ("URN.parse(s).equivalence_key(), valid", _urnkit_equivalence_key, valid),
        )
    ]
    for peer in peers.values():
        if peer is not None:
            timed = functools.partial(cpu_seconds, peer.loop, texts)
            systems.append((f"{peer.name} {peer.call}", len(texts), timed))
    ours = [urnkit.is_valid(text) for text in texts]
    agreement: dict[str, dict[str, int]] = {
        "urnkit.is_valid": {
            "accepted": sum(ours),
            "agrees_with_intent": sum(
                verdict == sample.valid for verdict, sample in zip(ours, samples, strict=True)
            ),
        }
    }
    for name, peer in peers.items():
        if peer is not None:
            agreement[name] = _agreement([peer.accepts(text) for text in texts], ours)
    with tempfile.TemporaryDirectory(prefix="parse-bench-") as directory:
        binary, built = build_go_anchor(Path(directory))
        if binary is None:
            skipped["go-urn"] = built
            results = alternated(systems, rounds)
        else:
            anchor = GoAnchor(binary, texts, Path(directory))
            try:
                systems.append((GO_OPERATION, len(texts), anchor.run))
                results = alternated(systems, rounds)
                agreement["go-urn"] = _agreement(anchor.verdicts(), ours)
            finally:
                anchor.close()
    return _report(count, rounds, seed, samples, results, agreement, skipped, built)


GO_OPERATION: Final = "Go: go-urn urn.Parse(b) (RFC 2141)"


def _report(
    count: int,
    rounds: int,
    seed: int,
    samples: Sequence[Sample],
    results: Sequence[Result],
    agreement: dict[str, dict[str, int]],
    skipped: dict[str, str],
    go: str,
) -> dict[str, Any]:
    urnparse_rate = next((r.rate for r in results if r.operation.startswith("urnparse ")), None)
    rate = {r.operation: r.rate for r in results}
    is_valid_rate, parse_rate = rate["urnkit.is_valid(s)"], rate["urnkit.URN.parse(s)"]
    targets = [
        _target(
            f"is_valid >= {TARGET_IS_VALID_RATE:,} URNs/s", is_valid_rate, TARGET_IS_VALID_RATE
        ),
        _target(
            f"is_valid >= {TARGET_IS_VALID_RATIO:g}x urnparse",
            None if urnparse_rate is None else is_valid_rate / urnparse_rate,
            TARGET_IS_VALID_RATIO,
        ),
        _target(f"URN.parse >= {TARGET_PARSE_RATE:,} URNs/s", parse_rate, TARGET_PARSE_RATE),
    ]
    rows = []
    for r in results:
        median, low, high = r.per_item_us()
        rows.append({
            "operation": r.operation, "items": r.items, "cpu_seconds": list(r.seconds),
            "cpu_us_median": median, "cpu_us_min": low, "cpu_us_max": high,
            "per_cpu_second": r.rate,
            "vs_urnparse": None if urnparse_rate is None else r.rate / urnparse_rate,
        })  # fmt: skip
    return {
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
        "machine": platform.machine(),
        "load_average": os.getloadavg()[0],
        "count": count,
        "rounds": rounds,
        "seed": seed,
        "intended_valid": sum(sample.valid for sample in samples),
        "with_components": sum(sample.components for sample in samples),
        "go": None if "go-urn" in skipped else go,
        "skipped": skipped,
        "rust": RUST,
        "results": rows,
        "agreement": agreement,
        "targets": targets,
    }


def _target(name: str, measured: float | None, required: float) -> dict[str, Any]:
    status = "SKIPPED" if measured is None else "PASS" if measured >= required else "MISS"
    return {"target": name, "required": required, "measured": measured, "status": status}


# --- reporting --------------------------------------------------------------------------------


def format_report(report: dict[str, Any]) -> str:
    """The human-readable table of a :func:`run` report."""
    lines = [
        f"{report['count']:,} URNs (seed {report['seed']}): {report['intended_valid']:,} valid, "
        f"{report['with_components']:,} of them with components; {report['implementation']} "
        f"{report['python']} on {report['machine']}; load average {report['load_average']:.1f}",
        f"CPU time per URN (user + system, the garbage collector on), the median of "
        f"{report['rounds']} rounds (least-most); the systems alternate round by round",
        "",
        f"{'operation':<42} {'items':>8} {'CPU µs/URN':>20} {'URNs/s':>11} {'vs urnparse':>11}",
        "-" * 96,
    ]
    for row in report["results"]:
        ratio = "n/a" if row["vs_urnparse"] is None else f"{row['vs_urnparse']:.1f}x"
        spread = f"{row['cpu_us_median']:.2f} ({row['cpu_us_min']:.2f}-{row['cpu_us_max']:.2f})"
        lines.append(
            f"{row['operation']:<42} {row['items']:>8,} {spread:>20} "
            f"{row['per_cpu_second']:>11,.0f} {ratio:>11}"
        )
    lines.append("URNs/s: URNs per second of CPU time, at the median.")
    if report["go"] is not None:
        lines.append(f"Go anchor: {report['go']}; its CPU time is the Go process's (getrusage).")
    for name, why in report["skipped"].items():
        lines.append(f"{name}: skipped ({why})")
    lines.append(report["rust"])

    lines += ["", f"Accepted (informational; the generator meant {report['intended_valid']:,}):"]
    ours = report["agreement"]["urnkit.is_valid"]
    lines.append(
        f"  urnkit.is_valid {ours['accepted']:>8,}   agrees with the generator's intent on "
        f"{ours['agrees_with_intent']:,} of {report['count']:,}"
    )
    for name, counts in report["agreement"].items():
        if name == "urnkit.is_valid":
            continue
        lines.append(
            f"  {name:<15} {counts['accepted']:>8,}   both accept {counts['both_accept']:,}, "
            f"only {name} {counts['only_peer_accepts']:,}, "
            f"only urnkit {counts['only_urnkit_accepts']:,}"
        )

    lines += ["", "Targets (URNs per CPU second):"]
    for target in report["targets"]:
        measured = target["measured"]
        if measured is None:
            shown = "n/a"
        elif target["required"] < 100:
            shown = f"{measured:.1f}x"
        else:
            shown = f"{measured:,.0f}/s"
        lines.append(f"  {target['target']:<34} {shown:>14}  {target['status']}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--count", type=int, default=DEFAULT_COUNT, help="URNs in the mix")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS, help="timed rounds")
    parser.add_argument("--seed", type=int, default=SEED, help="seed of the generated mix")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")
    args = parser.parse_args(argv)
    if args.count < 1 or args.rounds < 1:
        parser.error("--count and --rounds must be at least 1")
    report = run(args.count, args.rounds, args.seed)
    print(json.dumps(report, indent=2) if args.json else format_report(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
