"""The landing page and the sizing guide stay short enough to read (issue 36): a page that grows
past its budget has started collecting history, which belongs in git and bench/results/."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("page", "budget"),
    [
        pytest.param("README.md", 150, id="readme"),
        pytest.param("docs/scaling.md", 300, id="sizing-guide"),
    ],
)
def test_the_page_fits_its_budget(page: str, budget: int) -> None:
    lines = (ROOT / page).read_text().count("\n")
    assert lines <= budget, f"{page} has {lines} lines, its budget is {budget}"
