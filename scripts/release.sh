#!/usr/bin/env bash
# Build the release artefacts of promscaler X.Y.Z into dist/, after checking the tree is ready:
#   - VERSION is X.Y.Z (the tag will be vX.Y.Z);
#   - the git tree is clean (no modified, staged or untracked file): what is built is a commit;
#   - pyproject.toml's version and the chart's version and appVersion are VERSION: the release
#     commit sets them (this script changes no file, so it can never build something that is
#     not committed);
#   - CHANGELOG.md has a "## [X.Y.Z]" section (Keep a Changelog);
#   - a tag vX.Y.Z, if it exists already, points at HEAD.
# Then: wheel and sdist (the `build` package, in an isolated environment), `helm package` of
# the chart, the image when `make image` exists and buildah is on PATH, and SHA-256 checksums
# of every file made. It uploads nothing and pushes no tag.
#
# Usage: scripts/release.sh X.Y.Z [--check]     (--check: the checks only, nothing built)
# Env:   PYTHON (default .venv/bin/python), HELM (default .tools/helm, else helm on PATH),
#        DIST (default dist)
set -euo pipefail
cd "$(dirname "$0")/.."

version="${1:-}"
mode="${2:-build}"
python="${PYTHON:-.venv/bin/python}"
dist="${DIST:-dist}"
chart=charts/promscaler

fail() { echo "release: $*" >&2; exit 1; }

[[ -n "$version" ]] || fail "no version: make release VERSION=X.Y.Z"
[[ "$version" =~ ^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$ ]] ||
    fail "VERSION=$version is not X.Y.Z (three numbers, no leading zeros, no suffix)"
[[ "$mode" == build || "$mode" == --check ]] || fail "unknown option $mode (only --check)"

git rev-parse --is-inside-work-tree >/dev/null 2>&1 || fail "$(pwd) is not a git work tree"
dirty="$(git status --porcelain --untracked-files=normal)"
[[ -z "$dirty" ]] || fail "the tree is not clean; commit or remove first:
$dirty"

# pyproject.toml's [project] version, read by Python's own TOML parser
have="$("$python" -c 'import sys, tomllib; print(tomllib.load(open(sys.argv[1], "rb"))["project"]["version"])' pyproject.toml)"
[[ "$have" == "$version" ]] || fail "pyproject.toml: [project] version is $have, not $version"
for field in version appVersion; do
    have="$(sed -n -E "s/^${field}:[[:space:]]*\"?([^\"[:space:]]*)\"?[[:space:]]*$/\1/p" "$chart/Chart.yaml")"
    [[ "$have" == "$version" ]] || fail "$chart/Chart.yaml: $field is ${have:-missing}, not $version"
done

# "## [X.Y.Z]" or "## [X.Y.Z] - YYYY-MM-DD", as Keep a Changelog writes a release
grep -Eq "^## \[${version//./\\.}\]( - [0-9]{4}-[0-9]{2}-[0-9]{2})?[[:space:]]*$" CHANGELOG.md ||
    fail "CHANGELOG.md has no \"## [$version] - YYYY-MM-DD\" section"

if tagged="$(git rev-parse -q --verify "refs/tags/v$version^{commit}")"; then
    [[ "$tagged" == "$(git rev-parse HEAD)" ]] || fail "tag v$version exists and is not HEAD"
fi

commit="$(git rev-parse --short=12 HEAD)"
echo "release $version: checks passed at $commit"
[[ "$mode" == build ]] || exit 0

helm="${HELM:-}"
if [[ -z "$helm" ]]; then
    if [[ -x .tools/helm ]]; then helm=.tools/helm; else helm="$(command -v helm || true)"; fi
fi
[[ -n "$helm" ]] || fail "helm not found (make helm installs it into .tools/)"

mkdir -p "$dist"
wheel="promscaler-$version-py3-none-any.whl"
sdist="promscaler-$version.tar.gz"
package="promscaler-$version.tgz"
sums="promscaler-$version.sha256"
rm -f "$dist/$wheel" "$dist/$sdist" "$dist/$package" "$dist/$sums"

echo "== wheel and sdist"
"$python" -m build --sdist --wheel --outdir "$dist" . >"$dist/build-$version.log" 2>&1 ||
    { tail -30 "$dist/build-$version.log" >&2; fail "python -m build failed (log: $dist/build-$version.log)"; }
echo "== helm package"
"$helm" package "$chart" --destination "$dist" >/dev/null
made=("$wheel" "$sdist" "$package")
for f in "${made[@]}"; do [[ -f "$dist/$f" ]] || fail "expected $dist/$f was not made"; done

echo "== image"
if make -n image >/dev/null 2>&1 && command -v buildah >/dev/null; then
    make image VERSION="$version"
    image="built by make image (VERSION=$version)"
else
    image="skipped: no \`make image\` target or no buildah on PATH"
fi

(cd "$dist" && sha256sum "${made[@]}" >"$sums")
echo
echo "made in $dist/ from $commit (nothing uploaded, no tag pushed):"
for f in "${made[@]}" "$sums"; do printf '  %-44s %10s bytes\n' "$f" "$(stat -c %s "$dist/$f")"; done
echo "  image: $image"
echo "checksums ($dist/$sums):"
sed 's/^/  /' "$dist/$sums"
echo "next: git tag -a v$version -m 'promscaler $version' && git push origin v$version"
