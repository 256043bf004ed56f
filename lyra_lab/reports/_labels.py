"""Named labellings of probe categories, applied only when reporting.

LoCoMo's category integers mean different things in the dataset's own code
and in later evaluations (Mem0 and those following it), so results keep the
integer and a report picks a scheme by name.
"""

from __future__ import annotations

from typing import Mapping

import pandas as pd

#: How a LoCoMo corpus's categories are named when nobody asked for a scheme: as the release names them.
DEFAULT_LOCOMO_LABELS = "locomo_paper"

LOCOMO_LABELS: dict[str, dict[int, str]] = {
    "locomo_paper": {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"},
    "mem0": {1: "single-hop", 2: "temporal", 3: "multi-hop", 4: "open-domain", 5: "adversarial"},
}


def category_label(category: object, scheme: str | Mapping[int, str] | None) -> str:
    """``"4 single-hop"`` for an integer-like category the scheme knows; otherwise the category as text."""
    text = "" if category is None or (isinstance(category, float) and pd.isna(category)) else str(category)
    if scheme is None or text == "":
        return text
    mapping = _scheme(scheme)
    try:
        number = int(float(text))
    except ValueError:
        return text
    return f"{number} {mapping[number]}" if number in mapping else text


def label_categories(
    df: pd.DataFrame, scheme: str | Mapping[int, str], column: str = "category"
) -> pd.DataFrame:
    """A copy of ``df`` with ``category_label`` added (the integer column is kept as it is)."""
    if column not in df.columns:
        raise KeyError(f"results frame has no {column!r} column")
    _scheme(scheme)  # fail on an unknown scheme even for an empty frame
    out = df.copy()
    out["category_label"] = [category_label(c, scheme) for c in out[column]]
    return out


def _scheme(scheme: str | Mapping[int, str]) -> Mapping[int, str]:
    if isinstance(scheme, str):
        try:
            return LOCOMO_LABELS[scheme]
        except KeyError:
            from lyra_lab._registry import ConfigError

            raise ConfigError(
                f"unknown category label scheme {scheme!r}; known: {', '.join(sorted(LOCOMO_LABELS))}"
            ) from None
    return scheme
