"""Render the committed benchmark results (bench/results/*.json) into the documentation.

    .venv/bin/python bench/report.py          # what `make bench-report` runs

Writes docs/benchmarks.md (one table per results file, with its command), the picture
docs/benchmarks-controller.png (lag and CPU against the number of Autoscalers), and every
generated region of README.md and docs/*.md: the lines between `<!-- figures:begin NAME -->`
and `<!-- figures:end -->` (`<!-- figures:begin -->` alone is the README's headline table).
tests/docs/test_figures.py checks that each region equals a fresh render, so a figure quoted
there cannot drift from its results file.
"""

from __future__ import annotations

import math
import re
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import record

ROOT = record.ROOT
DOCS = ROOT / "docs"
PAGE = DOCS / "benchmarks.md"
PICTURE = DOCS / "benchmarks-controller.png"
PAGES = (ROOT / "README.md", *sorted(DOCS.glob("*.md")))
REGION = re.compile(
    r"(?P<begin><!-- figures:begin(?: (?P<name>[a-z0-9-]+))? -->\n)"
    r"(?P<body>.*?)(?P<end><!-- figures:end -->)",
    re.S,
)


@dataclass(frozen=True)
class Results:
    """One results file: its name (the file's stem) and its document."""

    name: str
    doc: dict[str, Any]

    def figure(self, key: str) -> dict[str, Any]:
        for f in self.doc["figures"]:
            if f["key"] == key:
                return dict(f)
        raise KeyError(f"{self.name}.json has no figure {key!r}")

    def value(self, key: str) -> float:
        return float(self.figure(key)["value"])

    def option(self, flag: str, default: str) -> str:
        """A flag's value in the command that produced the file."""
        argv = shlex.split(self.doc["command"])
        return argv[argv.index(flag) + 1] if flag in argv else default


def load_all(directory: Path = record.RESULTS) -> dict[str, Results]:
    """Every results file, by name; bench_controller-1000 before bench_controller-10000."""

    def natural(path: Path) -> tuple[str, int]:
        base, _, size = path.stem.partition("-")
        return base, int(size) if size.isdigit() else -1

    paths = sorted(directory.glob("*.json"), key=natural)
    return {p.stem: Results(p.stem, record.load(p)) for p in paths}


def shown(value: float, unit: str) -> str:
    """A figure as a reader wants it: 3 significant digits, thousands separated, ratios in %."""
    if unit == "x":  # a ratio: a share in %, a multiple as 2.70x
        return f"{value:.2f}x" if value >= 2 else f"{100 * value:.1f}%"
    if unit == "instructions" and abs(value) >= 1e5:
        return f"{value / 1e6:.3f} M"
    if math.isnan(value):
        return "n/a"
    if abs(value) >= 1000 or value == int(value):
        return f"{value:,.0f}"
    return f"{value:#.3g}".rstrip(".")  # 2.00, not 2: the digits measured


SINGULAR = {"queries": "query", "requests": "request", "reviews": "review", "passes": "pass"}


def quoted(results: Results, key: str) -> str:
    """`0.58 ms` for a figure of a results file: how every region quotes one."""
    f = results.figure(key)
    unit = f["unit"]
    if unit == "x":  # shown as a percentage
        return shown(f["value"], unit)
    if unit.startswith("1/"):  # a rate: 64.8/s
        return f"{shown(f['value'], unit)}/{unit[2:]}"
    if unit == "instructions" and f["value"] >= 1e5:
        return f"{shown(f['value'], unit)} instructions"
    if f["value"] == 1 and unit in SINGULAR:
        unit = SINGULAR[unit]
    return f"{shown(f['value'], unit)} {unit}"


# ---- docs/benchmarks.md -------------------------------------------------------------------


def benchmark_section(r: Results) -> list[str]:
    d = r.doc
    load = ", ".join(f"{x:g}" for x in d["load_before"])
    dirty = " (with uncommitted changes)" if d["commit_dirty"] else ""
    out = [
        f"## {r.name}",
        "",
        f"`{d['command']}`",
        "",
        f"Commit {d['commit']}{dirty}, {d['started']}, Python {d['python']}, "
        f"{d['cpu_count']} x {d['cpu_model']}, load average before the run {load}.",
        "",
        "| figure | value | kind | decides |",
        "|---|---|---|---|",
    ]
    for f in d["figures"]:
        decides = f"`{f['decides']}`" if f["decides"] else ""
        out.append(f"| {f['label']} | {quoted(r, f['key'])} | {f['kind']} | {decides} |")
    if d["goals"]:
        out += ["", "| goal | decided by | verdict |", "|---|---|---|"]
        for g in d["goals"]:
            by = f"`{g['figure']}`" if g["figure"] else "not decidable here"
            verdict = {True: "met", False: "**not met**", None: "-"}[g["met"]]
            if g["figure"] and g["met"] is None:
                verdict = "compared build to build"
            out.append(f"| `{g['key']}`: {g['text']} | {by} | {verdict} |")
    for text in d["undecided"]:
        out += ["", f"Undecided here: {text}"]
    for text in d["notes"]:
        out += ["", f"Note: {text}"]
    return [*out, ""]


def benchmarks_page(all_results: dict[str, Results]) -> str:
    out = [
        "# Benchmarks",
        "",
        "<!-- generated by `make bench-report` from bench/results/*.json: do not edit -->",
        "",
        "Every `bench/bench_*.py` prints its figures and writes them to",
        "`bench/results/<bench>.json` (`--json FILE` for another name), with the command, the",
        "commit, the machine and its load before the run. This page is rendered from the",
        "committed files. A figure's kind says what it can decide: a **count** (instructions",
        "under callgrind, API calls, Prometheus queries, objects), a **size** (bytes, RSS) or a",
        "**ratio** against a control measured in the same run decides a goal; **time** and",
        "**rate** (wall-clock and CPU) are context, since on the shared 2-core machine these",
        "ran on CPU time moves by up to 3x with its state.",
        "",
        f"![lag and CPU against the number of Autoscalers]({PICTURE.name})",
        "",
    ]
    for r in all_results.values():
        out += benchmark_section(r)
    return "\n".join(out)


# ---- regions: the README's headline table, docs/scaling.md's tables -----------------------

# the README's table: (results file, figure, what it says), each a deciding figure or context
HEADLINE: tuple[tuple[str, str, str], ...] = (
    ("bench_controller-10000", "lag_p99", "controller, 10,000 Autoscalers: reconcile lag p99"),
    ("bench_controller-10000", "controller_cores", "controller, 10,000 Autoscalers: CPU"),
    ("bench_controller-10000", "machine_busy", "the whole machine's CPUs busy in that run"),
    (
        "bench_controller-10000",
        "api_requests_per_pass",
        "controller, 10,000: API requests per pass, status writes included",
    ),
    ("bench_pass", "instructions_per_pass", "controller: instructions per pass (callgrind)"),
    ("bench_adapter_callgrind", "instructions_adapter", "adapter: instructions per request"),
    ("bench_batching", "external_batched_queries", "adapter: 1,000 External requests, batched"),
    ("bench_adapter", "coalesced_cache_on", "adapter: 100 identical concurrent requests"),
)


def headline(all_results: dict[str, Results]) -> str:
    out = ["| measured | value | command |", "|---|---|---|"]
    for name, key, what in HEADLINE:
        r = all_results[name]
        out.append(f"| {what} | {quoted(r, key)} | `{r.doc['command']}` |")
    out.append("")
    out.append(
        "Every figure, its machine and what it decides: [docs/benchmarks.md](docs/benchmarks.md)."
    )
    return "\n".join(out) + "\n"


# docs/scaling.md's "measured" table: (results file, figure, what it says, how it was measured)
CPU = "each process's /proc CPU time over the steady-state window, divided by its passes"
MEASURED: tuple[tuple[str, str, str, str], ...] = (
    ("bench_controller-1000", "controller_cores", "controller CPU, 1,000 Autoscalers", CPU),
    ("bench_controller-3000", "controller_cores", "controller CPU, 3,000 Autoscalers", CPU),
    ("bench_controller-10000", "controller_cores", "controller CPU, 10,000 Autoscalers", CPU),
    ("bench_controller-10000", "cpu_per_pass_controller", "controller CPU per pass, 10,000", CPU),
    ("bench_controller-10000", "cpu_per_pass_adapter", "adapter CPU per pass, 10,000", CPU),
    ("bench_controller-10000", "cpu_per_pass_sandbox", "API server (sandbox) CPU per pass", CPU),
    ("bench_controller-10000", "cpu_per_pass_prometheus", "Prometheus CPU per pass", CPU),
    (
        "bench_controller-10000",
        "lag_p99",
        "reconcile lag p99, 10,000",
        "how late each pass started against when it was due, over the window",
    ),
    (
        "bench_controller-10000",
        "machine_busy",
        "the machine's busy CPUs during the 10,000 run",
        "/proc/stat over the window: this stack and everything else on the shared VM",
    ),
    (
        "bench_controller-1000",
        "controller_rss",
        "controller RSS, 1,000",
        "/proc RSS at the window's end (the bench driver shares the process)",
    ),
    (
        "bench_controller-10000",
        "controller_rss",
        "controller RSS, 10,000",
        "/proc RSS at the window's end (the bench driver shares the process)",
    ),
    (
        "bench_controller-10000",
        "api_reads_per_pass",
        "API requests per pass, status writes aside",
        "the sandbox's own request counters over the window, divided by the passes",
    ),
    (
        "bench_controller-10000",
        "status_writes_per_pass",
        "status writes per pass",
        "the sandbox's own request counters over the window, divided by the passes",
    ),
    (
        "bench_controller-replicas",
        "pair_share_of_one",
        "2 replicas, 4 shards: replica-0 against one replica on all",
        "each process's /proc CPU over windows of the same length, one run",
    ),
    (
        "bench_controller-replicas",
        "pair_against_alone",
        "replica-0 of the pair against one replica alone on its shards' Autoscalers",
        "each process's /proc CPU over windows of the same length, one run",
    ),
    (
        "bench_density",
        "pair_over_one",
        "the control: work that halves exactly, each of a pair against one",
        "bench_pass's work at a rate and at half of it, in fresh processes",
    ),
    (
        "bench_batching",
        "pods_batched_queries",
        "Prometheus queries, 1,000 Pods requests",
        "Prometheus' own query log, batched (--batch-window 5s)",
    ),
    (
        "bench_batching",
        "pods_unbatched_queries",
        "the same, unbatched",
        "Prometheus' own query log, --batch-window 0",
    ),
    (
        "bench_batching",
        "external_batched_queries",
        "Prometheus queries, 1,000 External",
        "Prometheus' own query log, one rule summing by queue, batched",
    ),
    (
        "bench_adapter",
        "discovery_peak_rss",
        "adapter peak RSS, discovery of 100,000 series",
        "the discovering process's peak RSS (getrusage)",
    ),
    (
        "bench_pod_cache",
        "slim_mib",
        "pod cache, 5,000 slim pods",
        "tracemalloc of the cache in a fresh process, median of rounds",
    ),
    (
        "bench_pass",
        "instructions_per_pass",
        "a pass's own work, HTTP left out",
        "callgrind instructions over 400 steady-state passes",
    ),
    (
        "bench_adapter_callgrind",
        "instructions_adapter",
        "adapter, a wildcard over 100 pods",
        "callgrind instructions per request, one client",
    ),
)


def measured(all_results: dict[str, Results]) -> str:
    out = ["| figure | value | kind | how | command |", "|---|---|---|---|---|"]
    for name, key, what, how in MEASURED:
        r = all_results[name]
        kind = r.figure(key)["kind"]
        out.append(f"| {what} | {quoted(r, key)} | {kind} | {how} | `{r.doc['command']}` |")
    return "\n".join(out) + "\n"


SIZES = (100, 1_000, 10_000, 100_000)
SHARE = 0.6  # cores a replica should carry at most, so losing one leaves the rest under a core


def sizing_table(all_results: dict[str, Results]) -> str:
    """What to run for each size, extrapolated linearly from the 1,000 and 10,000 runs: a
    pass costs the same whatever the number of Autoscalers (nothing is scanned per pass),
    memory grows with the watch caches."""
    small, large = all_results["bench_controller-1000"], all_results["bench_controller-10000"]
    sync = float(large.option("--sync-period", "15"))
    per_pass = large.value("cpu_per_pass_controller") / 1000  # CPU seconds
    adapter = large.value("cpu_per_pass_adapter") / 1000
    calls = large.value("api_requests_per_pass")
    writes = large.value("status_writes_per_pass")
    n0, n1 = 1000, 10_000
    rss0, rss1 = small.value("controller_rss"), large.value("controller_rss")
    slope = (rss1 - rss0) / (n1 - n0)  # MiB per Autoscaler
    out = [
        "| Autoscalers | passes/s | controller CPU | replicas, shards | controller memory "
        "(each replica) | adapter CPU | API requests/s (status writes/s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for n in SIZES:
        rate = n / sync
        cores = rate * per_pass
        if cores <= SHARE:
            replicas, shards = 2, 1  # a leader and a standby
        else:
            replicas = math.ceil(cores / SHARE) + 1
            shards = 2 ** math.ceil(math.log2(2 * replicas))  # a few per replica: small steps
        memory = rss0 + slope * (n - n0)
        out.append(
            f"| {n:,} | {rate:,.0f} | {cores:.2g} cores | {replicas}, {shards} | "
            f"{memory:,.0f} MiB | {rate * adapter:.2g} cores | {rate * calls:,.0f} "
            f"({rate * writes:,.0f}) |"
        )
    return "\n".join(out) + "\n"


RENDERERS: dict[str | None, Callable[[dict[str, Results]], str]] = {
    None: headline,
    "measured": measured,
    "sizing": sizing_table,
}


def render_regions(text: str, all_results: dict[str, Results]) -> str:
    """`text` with every generated region rendered afresh."""

    def fill(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in RENDERERS:
            raise KeyError(f"unknown figures region {name!r}")
        return m.group("begin") + RENDERERS[name](all_results) + m.group("end")

    return REGION.sub(fill, text)


def stale(page: Path, all_results: dict[str, Results]) -> list[str]:
    """What a fresh render would change on `page`: its regions (and the whole of
    docs/benchmarks.md), as the first differing line of each."""
    text = page.read_text()
    fresh = benchmarks_page(all_results) if page == PAGE else render_regions(text, all_results)
    if fresh == text:
        return []
    for n, (old, new) in enumerate(zip(text.splitlines(), fresh.splitlines(), strict=False)):
        if old != new:
            return [f"{page.name}:{n + 1}: {old!r} is {new!r} in a fresh render"]
    return [f"{page.name}: length differs from a fresh render"]


# a measured quantity: a number and a unit of time, memory, CPU or work
QUANTITY = re.compile(
    r"\b\d[\d,.]*\s?(?:ms|us|µs|MiB|GiB|KiB|MB|GB|cores?\b|of a core|M instructions|"
    r"instructions per|requests per pass|passes/s|req/s|requests/s|per CPU-second)",
)
FENCE = re.compile(r"```.*?```", re.S)


def unsourced(text: str) -> list[str]:
    """Measured-looking quantities outside generated regions and code blocks: a page that
    quotes figures only through regions has none."""
    bare = FENCE.sub("", REGION.sub("", text))
    return [m.group(0) for m in QUANTITY.finditer(bare)]


# ---- the picture ----------------------------------------------------------------------------


def controller_runs(all_results: dict[str, Results]) -> list[Results]:
    """The bench_controller-N files, by N."""
    runs = [r for name, r in all_results.items() if re.fullmatch(r"bench_controller-\d+", name)]
    return sorted(runs, key=lambda r: int(r.option("--autoscalers", "5000")))


def picture(all_results: dict[str, Results], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = controller_runs(all_results)
    n = [int(r.option("--autoscalers", "5000")) for r in runs]
    fig, (lag, cpu) = plt.subplots(1, 2, figsize=(9, 3.4))
    lag.plot(n, [r.value("lag_p50") for r in runs], "o-", label="p50")
    lag.plot(n, [r.value("lag_p99") for r in runs], "o-", label="p99")
    lag.set(xlabel="Autoscalers", ylabel="reconcile lag (ms)", title="Reconcile lag")
    lag.legend()
    for process in ("controller", "sandbox", "adapter", "prometheus"):
        cores = [r.value(f"cpu_per_pass_{process}") * r.value("passes_per_s") / 1000 for r in runs]
        cpu.plot(n, cores, "o-", label=process)
    busy = [r.value("machine_busy") for r in runs]
    cpu.plot(n, busy, "k--", label="whole machine")
    cpu.set(xlabel="Autoscalers", ylabel="cores", title="CPU by process")
    cpu.legend()
    lag.set_yscale("log")  # from tens of ms to seconds when the machine runs out of CPU
    for ax in (lag, cpu):
        ax.set_xscale("log")
        ax.set_xticks(n, [f"{x:,}" for x in n])
        ax.minorticks_off()
        ax.grid(alpha=0.3)
    fig.suptitle("bench_controller.py on the shared 2-core VM (CPU and lag are context)", size=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def main() -> None:
    all_results = load_all()
    PAGE.write_text(benchmarks_page(all_results))
    for page in PAGES:
        text = page.read_text()
        fresh = render_regions(text, all_results)
        if fresh != text:
            page.write_text(fresh)
            print(f"rendered the figures of {page.relative_to(ROOT)}")
    picture(all_results, PICTURE)
    print(f"wrote {PAGE.relative_to(ROOT)} and {PICTURE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
