"""After `make image`: the image's size and biggest parts, and a CycloneDX SBOM of its Python.

The image is mounted read-only through a buildah working container; sizes are bytes on disk of
the unpacked files (podman's layer sizes for the layers). The SBOM comes from cyclonedx-py
(cyclonedx-bom on PyPI) reading the installed distributions' metadata in the mounted image; the
list of paths it reads is the image's own `sys.path`, asked of the image's interpreter, so the
`.pth` file that adds the project is honoured.

    python scripts/image_report.py --image promscaler:dev --base BASE --sbom F --json F
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

VENV = "/opt/promscaler"
TOP_PARTS = 8  # how many of the biggest installed distributions the report names


def sh(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout.strip()


def storage() -> list[str]:
    return ["--storage-driver", os.environ.get("STORAGE_DRIVER", "overlay")]


def image_size(image: str) -> int:
    return int(sh("podman", *storage(), "image", "inspect", "--format", "{{.Size}}", image))


def layers(image: str) -> list[dict[str, object]]:
    history = json.loads(sh("podman", *storage(), "history", "--format", "json", image))
    return [
        {"size": int(h["size"]), "created_by": str(h.get("CreatedBy", ""))[:120]}
        for h in reversed(history)
        if int(h["size"]) > 0
    ]


def tree_size(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            f = Path(root, name)
            if not f.is_symlink():
                total += f.stat().st_size
    return total


def parts(mount: Path) -> dict[str, int]:
    """Bytes per top-level entry of the venv's site-packages (a distribution's package), and of
    the project, its bytecode tree and the rest of the venv."""
    venv = mount / VENV.lstrip("/")
    (site,) = venv.glob("lib/python3*/site-packages")
    out: dict[str, int] = {}
    for entry in site.iterdir():
        if entry.is_dir() and not entry.name.endswith((".dist-info", "__pycache__")):
            out[f"site-packages/{entry.name}"] = tree_size(entry)
        elif entry.is_file() and entry.suffix == ".so":
            out[f"site-packages/{entry.name}"] = entry.stat().st_size
    out["app (the project)"] = tree_size(venv / "app")
    out["pycache (bytecode)"] = tree_size(venv / "pycache")
    out["venv total"] = tree_size(venv)
    return dict(sorted(out.items(), key=lambda kv: -kv[1]))


def write_sbom(container: str, mount: Path, sbom: Path) -> None:
    """cyclonedx-py asks `<python> -c ...` for sys.path; a shim answers with the image's own
    sys.path (from `buildah run`), each entry under the mount point."""
    with tempfile.TemporaryDirectory() as tmp:
        shim = Path(tmp, "python")
        run = ["buildah", *storage(), "run", "--isolation", "chroot", container, "--"]
        shim.write_text(
            f"#!{sys.executable}\n"
            "import json, subprocess, sys\n"
            f"out = subprocess.run({run!r} + [{VENV + '/bin/python'!r}, *sys.argv[1:]],"
            " check=True, capture_output=True, text=True).stdout\n"
            f"print(json.dumps([{str(mount)!r} + p for p in json.loads(out) if p]))\n"
        )
        shim.chmod(0o755)
        cyclonedx = Path(sys.executable).parent / "cyclonedx-py"
        subprocess.run(
            [
                str(cyclonedx),
                "environment",
                "--pyproject",
                "pyproject.toml",
                "--output-reproducible",
                "--of",
                "JSON",
                "-o",
                str(sbom),
                str(shim),
            ],
            check=True,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--image", required=True)
    parser.add_argument("--base", required=True, help="the PYTHON_IMAGE it was built on")
    parser.add_argument("--sbom", type=Path, required=True, help="CycloneDX JSON written here")
    parser.add_argument("--json", type=Path, required=True, help="the size report written here")
    args = parser.parse_args()
    container = sh("buildah", *storage(), "from", "--pull-never", args.image)
    try:
        mount = Path(sh("buildah", *storage(), "mount", container))
        image_bytes, base_bytes = image_size(args.image), image_size(args.base)
        sizes = parts(mount)
        report = {
            "image": args.image,
            "base": args.base,
            "image_bytes": image_bytes,
            "base_bytes": base_bytes,
            "added_bytes": image_bytes - base_bytes,
            "layers": layers(args.image),
            "parts": sizes,
        }
        write_sbom(container, mount, args.sbom)
    finally:
        subprocess.run(["buildah", *storage(), "rm", container], check=False, capture_output=True)
    args.json.write_text(json.dumps(report, indent=2) + "\n")
    mb = 1e6
    added = image_bytes - base_bytes
    print(f"{args.image}: {image_bytes / mb:.0f} MB", end=" ")
    print(f"= base {base_bytes / mb:.0f} MB + {added / mb:.0f} MB")
    for name, size in list(sizes.items())[: TOP_PARTS + 3]:
        print(f"  {size / mb:7.1f} MB  {name}")
    print(f"size report: {args.json}")
    print(f"SBOM (CycloneDX, the image's Python environment): {args.sbom}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
