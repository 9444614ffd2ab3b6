#!/usr/bin/env bash
# Install the system packages the tests need (Debian, as root), only when missing.
set -euo pipefail
need=()
command -v prometheus >/dev/null || need+=(prometheus)
command -v kubectl >/dev/null || echo "warning: kubectl not on PATH; kubectl tests will be skipped" >&2
if ((${#need[@]})); then
    echo "installing from Debian: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
