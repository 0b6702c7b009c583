"""Writes ``src/urnkit/resolver/static/favicon.ico``: the shapes of ``static/icon.svg`` (a
rounded square, a ring, a dot) drawn at 32 by 32 pixels and stored as a PNG inside an ICO file
(an ICO may hold PNG images since Windows Vista), with the standard library alone.

Run ``python scripts/make_favicon.py`` after changing the icon.
"""

import struct
import zlib
from pathlib import Path

SIZE = 32
BACKGROUND, FOREGROUND = (0x1D, 0x4F, 0x76), (0xFF, 0xFF, 0xFF)
TARGET = Path(__file__).parent.parent / "src/urnkit/resolver/static/favicon.ico"


def pixel(x: float, y: float) -> tuple[int, int, int, int]:
    """The colour of icon.svg at the centre of pixel (x, y): transparent outside the rounded
    square (corner radius 6), white on the ring (radius 9, width 3) and the dot (radius 3)."""
    corner = max(abs(x - 16) - 10, 0) ** 2 + max(abs(y - 16) - 10, 0) ** 2
    if corner > 36:
        return (0, 0, 0, 0)
    distance = ((x - 16) ** 2 + (y - 16) ** 2) ** 0.5
    if abs(distance - 9) <= 1.5 or distance <= 3:
        return (*FOREGROUND, 255)
    return (*BACKGROUND, 255)


def png() -> bytes:
    rows = b"".join(
        b"\0" + b"".join(bytes(pixel(x + 0.5, y + 0.5)) for x in range(SIZE)) for y in range(SIZE)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows, 9))
        + chunk(b"IEND", b"")
    )


def ico(image: bytes) -> bytes:
    """One image in an ICO file: its header, one directory entry, the image."""
    entry = struct.pack("<BBBBHHII", SIZE, SIZE, 0, 0, 1, 32, len(image), 6 + 16)
    return struct.pack("<HHH", 0, 1, 1) + entry + image


if __name__ == "__main__":
    TARGET.write_bytes(ico(png()))
