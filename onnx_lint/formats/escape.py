"""The one escaping every text output shares: names from a model cannot steer a terminal or a log.

A tensor or node name may hold any character. Printed raw, an ESC or OSC sequence rewrites
the user's terminal (the GitHub Actions log renders ANSI too), a newline lets the name start a
line of its own (``::error ...`` read as a workflow command by a CI step that prints a report),
and a bidirectional control reorders what a reader sees (Trojan Source). So C0 and C1 controls
become ``\\xNN``, and bidi controls and the Unicode line/paragraph separators become ``\\uNNNN``.
Every other character, and every healthy name, comes out as it went in.
"""

from __future__ import annotations

# C0, DEL and C1 controls (ESC, BEL, CR, LF, the 8-bit CSI 0x9b among them)
_CONTROLS = [*range(0x20), *range(0x7F, 0xA0)]
# Bidirectional embeddings/overrides (U+202A-U+202E) and isolates (U+2066-U+2069), the marks
# LRM, RLM and ALM, and the Unicode line and paragraph separators.
_INVISIBLE = [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C, 0x2028, 0x2029]

_TABLE = {**{c: f"\\x{c:02x}" for c in _CONTROLS}, **{c: f"\\u{c:04x}" for c in _INVISIBLE}}
_TABLE_BUT_LAYOUT = {c: e for c, e in _TABLE.items() if chr(c) not in "\n\t"}


def safe_text(text: str, keep_layout: bool = False) -> str:
    """``text`` with every control and bidi character escaped (newlines and tabs kept if ``keep_layout``)."""
    return text.translate(_TABLE_BUT_LAYOUT if keep_layout else _TABLE)
