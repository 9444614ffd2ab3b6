#!/usr/bin/env bash
# `make image`: build the Dockerfile with buildah (no daemon, no registry), on a local stand-in
# for PYTHON_IMAGE made from Debian's packages unless PYTHON_IMAGE names another base; then
# report the image's size and biggest parts, and write a CycloneDX SBOM of its Python
# environment to out/image/.
#   usage: scripts/image-build.sh            (env: IMAGE, PYTHON_IMAGE, PY, STORAGE_DRIVER)
# IMAGE_OPTIONAL=1 (`make test`): where the tools are missing and cannot be installed (not
# root), say so and succeed; e2e/test_image.py then skips, naming what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${IMAGE:=promscaler:dev}"
: "${PY:=.venv/bin/python}"
: "${STORAGE_DRIVER:=overlay}"
export STORAGE_DRIVER
bah=(buildah --storage-driver "$STORAGE_DRIVER")

code=0
bash scripts/install-image-deps.sh || code=$?
if ((code == 3)) && [[ ${IMAGE_OPTIONAL:-} == 1 ]]; then
    echo "no image built: its tools cannot be installed without root (e2e/test_image.py skips)"
    exit 0
fi
((code == 0)) || exit "$code"
base=${PYTHON_IMAGE:-$(bash scripts/image-base.sh)}
version=$("$PY" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
build=("${bah[@]}" bud --isolation chroot --network host --layers
    --build-arg "PYTHON_IMAGE=$base" --build-arg "VERSION=$version" --tag "$IMAGE")
# pip inside the build must trust what the host trusts (a TLS-intercepting proxy, say): the
# host's bundle is mounted for the build steps only, never copied into a layer
ca=/etc/ssl/certs/ca-certificates.crt
[[ -f $ca ]] && build+=(--volume "$ca:$ca:ro")
echo "building $IMAGE (version $version) on $base"
start=$EPOCHREALTIME
"${build[@]}" . >&2
"$PY" -c 'import sys; print(f"built {sys.argv[1]} in {float(sys.argv[3]) - float(sys.argv[2]):.1f} s")' \
    "$IMAGE" "$start" "$EPOCHREALTIME"

out=out/image
mkdir -p "$out"
stem=$out/$(tr ':/' '--' <<<"$IMAGE")
"$PY" scripts/image_report.py --image "$IMAGE" --base "$base" --sbom "$stem.cdx.json" \
    --json "$stem.report.json"
