"""Command-line helpers the benchmark scripts share."""

from __future__ import annotations

UNITS = {"k": 1_000, "m": 1_000_000}


def int_list(text: str) -> tuple[int, ...]:
    """``"500,20k,1m"`` -> ``(500, 20000, 1000000)``: for argparse's ``type=``."""
    values = []
    for item in text.split(","):
        item = item.strip().lower()
        if not item:
            continue
        scale = UNITS.get(item[-1:], 1)
        values.append(int(float(item[:-1] if scale > 1 else item) * scale))
    return tuple(values)
