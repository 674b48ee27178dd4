"""Draw the VS Code extension's icon: vscode-extension/media/icon.png (128x128 RGBA), with code.

    python scripts/make_icon.py           # rewrite the icon
    python scripts/make_icon.py --check   # exit 1 if the committed icon differs (the tests run this)

A small graph (three nodes, two edges) on a rounded square, the last node ringed in the
colour of a fixed finding. No imaging library: shapes are tested per pixel with 4x4
supersampling and the PNG is written with zlib, so the bytes are the same everywhere.
"""

from __future__ import annotations

import math
import struct
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICON = ROOT / "vscode-extension" / "media" / "icon.png"
SIZE, SAMPLES = 128, 4

BACKGROUND = (34, 78, 150)
EDGE = (200, 220, 250)
NODE = (255, 255, 255)
RING = (76, 200, 120)

NODES = [(36.0, 38.0), (36.0, 92.0), (92.0, 65.0)]
EDGES = [(0, 2), (1, 2)]


def _in_rounded_square(x: float, y: float, radius: float = 26.0, margin: float = 4.0) -> bool:
    lo, hi = margin + radius, SIZE - margin - radius
    dx = max(lo - x, 0.0, x - hi)
    dy = max(lo - y, 0.0, y - hi)
    return dx * dx + dy * dy <= radius * radius


def _near_segment(x: float, y: float, a: tuple[float, float], b: tuple[float, float], width: float) -> bool:
    (ax, ay), (bx, by) = a, b
    t = max(0.0, min(1.0, ((x - ax) * (bx - ax) + (y - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2)))
    return math.hypot(x - (ax + t * (bx - ax)), y - (ay + t * (by - ay))) <= width / 2


def _colour(x: float, y: float) -> tuple[int, int, int, int]:
    """The colour of one sample point (alpha 0 outside the rounded square)."""
    if not _in_rounded_square(x, y):
        return (0, 0, 0, 0)
    last = NODES[-1]
    if math.hypot(x - last[0], y - last[1]) <= 11.0:
        return (*NODE, 255)
    if math.hypot(x - last[0], y - last[1]) <= 17.0:
        return (*RING, 255)
    if any(math.hypot(x - nx, y - ny) <= 11.0 for nx, ny in NODES[:-1]):
        return (*NODE, 255)
    if any(_near_segment(x, y, NODES[i], NODES[j], 6.0) for i, j in EDGES):
        return (*EDGE, 255)
    return (*BACKGROUND, 255)


def pixels() -> bytes:
    rows = []
    step = 1.0 / SAMPLES
    for py in range(SIZE):
        row = bytearray([0])  # PNG filter type 0 for each scanline
        for px in range(SIZE):
            acc = [0, 0, 0, 0]
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    r, g, b, a = _colour(px + (sx + 0.5) * step, py + (sy + 0.5) * step)
                    acc[0] += r * a
                    acc[1] += g * a
                    acc[2] += b * a
                    acc[3] += a
            alpha = acc[3]
            if alpha:
                row += bytes((acc[0] // alpha, acc[1] // alpha, acc[2] // alpha, alpha // SAMPLES**2))
            else:
                row += bytes(4)
        rows.append(bytes(row))
    return b"".join(rows)


def png() -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(pixels(), 9))
            + chunk(b"IEND", b""))


def main(argv: list[str]) -> int:
    data = png()
    if "--check" in argv:
        if not ICON.exists() or ICON.read_bytes() != data:
            print(f"out of date: {ICON.relative_to(ROOT)}; run python scripts/make_icon.py")
            return 1
        return 0
    ICON.write_bytes(data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
