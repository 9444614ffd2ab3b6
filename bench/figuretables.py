"""The figure tables `bench/report.py` renders into the README and docs/scaling.md: which
figures each quotes, and the sizing arithmetic on them."""

from __future__ import annotations

import math

from bench.resultsfiles import Results, quoted, shown

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


# ---- docs/predictive.md's region: bench_predictive's replays and instruction counts -------

TRACES = ("seasonal", "flat", "taylor")
COST = ("reactive", "predictive", "raised", "refit", "refit-incremental")
# spec.predictive.tolerance rows: (the value shown, the replay's mode; "predictive" is the default)
SWEPT = (("0", "tolerance_0"), ("0.05 (default)", "predictive"), ("0.1", "tolerance_0_1"))


def _tolerance_sweep(r: Results, keys: set[str]) -> list[str]:
    """The trade of spec.predictive.tolerance: cut, extra replica-seconds and scale events per
    trace (the default's row is the replay the goals are decided on)."""
    head = " | ".join(f"`{t}`: cut, extra, scale events" for t in TRACES)
    out = [f"| `tolerance` | {head} |", "|---|" + "---|" * len(TRACES)]
    out.append(
        "| without prediction | "
        + " | ".join(f"-, -, {shown(r.value(f'{t}_reactive_scale_events'), '')}" for t in TRACES)
        + " |"
    )
    for shown_as, mode in SWEPT:
        cells = []
        for t in TRACES:
            cut, extra = (
                (f"{t}_short_cut", f"{t}_extra_replica_seconds")
                if mode == "predictive"
                else (f"{t}_{mode}_short_cut", f"{t}_{mode}_extra_replica_seconds")
            )
            if cut not in keys:  # a results file from before the sweep
                return []
            events = shown(r.value(f"{t}_{mode}_scale_events"), "")
            cells.append(f"{quoted(r, cut)}, {quoted(r, extra)}, {events}")
        out.append(f"| {shown_as} | " + " | ".join(cells) + " |")
    return out


def predictive(all_results: dict[str, Results]) -> str:
    r = all_results["bench_predictive"]
    keys = {f["key"] for f in r.doc["figures"]}

    def pair(trace: str, what: str) -> str:  # the unit is in the column's heading
        without, with_ = (r.value(f"{trace}_{mode}_{what}") for mode in ("reactive", "predictive"))
        return f"{shown(without, '')} -> {shown(with_, '')}"

    out = [
        "| trace | pod-seconds short, without -> with | cut | replica-seconds, without -> with "
        "| extra | scale events, without -> with |",
        "|---|---|---|---|---|---|",
    ]
    for t in TRACES:
        out.append(
            f"| `{t}` | {pair(t, 'short')} | {quoted(r, f'{t}_short_cut')} | "
            f"{pair(t, 'replica_seconds')} | {quoted(r, f'{t}_extra_replica_seconds')} | "
            f"{pair(t, 'scale_events')} |"
        )
    out += ["", *_tolerance_sweep(r, keys)]
    out += ["", "| goal (issue 37) | verdict |", "|---|---|"]
    for g in r.doc["goals"]:
        verdict = {True: "met", False: "**not met**", None: "undecided"}[g["met"]]
        out.append(f"| {g['text']} | {verdict} |")
    counted = [k for k in COST if f"instructions_{k}" in keys]
    if counted:  # a run without --callgrind has none
        out += ["", "| decision core, under callgrind | instructions (M: millions) |", "|---|---|"]
        for k in counted:
            f = r.figure(f"instructions_{k}")
            what = f["label"].removeprefix("decision core: ")
            out.append(f"| {what} | {shown(f['value'], f['unit'])} |")
    out += [
        "",
        f"`{r.doc['command']}`, commit {r.doc['commit']}; every figure with its kind: "
        "[benchmarks.md](benchmarks.md#bench_predictive).",
    ]
    return "\n".join(out) + "\n"


# ---- docs/predictive.md's region: bench_predictive_scale, with bench_predictive's refit cost --


def predictive_scale(all_results: dict[str, Results]) -> str:
    r = all_results["bench_predictive_scale"]

    def v(key: str) -> str:
        return shown(r.value(key), "")

    out = [
        "| the history cache, 10,000 histories first asked for in the same minute | counted |",
        "|---|---|",
        f"| range queries per history per 5 minutes, after the first read | "
        f"{quoted(r, 'reads_per_history_per_refresh')} |",
        f"| refits per history per 30 minutes, after the first fit | "
        f"{quoted(r, 'refits_per_history_per_refit')} |",
        f"| reads in the busiest minute after the first (fair share 2,000); every history at one "
        f"phase | {v('busiest_minute_reads')}; {v('busiest_minute_reads_same_phase')} |",
        f"| refits in the busiest minute after the first (fair share 333); every history at one "
        f"phase | {v('busiest_minute_refits')}; {v('busiest_minute_refits_same_phase')} |",
        f"| reads and fits in the first minute (a restart) | {v('first_minute_reads')}; "
        f"{v('first_minute_fits')} |",
        f"| bytes held per 14-day history, with its model and memo; as a list of floats | "
        f"{v('bytes_per_history')}; {v('bytes_per_history_as_list')} |",
    ]
    cost = all_results.get("bench_predictive")
    keys = {f["key"] for f in cost.doc["figures"]} if cost is not None else set()
    for key, what in (
        ("instructions_refit-incremental", "each from the last one's memo"),
        ("instructions_refit", "each from scratch"),
    ):
        if cost is not None and key in keys:
            per_second = 10_000 * cost.value(key) / 1800
            out.append(
                f"| 10,000 histories refitted once each 30 minutes, {what} (bench_predictive's "
                f"count per refit) | {per_second / 1e6:,.0f} M instructions a second |"
            )
    out += [
        "",
        f"`{r.doc['command']}`, commit {r.doc['commit']}; every figure with its kind: "
        "[benchmarks.md](benchmarks.md#bench_predictive_scale).",
    ]
    return "\n".join(out) + "\n"
