#!/usr/bin/env bash
# Install what `make image` and `make image-test` need from Debian (as root), only when missing:
# buildah builds the Dockerfile without a daemon, mmdebstrap builds the local base image from
# Debian's packages, podman + runc run the image as the chart runs it (read-only root, no caps).
set -euo pipefail
need=()
command -v buildah >/dev/null || need+=(buildah)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v podman >/dev/null || need+=(podman)
command -v runc >/dev/null || need+=(runc)
if ((${#need[@]})); then
    if [[ $(id -u) != 0 ]]; then
        echo "missing ${need[*]}: run as root (apt-get install ${need[*]})" >&2
        exit 3  # distinct: `make test` goes on without the image (its e2e test skips)
    fi
    echo "installing from Debian: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # other apt users may hold the lock for a while (a shared machine, CI's own setup)
    apt_opts=(-o DPkg::Lock::Timeout=600 -qq)
    apt-get "${apt_opts[@]}" update
    apt-get "${apt_opts[@]}" install -y --no-install-recommends "${need[@]}" >/dev/null
fi
