"""The status chart: fourteen days of operations (dots, right axis: a count) and, for a
provider that may charge, spend (bars, left axis: US dollars, against the daily ceiling
line), rendered on the server as SVG with both axes labelled. The legend is HTML beside it
(``legend``), so it reads the same to a screen reader and at any width.

Only numbers and ISO dates enter the markup, and every attribute is a presentation
attribute (no ``style=``), so the page keeps its strict Content-Security-Policy and no
script is needed to draw it.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Sequence

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from review_ui.status import DayPoint, usd

WIDTH, HEIGHT = 360, 210
LEFT, RIGHT, TOP, BOTTOM = 50, 34, 18, 30  # room for the axes' labels
SPEND, OPS, CEILING, AXIS, TEXT = "#2f6690", "#b35900", "#a61b1b", "#6b7280", "#1f2328"


def _ticks(top: int) -> list[int]:
    """Whole-number ticks for a count axis: 0, the top, and a middle when it is whole."""
    return sorted({0, top // 2, top}) if top >= 2 else [0, top]


def render(days: Sequence[DayPoint], ceiling_usd: Decimal, *, paid: bool = True) -> SafeString:
    n = max(len(days), 1)
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / n
    base = TOP + plot_h
    top_usd = max([ceiling_usd, *(d.spend_usd for d in days)]) or Decimal("1")
    top_ops = max([1, *(d.operations for d in days)])

    def y_usd(value: Decimal) -> float:
        return base - float(value / top_usd) * plot_h

    def y_ops(value: int) -> float:
        return base - value / top_ops * plot_h

    what = "Spend and operations" if paid else "Operations"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="chart-title"><title id="chart-title">{what} per day, last {len(days)} days</title>',
        f'<line class="x-axis" x1="{LEFT}" y1="{base}" x2="{WIDTH - RIGHT}" y2="{base}" stroke="{AXIS}"/>',
        # The operations axis, on the right.
        f'<g class="axis ops-axis"><line x1="{WIDTH - RIGHT}" y1="{TOP}" x2="{WIDTH - RIGHT}" y2="{base}" stroke="{OPS}"/>',
    ]
    for tick in _ticks(top_ops):
        parts.append(f'<text x="{WIDTH - RIGHT + 6}" y="{y_ops(tick) + 4:.1f}" font-size="12" fill="{TEXT}">{tick}</text>')
    parts.append(f'<text x="{WIDTH - 4}" y="{TOP - 3}" text-anchor="end" font-size="12" fill="{TEXT}">ops</text></g>')
    if paid:
        parts.append(f'<g class="axis spend-axis"><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{base}" stroke="{SPEND}"/>')
        for value in (Decimal("0"), top_usd / 2, top_usd):
            parts.append(f'<text x="{LEFT - 5}" y="{y_usd(value) + 4:.1f}" text-anchor="end" font-size="12" '
                         f'fill="{TEXT}">${usd(value.quantize(Decimal("0.01")))}</text>')
        parts.append(f'<text x="4" y="{TOP - 3}" font-size="12" fill="{TEXT}">USD</text></g>')
        parts.append(f'<line class="ceiling" x1="{LEFT}" y1="{y_usd(ceiling_usd):.1f}" x2="{WIDTH - RIGHT}" '
                     f'y2="{y_usd(ceiling_usd):.1f}" stroke="{CEILING}" stroke-dasharray="4 3"/>')
    for i, day in enumerate(days):
        x = LEFT + i * slot
        label = f"{day.day.isoformat()}: {day.operations} operations"
        if paid:
            label += f", ${usd(day.spend_usd)} spent"
        bar = ""
        if paid:
            y = y_usd(day.spend_usd)
            bar = (f'<rect class="spend" x="{x + 2:.1f}" y="{y:.1f}" width="{slot - 4:.1f}" '
                   f'height="{base - y:.1f}" fill="{SPEND}"/>')
        parts.append(f'<g class="day" data-day="{day.day.isoformat()}"><title>{escape(label)}</title>{bar}'
                     f'<circle class="ops" cx="{x + slot / 2:.1f}" cy="{y_ops(day.operations):.1f}" r="4" fill="{OPS}"/>'
                     f'</g>')
        if i in (0, len(days) // 2, len(days) - 1):
            parts.append(f'<text x="{x + slot / 2:.1f}" y="{HEIGHT - 10}" text-anchor="middle" font-size="12" '
                         f'fill="{TEXT}">{day.day.strftime("%b %d")}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))


def legend(ceiling_usd: Decimal, *, paid: bool = True) -> tuple[tuple[str, str], ...]:
    """(swatch class, words) per series drawn, for the HTML legend under the chart."""
    items = [("ops", "operations recorded that day (right axis)")]
    if paid:
        items = [("spend", "spend that day in US dollars (left axis)"), *items,
                 ("ceiling", f"daily spend ceiling, ${usd(ceiling_usd)}")]
    return tuple(items)
