#!/usr/bin/env bash
# Build (once) a local stand-in for the Dockerfile's PYTHON_IMAGE from Debian's packages, for
# machines without a container registry: Debian bookworm's Python 3.11 with venv and pip, in the
# layout the official python:3.11-slim-bookworm image has where the Dockerfile relies on it
# (`python` on PATH, CA certificates, tzdata). Prints the image's name; does nothing when that
# image exists already. The name carries a digest of this script, so editing it makes a new base.
#   usage: scripts/image-base.sh            (env: DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR)
set -euo pipefail
cd "$(dirname "$0")/.."
: "${STORAGE_DRIVER:=overlay}"
: "${DEBIAN_MIRROR:=http://deb.debian.org/debian}"
: "${DEBIAN_SECURITY_MIRROR:=http://deb.debian.org/debian-security}"
suite=bookworm
packages=python3,python3-venv,python3-pip,python-is-python3,ca-certificates,netbase,tzdata
key=$(sha256sum "$0" | cut -c1-12)
name="localhost/promscaler-base:python3-$suite-$key"
bah=(buildah --storage-driver "$STORAGE_DRIVER")

if "${bah[@]}" inspect --type image "$name" >/dev/null 2>&1; then
    echo "$name"
    exit 0
fi
work=$(mktemp -d)
ctr=
cleanup() { [[ -n $ctr ]] && "${bah[@]}" rm "$ctr" >/dev/null 2>&1; rm -rf "$work"; }
trap cleanup EXIT
echo "building the base image $name from Debian $suite (once)" >&2
# minbase + merged /usr as Debian's own images; no recommends; no docs, man pages or locales,
# which a runtime never reads (the official slim image drops them too)
mmdebstrap --variant=minbase --mode=root --format=tar \
    --include="$packages" --aptopt='APT::Install-Recommends "false"' \
    --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
    "$suite" "$work/rootfs.tar" \
    "deb $DEBIAN_MIRROR $suite main" "deb $DEBIAN_MIRROR $suite-updates main" \
    "deb $DEBIAN_SECURITY_MIRROR $suite-security main" >&2
ctr=$("${bah[@]}" from scratch)
"${bah[@]}" add "$ctr" "$work/rootfs.tar" / >&2
# the official image's environment, where the Dockerfile depends on it
"${bah[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env LANG=C.UTF-8 --cmd python3 \
    --label org.opencontainers.image.description="Debian $suite python3 (promscaler's local stand-in for python:3.11-slim-bookworm)" \
    "$ctr"
"${bah[@]}" commit --quiet --rm "$ctr" "$name" >/dev/null
ctr=
echo "$name"
