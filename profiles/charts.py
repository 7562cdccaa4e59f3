"""Server-side SVG charts: no JavaScript, no CDN."""

from __future__ import annotations

from collections.abc import Sequence

SPARK_WIDTH = 160
SPARK_HEIGHT = 36
SPARK_PAD = 3


def sparkline(
    points: Sequence[tuple[float, float]],
    *,
    width: int = SPARK_WIDTH,
    height: int = SPARK_HEIGHT,
    pad: int = SPARK_PAD,
) -> str:
    """SVG ``polyline`` points for (x, value in 0..1) pairs; "" for fewer than two points.

    x is scaled to the width from the first point to the last; value 1 is the top.
    """
    if len(points) < 2:
        return ""
    x0, x1 = points[0][0], points[-1][0]
    span = (x1 - x0) or 1
    inner_w, inner_h = width - 2 * pad, height - 2 * pad
    coords = []
    for x, value in points:
        value = min(1.0, max(0.0, float(value)))
        px = pad + (x - x0) / span * inner_w
        py = pad + (1.0 - value) * inner_h
        coords.append(f"{px:.1f},{py:.1f}")
    return " ".join(coords)
