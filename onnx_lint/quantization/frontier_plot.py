"""The accuracy/coverage frontier as an SVG plot: INT8 share of the multiply-accumulates across, worst-output
cosine up, one point per build the ``--min-cosine`` search validated (large) or the masked model predicted
(small, dotted line), the target as a dashed line.

Hand-written SVG (a few dozen elements) rather than a plotting library: the plot is written beside the JSON
report by the CLI and shown inline by the editor's report view, in the theme's colours (``currentColor``).
"""

from __future__ import annotations

import math
from html import escape

from onnx_lint.quantization.report_parts import FallbackSearch

WIDTH, HEIGHT = 480, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 24, 44


def frontier_svg(fallback: FallbackSearch | None) -> str | None:
    """The plot of the search's frontier; None when there is no search to show (fewer than 2 points)."""
    if fallback is None or len(fallback.frontier) < 2:
        return None
    points = [p.to_json() for p in fallback.frontier]
    target = fallback.target
    cosines = [p["cosine"] for p in points] + ([target] if target is not None else [])
    low = min(cosines)
    low = max(-1.0, low - 0.05 * max(1e-6, 1.0 - low))
    span = max(1e-9, 1.0 - low)

    def x(share: float) -> float:
        return LEFT + share * (WIDTH - LEFT - RIGHT)

    def y(cosine: float) -> float:
        return TOP + (1.0 - cosine) / span * (HEIGHT - TOP - BOTTOM)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" '
             f'height="{HEIGHT}" role="img" aria-labelledby="frontier-title" class="frontier" '
             'font-family="sans-serif" font-size="11" fill="currentColor" stroke="currentColor">',
             '<title id="frontier-title">Accuracy against INT8 coverage: each build the accuracy target tried</title>',
             f'<line x1="{LEFT}" y1="{HEIGHT - BOTTOM}" x2="{WIDTH - RIGHT}" y2="{HEIGHT - BOTTOM}"/>',
             f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{HEIGHT - BOTTOM}"/>']
    for share in (0.0, 0.25, 0.5, 0.75, 1.0):
        parts.append(f'<text x="{x(share):.1f}" y="{HEIGHT - BOTTOM + 16}" text-anchor="middle" '
                     f'stroke="none">{share:.0%}</text>')
    digits = max(4, math.ceil(-math.log10(span / 4)) + 1)  # ticks a quarter of the span apart stay distinct
    for k in range(5):
        cosine = low + span * k / 4
        parts.append(f'<text x="{LEFT - 6}" y="{y(cosine) + 4:.1f}" text-anchor="end" stroke="none">'
                     f'{cosine:.{digits}f}</text>')
    parts.append(f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 8}" text-anchor="middle" stroke="none">'
                 'INT8 share of multiply-accumulates</text>')
    parts.append(f'<text x="14" y="{(TOP + HEIGHT - BOTTOM) / 2}" text-anchor="middle" stroke="none" '
                 f'transform="rotate(-90 14 {(TOP + HEIGHT - BOTTOM) / 2})">worst-output cosine</text>')
    if target is not None:
        parts.append(f'<line x1="{LEFT}" y1="{y(target):.1f}" x2="{WIDTH - RIGHT}" y2="{y(target):.1f}" '
                     'stroke-dasharray="5 4" opacity="0.7"/>')
        parts.append(f'<text x="{WIDTH - RIGHT}" y="{y(target) - 4:.1f}" text-anchor="end" stroke="none">'
                     f'target {target:g}</text>')
    ordered = sorted(points, key=lambda p: p["int8_mac_share"])
    for kind, dash in ((True, ' stroke-dasharray="2 3"'), (False, "")):
        line = [p for p in ordered if bool(p.get("predicted")) == kind]
        if len(line) > 1:
            path = " ".join(f"{x(p['int8_mac_share']):.1f},{y(p['cosine']):.1f}" for p in line)
            parts.append(f'<polyline points="{path}" fill="none" opacity="0.4"{dash}/>')
    for p in ordered:
        label = escape(f"{p['build']}: INT8 {p['int8_mac_share']:.1%}, cosine {p['cosine']:.6f}")
        fill = "currentColor" if p["met"] else "none"
        radius, opacity = (2.5, "0.5") if p.get("predicted") else (4, "1")
        parts.append(f'<circle cx="{x(p["int8_mac_share"]):.1f}" cy="{y(p["cosine"]):.1f}" r="{radius}" '
                     f'fill="{fill}" opacity="{opacity}" class="{"met" if p["met"] else "missed"}'
                     f'{" predicted" if p.get("predicted") else ""}"><title>{label}</title></circle>')
    parts.append(f'<text x="{LEFT}" y="{TOP - 8}" stroke="none" opacity="0.8">'
                 'large: builds validated · small: predicted · filled: meets the target</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"
