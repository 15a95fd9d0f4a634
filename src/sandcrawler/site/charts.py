"""Charts drawn on the server as SVG: no script, nothing for the browser to build."""

from __future__ import annotations

from collections.abc import Mapping

from markupsafe import Markup, escape

BAR_HEIGHT = 18
GAP = 6
LABEL_WIDTH = 200
BAR_WIDTH = 320
#: colours by status word (success green, errors red, the rest grey-blue)
_GOOD = ("success", "200", "found")
_BAD = ("error", "fail", "timeout", "bad", "corrupt", "500", "503")


def _colour(label: str) -> str:
    low = label.lower()
    if any(low.startswith(g) for g in _GOOD):
        return "#2e7d32"
    if any(b in low for b in _BAD):
        return "#c62828"
    return "#546e7a"


def bar_chart(counts: Mapping[str, int], title: str = "",
              links: Mapping[str, str] | None = None) -> Markup:
    """A horizontal bar chart of ``counts`` (label -> number), largest first; with
    ``links`` (label -> a URL of this site) each bar, its label and number are a link."""
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if not items:
        return Markup("")
    top = max(n for _, n in items) or 1
    height = len(items) * (BAR_HEIGHT + GAP) + GAP
    width = LABEL_WIDTH + BAR_WIDTH + 80
    parts = [f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
             f"<title>{escape(title)}</title>"]
    for i, (label, n) in enumerate(items):
        y = GAP + i * (BAR_HEIGHT + GAP)
        w = max(1, round(BAR_WIDTH * n / top))
        short = label if len(label) <= 28 else label[:27] + "…"
        bar = (f'<text x="{LABEL_WIDTH - 6}" y="{y + 13}" text-anchor="end" font-size="12">'
               f"{escape(short)}</text>"
               f'<rect x="{LABEL_WIDTH}" y="{y}" width="{w}" height="{BAR_HEIGHT}" '
               f'fill="{_colour(label)}"><title>{escape(label)}: {n:,}</title></rect>'
               f'<text x="{LABEL_WIDTH + w + 6}" y="{y + 13}" font-size="12">{n:,}</text>')
        href = (links or {}).get(label)
        if href:
            bar = f'<a href="{escape(href)}" class="bar" data-label="{escape(label)}">{bar}</a>'
        parts.append(bar)
    parts.append("</svg>")
    return Markup("".join(parts))
