"""`helm upgrade` from the previous release's chart package to this one's.

Both charts are packaged with the real `helm package` (the previous one from its own tree, as
tests/support/previous_release.py finds it). With the user values the previous chart was
tested with (its ci/*-values.yaml, and the defaults), the new chart must accept them (its
values.schema.json), render objects that validate against Kubernetes' schemas, keep every
object name it had (helm deletes what a new chart no longer renders: a renamed APIService or
Deployment is an outage), and keep what the values set. On the sandbox, a real `helm install`
of the old package followed by `helm upgrade` to the new one, with `-f` and with
`--reuse-values`, keeps the user's values and deploys.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandbox import Sandbox
from tests.charts.helm import CHART, NAMESPACE, RELEASE, ROOT, Helm
from tests.support.previous_release import extract, previous_commit

USER_VALUES = {  # what an operator typically sets, all of it known to the previous chart
    "adapter": {"replicas": 3, "resources": {"requests": {"cpu": "150m", "memory": "96Mi"}}},
    "autoscaler": {"replicas": 1},
    "commonLabels": {"team": "platform"},
    "image": {"tag": "0.1.0"},
}


@pytest.fixture(scope="module")
def packages(helm: Helm, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """{"previous": its .tgz, "current": ours}."""
    out = tmp_path_factory.mktemp("packages")
    commit, _ = previous_commit()
    extract(commit, out / "previous-src")
    found = {}
    for which, chart in (("previous", out / "previous-src/charts/promscaler"), ("current", CHART)):
        dest = out / which
        subprocess.run(
            [helm.binary, "package", str(chart), "--destination", str(dest)],
            check=True,
            capture_output=True,
            timeout=60,
        )
        (found[which],) = dest.glob("promscaler-*.tgz")
    return found


def previous_values_files(packages: dict[str, Path]) -> Iterator[Path]:
    yield from sorted(
        (packages["previous"].parent.parent / "previous-src").glob(
            "charts/promscaler/ci/*-values.yaml"
        )
    )


def template(helm: Helm, package: Path, *values: Path) -> list[dict[str, Any]]:
    args = [helm.binary, "template", RELEASE, str(package), "--namespace", NAMESPACE]
    for f in values:
        args += ["--values", str(f)]
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"{package.name} with {[v.name for v in values]}: {done.stderr}"
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def names(objects: list[dict[str, Any]]) -> set[tuple[str, str]]:
    return {(o["kind"], o["metadata"]["name"]) for o in objects}


def workloads(objects: list[dict[str, Any]], *, with_image: bool) -> dict[str, Any]:
    """What a user's values set on each Deployment: replicas, and each container's args,
    resources and (when the values pin it) image."""
    out = {}
    for d in (o for o in objects if o["kind"] == "Deployment"):
        pod = d["spec"]["template"]["spec"]
        out[d["metadata"]["name"]] = {
            "replicas": d["spec"].get("replicas"),
            "containers": [
                {
                    "args": c.get("args"),
                    "resources": c.get("resources"),
                    **({"image": c["image"]} if with_image else {}),
                }
                for c in pod["containers"]
            ],
        }
    return out


def test_the_packages_carry_their_versions(packages):
    current = packages["current"].name
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert current == f"promscaler-{chart['version']}.tgz"
    assert packages["previous"].name != current, "the previous chart has another version"


def test_the_new_chart_renders_the_previous_charts_values_and_keeps_them(
    helm: Helm, packages: dict[str, Path], tmp_path: Path
):
    user = tmp_path / "user-values.yaml"
    user.write_text(yaml.safe_dump(USER_VALUES))
    sets = [(), (user,), *((f,) for f in previous_values_files(packages))]
    assert len(sets) >= 4, "the previous chart's ci/*-values.yaml were found"
    rendered = []
    for values in sets:
        old = template(helm, packages["previous"], *values)
        new = template(helm, packages["current"], *values)
        what = [v.name for v in values] or "defaults"
        # helm deletes what the new chart no longer renders; a new object is only added
        assert names(old) <= names(new), (what, names(old) - names(new))
        pinned = any("tag" in (yaml.safe_load(v.read_text()).get("image") or {}) for v in values)
        kept, had = workloads(new, with_image=pinned), workloads(old, with_image=pinned)
        assert kept.keys() == had.keys(), what
        for name, before in had.items():
            after = kept[name]
            assert after["replicas"] == before["replicas"], (what, name)
            for c_after, c_before in zip(after["containers"], before["containers"], strict=True):
                # a flag the new chart adds (a new setting at its default) is no loss; every flag
                # the values set before is still there with its value
                missing = set(c_before["args"] or []) - set(c_after["args"] or [])
                assert missing == set(), (what, name, missing)
                assert {k: v for k, v in c_after.items() if k != "args"} == {
                    k: v for k, v in c_before.items() if k != "args"
                }, (what, name)
        path = tmp_path / f"new-{len(rendered)}.yaml"
        path.write_text(yaml.safe_dump_all(new))
        rendered.append(str(path))
    user_render = template(helm, packages["current"], user)
    adapter = next(
        d
        for d in user_render
        if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("adapter")
    )
    assert adapter["spec"]["replicas"] == 3
    assert adapter["spec"]["template"]["spec"]["containers"][0]["image"].endswith(":0.1.0")
    # the rendered objects validate as scripts/validate-chart.sh validates the chart's own
    done = subprocess.run(
        ["bash", str(ROOT / "scripts/validate-chart.sh"), "--manifests", *rendered],
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHON": sys.executable, "KUBE_VERSIONS": "1.27 1.37", "PATH": "/usr/bin:/bin"},
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


async def helm_run(helm: Helm, sb: Sandbox, *args: str) -> str:
    proc = await asyncio.create_subprocess_exec(
        helm.binary, *args, "--namespace", NAMESPACE, "--kubeconfig", str(sb.kubeconfig),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
    assert proc.returncode == 0, f"helm {args[:2]}: {err.decode()}"
    return out.decode()


@pytest.mark.parametrize(
    "how",
    [
        pytest.param(("--values", "USER"), id="same-values-file"),
        pytest.param(("--reuse-values",), id="reuse-values"),
    ],
)
async def test_helm_upgrade_on_the_sandbox_keeps_the_users_values(
    sandbox: Sandbox, helm: Helm, packages: dict[str, Path], tmp_path: Path, how: tuple[str, ...]
):
    user = tmp_path / "user-values.yaml"
    user.write_text(yaml.safe_dump(USER_VALUES))
    await helm_run(
        helm, sandbox, "install", RELEASE, str(packages["previous"]), "--create-namespace",
        "--values", str(user), "--wait", "--timeout", "60s",
    )  # fmt: skip
    args = tuple(str(user) if a == "USER" else a for a in how)
    await helm_run(
        helm, sandbox, "upgrade", RELEASE, str(packages["current"]), *args,
        "--wait", "--timeout", "60s",
    )  # fmt: skip
    status = json.loads(await helm_run(helm, sandbox, "status", RELEASE, "--output", "json"))
    assert status["info"]["status"] == "deployed"
    assert status["version"] == 2
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    history = json.loads(await helm_run(helm, sandbox, "history", RELEASE, "--output", "json"))
    assert [(h["chart"], h["app_version"]) for h in history][-1] == (
        f"promscaler-{chart['version']}",
        chart["appVersion"],
    )
    assert history[0]["chart"] != history[-1]["chart"], "installed from the previous package"
    kept = json.loads(await helm_run(helm, sandbox, "get", "values", RELEASE, "--output", "json"))
    assert kept == USER_VALUES
    manifest = await helm_run(helm, sandbox, "get", "manifest", RELEASE)
    deployments = {
        d["metadata"]["name"]: d
        for d in yaml.safe_load_all(manifest)
        if d and d["kind"] == "Deployment"
    }
    replicas = sorted(d["spec"]["replicas"] for d in deployments.values())
    assert replicas == [1, 3], deployments.keys()


def test_reuse_values_renders_on_the_previous_charts_defaults(
    helm: Helm, packages: dict[str, Path], tmp_path: Path
):
    """`helm upgrade --reuse-values` renders the new templates over the previous release's values,
    without the new chart's defaults (helm/helm#8085): a value the new chart added is absent, so a
    template must not dereference it blindly. Rendered here by swapping the previous chart's
    values.yaml into a copy of the new chart, with each of the previous chart's ci values;
    the new values.schema.json judges them, as helm does on such an upgrade."""
    chart = tmp_path / "reuse" / "promscaler"
    shutil.copytree(CHART, chart)
    previous_src = packages["previous"].parent.parent / "previous-src"
    shutil.copy(previous_src / "charts/promscaler/values.yaml", chart / "values.yaml")
    sets = [(), *((f,) for f in previous_values_files(packages))]
    for values in sets:
        objects = template(helm, chart, *values)
        for api in (o for o in objects if o["kind"] == "APIService"):
            assert isinstance(api["spec"]["versionPriority"], int), api
        for d in (o for o in objects if o["kind"] == "Deployment"):
            for c in d["spec"]["template"]["spec"]["containers"]:
                # a flag rendered from a value the old release lacks: `--x=` or `<no value>`
                bad = [a for a in c.get("args", []) if a.endswith("=") or "<no value>" in a]
                assert bad == [], (d["metadata"]["name"], bad)
