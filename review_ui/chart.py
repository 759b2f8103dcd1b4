"""The status chart: fourteen days of spend (bars, against the daily ceiling line) and
operations (dots), rendered on the server as SVG.

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

WIDTH, HEIGHT, PAD = 560, 180, 28


def render(days: Sequence[DayPoint], ceiling_usd: Decimal) -> SafeString:
    n = max(len(days), 1)
    slot = (WIDTH - 2 * PAD) / n
    top_usd = max([ceiling_usd, *(d.spend_usd for d in days)]) or Decimal("1")
    top_ops = max([1, *(d.operations for d in days)])
    plot = HEIGHT - 2 * PAD

    def y_usd(value: Decimal) -> float:
        return HEIGHT - PAD - float(value / top_usd) * plot

    def y_ops(value: int) -> float:
        return HEIGHT - PAD - value / top_ops * plot

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-labelledby="chart-title"><title id="chart-title">Spend and operations, last {len(days)} days</title>',
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" stroke="#888"/>',
        f'<line class="ceiling" x1="{PAD}" y1="{y_usd(ceiling_usd):.1f}" x2="{WIDTH - PAD}" y2="{y_usd(ceiling_usd):.1f}" '
        f'stroke="#b00" stroke-dasharray="4 3"/>',
        f'<text x="{WIDTH - PAD}" y="{y_usd(ceiling_usd) - 4:.1f}" text-anchor="end" font-size="10" fill="#b00">'
        f'daily ceiling ${usd(ceiling_usd)}</text>',
    ]
    for i, day in enumerate(days):
        x = PAD + i * slot
        y = y_usd(day.spend_usd)
        label = f"{day.day.isoformat()}: ${usd(day.spend_usd)} spent, {day.operations} operations"
        parts.append(f'<g class="day" data-day="{day.day.isoformat()}"><title>{escape(label)}</title>'
                     f'<rect class="spend" x="{x + 2:.1f}" y="{y:.1f}" width="{slot - 4:.1f}" '
                     f'height="{HEIGHT - PAD - y:.1f}" fill="#4a7fb5"/>'
                     f'<circle class="ops" cx="{x + slot / 2:.1f}" cy="{y_ops(day.operations):.1f}" r="3" fill="#e08a00"/>'
                     f'</g>')
        if i in (0, len(days) - 1):
            parts.append(f'<text x="{x + slot / 2:.1f}" y="{HEIGHT - 8}" text-anchor="middle" font-size="10">'
                         f'{day.day.strftime("%m-%d")}</text>')
    parts.append("</svg>")
    return mark_safe("".join(parts))
