"""Every figure the README and docs/ quote comes from a committed results file.

The figures live in bench/results/*.json; `make bench-report` (bench/report.py) renders them
into docs/benchmarks.md and into the generated regions of the other pages. A region edited by
hand, or a results file committed without a fresh render, differs from a fresh render here;
docs/scaling.md (the sizing guide), docs/predictive.md and the README may quote a measured
quantity only inside a region.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import figuretables, record, report, resultsfiles

ROOT = Path(__file__).parents[2]
RESULTS = resultsfiles.load_all()
# pages that quote measured figures only through regions (docs/benchmarks.md is generated whole)
STRICT = [ROOT / "docs" / "scaling.md", ROOT / "docs" / "predictive.md", ROOT / "README.md"]
REQUIRED = {
    "bench",
    "command",
    "commit",
    "commit_dirty",
    "python",
    "cpu_model",
    "cpu_count",
    "started",
    "load_before",
    "figures",
    "goals",
    "undecided",
    "notes",
}


@pytest.mark.parametrize("page", report.PAGES, ids=lambda p: p.name)
def test_the_page_equals_a_fresh_render(page: Path) -> None:
    assert report.stale(page, RESULTS) == [], "run `make bench-report` and commit"


def test_the_readme_has_the_headline_region() -> None:
    text = (ROOT / "README.md").read_text()
    assert [m.group("name") for m in report.REGION.finditer(text)] == [None]


@pytest.mark.parametrize("page", STRICT, ids=lambda p: p.name)
def test_the_page_quotes_measured_figures_only_through_regions(page: Path) -> None:
    assert report.unsourced(page.read_text()) == []


@pytest.mark.parametrize("bench", sorted((ROOT / "bench").glob("bench_*.py")), ids=lambda p: p.stem)
def test_every_benchmark_has_committed_results(bench: Path) -> None:
    names = [n for n in RESULTS if re.fullmatch(rf"{bench.stem}(-[\w-]+)?", n)]
    assert names, f"no bench/results/{bench.stem}.json: run {bench.name} once and commit it"


@pytest.mark.parametrize("name", sorted(RESULTS), ids=str)
def test_a_results_file_says_what_decides_each_goal(name: str) -> None:
    doc = RESULTS[name].doc
    assert doc.keys() >= REQUIRED, REQUIRED - doc.keys()
    assert doc["command"].startswith(".venv/bin/python bench/bench_")
    keys = {f["key"] for f in doc["figures"]}
    assert doc["figures"], "a results file without figures"
    for f in doc["figures"]:
        assert f["decides"] is None or f["kind"] in record.DECIDING, f
    for g in doc["goals"]:
        assert g["figure"] is None or g["figure"] in keys, g
        if g["figure"] is None:  # undecided: the file says why, once
            assert doc["undecided"], f"goal {g['key']} is undecided and the file says not why"


# ---- the checks themselves fail when they should ------------------------------------------

PAGE = """intro
<!-- figures:begin -->
{body}<!-- figures:end -->
after
"""


@pytest.mark.parametrize(
    ("edit", "stale"),
    [
        pytest.param(lambda body: body, False, id="fresh"),
        pytest.param(lambda body: body.replace("|", "| 1", 3), True, id="a-cell-edited"),
        pytest.param(lambda body: body + "| a row | 9 |\n", True, id="a-row-added"),
    ],
)
def test_a_region_edited_by_hand_is_stale(tmp_path: Path, edit, stale: bool) -> None:
    page = tmp_path / "README.md"
    page.write_text(PAGE.format(body=edit(figuretables.headline(RESULTS))))
    assert bool(report.stale(page, RESULTS)) is stale


def test_a_changed_results_file_makes_the_region_stale(tmp_path: Path) -> None:
    page = tmp_path / "README.md"
    page.write_text(PAGE.format(body=figuretables.headline(RESULTS)))
    name, key, _ = figuretables.HEADLINE[0]
    doc = dict(RESULTS[name].doc)
    doc["figures"] = [
        {**f, "value": f["value"] * 2 + 1} if f["key"] == key else f for f in doc["figures"]
    ]
    changed = {**RESULTS, name: resultsfiles.Results(name, doc)}
    assert report.stale(page, changed) != []


@pytest.mark.parametrize(
    ("text", "found"),
    [
        pytest.param("a pass costs 0.58 ms of CPU", ["0.58 ms"], id="ms-in-prose"),
        pytest.param("it used 0.37 of a core", ["0.37 of a core"], id="of-a-core"),
        pytest.param("about 1.27 M instructions per pass", ["1.27 M instructions"], id="count"),
        pytest.param("RSS 398 MiB at 10,000", ["398 MiB"], id="memory"),
        pytest.param("| 204105 -> 132745 pod-seconds |", ["132745 pod-seconds"], id="replay-count"),
        pytest.param("a 15 s sync period, --history-refresh 60s", [], id="settings-pass"),
        pytest.param("```\n0.58 ms\n```\n", [], id="code-block-passes"),
        pytest.param(PAGE.format(body="| 0.58 ms |\n"), [], id="inside-a-region-passes"),
    ],
)
def test_unsourced_finds_measured_quantities_outside_regions(text: str, found: list[str]) -> None:
    assert report.unsourced(text) == found
