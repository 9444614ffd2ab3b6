"""`make image`: build times and image size, in a private containers storage; prints numbers.

Each round copies the tracked tree to a temporary directory and builds there with an empty
containers storage of its own (CONTAINERS_STORAGE_CONF), so nothing cached elsewhere on the
machine helps it and nothing of it stays:

1. cold, base absent: the local Debian base (mmdebstrap) and the image;
2. cold, base present: every image but the base removed, the image again;
3. warm, no change: the same build again;
4. a one-line source change (a comment appended to adapter/__init__.py): which layers are new.

Times are wall seconds of `buildah bud` alone (as scripts/image-build.sh prints them; the base
separately), with the 1-minute load average before each step: the machine is shared, so the
times are context, and the layer sizes and image sizes, which do not depend on load, are the
figures. Needs buildah, mmdebstrap and podman (`make image` installs them) and root.

    .venv/bin/python bench/bench_image.py [--rounds 2] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import record  # noqa: E402

IMAGE = "localhost/promscaler:bench"
MB = 1e6


def sh(*args: str, env: dict[str, str], cwd: Path) -> str:
    proc = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-4000:]}")
    return proc.stdout


def copy_tree(into: Path) -> None:
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        src = ROOT / name.decode()
        if src.is_file():
            dst = into / name.decode()
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def build(tree: Path, env: dict[str, str]) -> dict[str, Any]:
    load = os.getloadavg()[0]
    start = time.monotonic()
    out = sh("bash", "scripts/image-build.sh", env=env, cwd=tree)
    total = time.monotonic() - start
    bud = re.search(r"^built \S+ in ([\d.]+) s$", out, re.M)
    assert bud is not None, out
    report = json.loads((tree / "out/image/localhost-promscaler-bench.report.json").read_text())
    return {
        "load1_before": round(load, 2),
        "build_seconds": float(bud[1]),
        "make_image_seconds": round(total, 1),  # with the size report and the SBOM
        "image_bytes": report["image_bytes"],
        "base_bytes": report["base_bytes"],
        "added_bytes": report["added_bytes"],
        "layers": report["layers"],
        "parts": report["parts"],
    }


def layer_sizes(env: dict[str, str], tree: Path) -> dict[str, int]:
    """Layer digest (content-addressed) -> bytes, oldest first."""
    podman = ["podman", "--storage-driver", "overlay"]
    history = json.loads(sh(*podman, "history", "--format", "json", IMAGE, env=env, cwd=tree))
    sizes = [int(h["size"]) for h in reversed(history) if int(h["size"]) > 0]
    fmt = "{{json .RootFS.Layers}}"
    digests = json.loads(sh(*podman, "image", "inspect", "--format", fmt, IMAGE, env=env, cwd=tree))
    assert len(digests) == len(sizes), (digests, sizes)
    return dict(zip(digests, sizes, strict=True))


def one_round(py: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-image-") as tmp:
        tree, store = Path(tmp, "tree"), Path(tmp, "storage")
        copy_tree(tree)
        conf = Path(tmp, "storage.conf")
        conf.write_text(
            f'[storage]\ndriver = "overlay"\ngraphroot = "{store}/root"\nrunroot = "{store}/run"\n'
        )
        env = {**os.environ, "CONTAINERS_STORAGE_CONF": str(conf), "IMAGE": IMAGE, "PY": py}
        result: dict[str, Any] = {}
        load = os.getloadavg()[0]
        start = time.monotonic()
        base = sh("bash", "scripts/image-base.sh", env=env, cwd=tree).strip().splitlines()[-1]
        result["base_build"] = {
            "load1_before": round(load, 2),
            "seconds": round(time.monotonic() - start, 1),
        }
        result["cold_base_absent"] = build(tree, env)
        result["cold_base_absent"]["build_seconds_with_base"] = round(
            result["cold_base_absent"]["build_seconds"] + result["base_build"]["seconds"], 1
        )
        names = sh("buildah", "images", "--format", "{{.Name}}:{{.Tag}}", env=env, cwd=tree)
        for name in names.split():
            if name != base and "<none>" not in name:
                sh("buildah", "rmi", "--force", name, env=env, cwd=tree)
        sh("buildah", "rmi", "--prune", env=env, cwd=tree)  # the cached intermediate layers
        result["cold_base_present"] = build(tree, env)
        result["warm_no_change"] = build(tree, env)
        before = layer_sizes(env, tree)
        init = tree / "adapter/__init__.py"
        init.write_text(init.read_text() + "# a one-line change\n")
        changed = build(tree, env)
        new = {i: size for i, size in layer_sizes(env, tree).items() if i not in before}
        changed["new_layers"] = len(new)
        changed["new_layer_bytes"] = sum(new.values())
        result["one_line_change"] = changed
        return result


def summary(rounds: list[dict[str, Any]]) -> None:
    for i, r in enumerate(rounds, 1):
        base = r["base_build"]
        print(f"round {i}: base {base['seconds']} s (load {base['load1_before']})")
        for step in ("cold_base_absent", "cold_base_present", "warm_no_change", "one_line_change"):
            s = r[step]
            line = f"  {step:18} build {s['build_seconds']:6.1f} s  load {s['load1_before']:5.2f}"
            line += f"  image {s['image_bytes'] / MB:.0f} MB"
            line += f" (base + {s['added_bytes'] / MB:.0f} MB)"
            if "new_layers" in s:
                line += f"  new layers {s['new_layers']}: {s['new_layer_bytes'] / MB:.1f} MB"
            print(line)


def record_rounds(run: record.Run, rounds: list[dict[str, Any]]) -> None:
    """Sizes decide (they do not move with the machine's load); build times are context."""
    last = rounds[-1]
    run.figure("image_mb", "image size", last["cold_base_present"]["image_bytes"] / MB, "MB",
               kind="size")  # fmt: skip
    run.figure("base_mb", "the base (Debian stand-in for python:3.11-slim-bookworm)",
               last["cold_base_present"]["base_bytes"] / MB, "MB", kind="size")  # fmt: skip
    added = last["cold_base_present"]["added_bytes"] / MB
    run.figure("added_mb", "image size over the base", added, "MB", kind="size", decides="size")
    change = last["one_line_change"]
    run.figure("one_line_change_mb", "new layers after a one-line source change",
               change["new_layer_bytes"] / MB, "MB", kind="size", decides="layers")  # fmt: skip
    run.figure("one_line_change_layers", "layers a one-line source change rebuilds",
               change["new_layers"], "layers", kind="count")  # fmt: skip
    for i, r in enumerate(rounds, 1):
        run.figure(f"base_build_s_{i}", f"round {i}: the base (mmdebstrap)",
                   r["base_build"]["seconds"], "s", kind="time")  # fmt: skip
        for step in ("cold_base_absent", "cold_base_present", "warm_no_change", "one_line_change"):
            label = f"round {i}: {step.replace('_', ' ')} (load {r[step]['load1_before']:g} before)"
            run.figure(f"{step}_s_{i}", label, r[step]["build_seconds"], "s", kind="time")
    run.goal("size", "at most the base plus 80 MB", figure="added_mb", met=added <= 80)
    run.goal("layers", "a source change rebuilds only small layers (at most 20 MB, the "
             "dependencies untouched)", figure="one_line_change_mb",
             met=change["new_layer_bytes"] / MB <= 20)  # fmt: skip
    biggest = sorted(last["cold_base_present"]["parts"].items(), key=lambda kv: -kv[1])[:6]
    run.note("biggest parts: " + ", ".join(f"{k} {v / MB:.1f} MB" for k, v in biggest))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    record.add_json_option(parser)
    args = parser.parse_args()
    missing = [t for t in ("buildah", "mmdebstrap", "podman") if shutil.which(t) is None]
    if missing or os.geteuid() != 0:
        print(f"skipped: needs root and {', '.join(missing) or 'nothing else'} (make image)")
        return 0
    run = record.Run.begin(args)
    rounds = [one_round(sys.executable) for _ in range(args.rounds)]
    summary(rounds)
    record_rounds(run, rounds)
    run.write()
    return 0


if __name__ == "__main__":
    sys.exit(main())
