#!/usr/bin/env bash
# Lint, render and validate the Helm chart, offline:
#   1. `helm lint --strict` and `helm template` for the default values and every
#      charts/promscaler/ci/*-values.yaml;
#   2. yamllint over the rendered manifests and the chart's values files;
#   3. every rendered object validated with kubernetes-validate's --strict schemas for
#      Kubernetes 1.27 through 1.37, in ONE Python process that loads each schema once (the
#      CLI re-reads the large _definitions.json for every object and version, ~10x slower).
# Custom resources of CRDs that are not part of Kubernetes (ServiceMonitor, PrometheusRule, cert-manager's
# Certificate and Issuer) have no schema there: they are skipped by name, and the skip is
# printed. Any other kind without a schema is an error, not a warning.
#
# Usage: scripts/validate-chart.sh [OUT_DIR]         render into OUT_DIR (kept) and check
#        scripts/validate-chart.sh --manifests F...  only yamllint + validate the given files
# Env:   HELM (default .tools/helm, else helm on PATH), PYTHON (default .venv/bin/python),
#        KUBE_VERSIONS (default "1.27 ... 1.37").
set -euo pipefail
cd "$(dirname "$0")/.."

chart=charts/promscaler
python="${PYTHON:-.venv/bin/python}"
versions="${KUBE_VERSIONS:-1.27 1.28 1.29 1.30 1.31 1.32 1.33 1.34 1.35 1.36 1.37}"
# Rendered manifests carry base64 certificates and long PromQL: line length is not checked;
# helm's toYaml writes sequences unindented while templates indent them, so either is
# accepted (the indentation of everything else is still checked); values files, like every
# chart's, start without "---".
yamllint_rules='{line-length: disable, indentation: {indent-sequences: whatever}, document-start: disable}'

declare -a manifests=()
if [[ "${1:-}" == "--manifests" ]]; then
    shift
    manifests=("$@")
    echo "== yamllint"
    "$python" -m yamllint --strict -d "{extends: default, rules: $yamllint_rules}" "${manifests[@]}"
else
    helm="${HELM:-}"
    if [[ -z "$helm" ]]; then
        if [[ -x .tools/helm ]]; then helm=.tools/helm; else helm="$(command -v helm || true)"; fi
    fi
    if [[ -z "$helm" ]]; then
        echo "validate-chart: helm not found (run: bash scripts/install-helm.sh .tools)" >&2
        exit 3
    fi
    if [[ $# -ge 1 ]]; then
        out="$1"
        mkdir -p "$out"
    else
        out="$(mktemp -d)"
        trap 'rm -rf "$out"' EXIT
    fi
    # name -> values file ("" for the defaults)
    declare -a names=(default)
    declare -a files=("")
    for f in "$chart"/ci/*-values.yaml; do
        names+=("$(basename "$f" -values.yaml)")
        files+=("$f")
    done
    for i in "${!names[@]}"; do
        name="${names[$i]}"
        args=()
        [[ -n "${files[$i]}" ]] && args=(-f "${files[$i]}")
        echo "== $name: helm lint --strict, helm template"
        "$helm" lint --strict --quiet "$chart" "${args[@]}" >/dev/null
        "$helm" template promscaler "$chart" --namespace monitoring --include-crds "${args[@]}" \
            >"$out/$name.yaml"
        manifests+=("$out/$name.yaml")
    done
    echo "== yamllint"
    "$python" -m yamllint --strict -d "{extends: default, rules: $yamllint_rules}" \
        "${manifests[@]}" "$chart/values.yaml" "$chart/Chart.yaml" "$chart"/ci/*-values.yaml
fi

echo "== kubernetes-validate --strict, Kubernetes ${versions// /, }"
"$python" - "$versions" "${manifests[@]}" <<'PY'
import functools
import re
import sys
import time

import jsonschema
import yaml
from kubernetes_validate import utils
from referencing import Registry, Resource

# Kinds from CRDs that Kubernetes does not ship, hence no schema: skipped explicitly.
SKIP = {
    ("monitoring.coreos.com/v1", "ServiceMonitor"),
    ("monitoring.coreos.com/v1", "PrometheusRule"),
    ("cert-manager.io/v1", "Certificate"),
    ("cert-manager.io/v1", "Issuer"),
}


class NoSchema(Exception):
    pass


@functools.cache
def schema_version(version: str) -> str:
    # kubernetes-validate's rule: the newest bundled schema not newer than the version asked.
    wanted = utils.major_minor(version)
    known = [v for v in utils.all_versions() if utils.major_minor(v) <= wanted]
    if not known or utils.major_minor(version) > utils.latest_version():
        raise SystemExit(f"kubernetes-validate has no schemas for Kubernetes {version}")
    return known[-1]


@functools.cache
def registry(version: str) -> Registry:
    # _definitions.json is large: load it once per version, not once per object as the CLI does.
    defs = utils.schema_contents(
        f"kubernetes-json-schema/v{version}-local-strict/_definitions.json", version
    )
    return Resource.from_contents(defs) @ Registry()


@functools.cache
def validator(version: str, api_version: str, kind: str) -> jsonschema.protocols.Validator:
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    name = f"kubernetes-json-schema/v{version}-local-strict/{kind.lower()}-{group_version}.json"
    try:
        schema = utils.schema_contents(name, version)
    except FileNotFoundError as e:
        raise NoSchema(f"no schema for {api_version} {kind}") from e
    reg = Resource.from_contents(schema) @ registry(version)
    return jsonschema.validators.Draft202012Validator(schema, registry=reg)


versions = sys.argv[1].split()
started = time.monotonic()
failures = checked = 0
skipped: dict[str, int] = {}
for path in sys.argv[2:]:
    with open(path) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    for doc in docs:
        ident = f"{path}: {doc['kind']}/{doc['metadata']['name']}"
        if (doc["apiVersion"], doc["kind"]) in SKIP:
            skipped[doc["kind"]] = skipped.get(doc["kind"], 0) + 1
            continue
        for version in versions:
            checked += 1
            try:
                errors = list(validator(schema_version(version), doc["apiVersion"], doc["kind"])
                              .iter_errors(doc))
            except NoSchema as e:
                print(f"ERROR {ident} on {version}: {e} (add it to SKIP if it is a CR)")
                failures += 1
                continue
            for err in errors:
                where = ".".join(str(p) for p in err.absolute_path)
                print(f"ERROR {ident} on {version}: {where}: {err.message}")
                failures += 1
for kind, n in sorted(skipped.items()):
    print(f"skipped {n} {kind} object(s): custom resource, no schema in Kubernetes")
took = time.monotonic() - started
print(f"{checked} object-version checks, {failures} failure(s), {took:.1f}s")
sys.exit(1 if failures else 0)
PY
echo "chart OK: ${#manifests[@]} manifest file(s)"
