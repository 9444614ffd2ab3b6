"""The commands people type, through the real kubectl, printing what a real cluster prints.

Expected texts are kubectl's own printers (`<resource>.<group>/<name> <verb>`), the
`rollout`/`wait` messages and kube-apiserver's table columns, which do not depend on the server
beyond the data it returns. Each case starts from a Deployment `web` (nginx:1, rolled out).
"""

import asyncio
import json
import re
import shutil
from dataclasses import dataclass, field

import pytest

from sandbox import protomessages
from tests.sandbox.test_kubectl import Kubectl

pytestmark = [
    pytest.mark.kubectl,
    pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed"),
]


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    stdout: str  # a regular expression the whole output must match
    before: tuple[tuple[str, ...], ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    needs: tuple[str, str, str, str] = ("", "", "", "")  # group, version, plural, kind (protobuf)


def _case(cmd: str, stdout: str, *before: str, **kw) -> Case:
    return Case(tuple(cmd.split()), stdout, tuple(tuple(b.split()) for b in before), **kw)


ROLLED_OUT = (
    r'(Waiting for deployment "web" rollout to finish: .*\n)*'
    r'deployment "web" successfully rolled out\n'
)
CASES = {
    "create-deployment": _case(
        "create deployment api --image=nginx:1", r"deployment.apps/api created\n"
    ),
    "create-service": _case("create service clusterip api --tcp=80:8080", r"service/api created\n"),
    "create-configmap": _case("create configmap c --from-literal=a=b", r"configmap/c created\n"),
    "create-secret": _case("create secret generic s --from-literal=a=b", r"secret/s created\n"),
    "create-namespace": _case("create namespace team", r"namespace/team created\n"),
    "create-job": _case(
        "create job j --image=busybox",
        r"job.batch/j created\n",
        needs=("batch", "v1", "jobs", "Job"),
    ),
    "create-serviceaccount": _case("create serviceaccount app", r"serviceaccount/app created\n"),
    "create-role": _case(
        "create role r --verb=get,list --resource=pods",
        r"role.rbac.authorization.k8s.io/r created\n",
    ),
    "create-rolebinding": _case(
        "create rolebinding rb --role=r --user=alice --serviceaccount=default:app",
        r"rolebinding.rbac.authorization.k8s.io/rb created\n",
    ),
    "create-clusterrole": _case(
        "create clusterrole cr --verb=get --resource=nodes --non-resource-url=/healthz",
        r"clusterrole.rbac.authorization.k8s.io/cr created\n",
    ),
    "create-clusterrolebinding": _case(
        "create clusterrolebinding crb --clusterrole=cr --group=devs",
        r"clusterrolebinding.rbac.authorization.k8s.io/crb created\n",
    ),
    "create-pdb": _case(
        "create pdb p --selector=app=web --min-available=0",
        r"poddisruptionbudget.policy/p created\n",
    ),
    "create-ingress": _case(
        "create ingress web --rule=example.com/api*=web:80 --class=nginx",
        r"ingress.networking.k8s.io/web created\n",
        needs=("networking.k8s.io", "v1", "ingresses", "Ingress"),
    ),
    "run": _case("run p --image=nginx:1", r"pod/p created\n"),
    "expose": _case("expose deployment web --port=80", r"service/web exposed\n"),
    "scale": _case("scale deployment web --replicas=3", r"deployment.apps/web scaled\n"),
    "autoscale": _case(
        "autoscale deployment web --min=1 --max=3 --cpu-percent=80",
        r"horizontalpodautoscaler.autoscaling/web autoscaled\n",
        needs=("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler"),
    ),
    "set-image": _case(
        "set image deployment/web nginx=nginx:2", r"deployment.apps/web image updated\n"
    ),
    "rollout-status": _case("rollout status deployment/web --timeout=30s", ROLLED_OUT),
    "rollout-restart": _case("rollout restart deployment/web", r"deployment.apps/web restarted\n"),
    "rollout-undo": _case(
        "rollout undo deployment/web",
        r"deployment.apps/web rolled back\n",
        "set image deployment/web nginx=nginx:2",
        "rollout status deployment/web --timeout=30s",
    ),
    "label": _case("label deployment web tier=frontend", r"deployment.apps/web labeled\n"),
    "annotate": _case("annotate deployment web owner=team-a", r"deployment.apps/web annotated\n"),
    "patch-strategic": _case(
        'patch deployment web -p {"spec":{"replicas":2}}', r"deployment.apps/web patched\n"
    ),
    "patch-merge": _case(
        'patch deployment web --type=merge -p {"spec":{"replicas":2}}',
        r"deployment.apps/web patched\n",
    ),
    "patch-json": _case(
        'patch deployment web --type=json -p [{"op":"replace","path":"/spec/replicas","value":2}]',
        r"deployment.apps/web patched\n",
    ),
    "edit": _case(
        "edit deployment web",
        r"deployment.apps/web edited\n",
        env={"EDITOR": "sed -i s/replicas:.1$/replicas:\\ 4/"},
    ),
    "delete": _case("delete deployment web --wait=false", r'deployment.apps "web" deleted\n'),
    "delete-wait": _case(
        "delete deployment web --wait=true --timeout=30s", r'deployment.apps "web" deleted\n'
    ),
    "describe": _case(
        "describe deployment web",
        r"Name:\s+web\nNamespace:\s+default\n(.*\n)*"
        r"Replicas:\s+1 desired \| 1 updated \| 1 total \| 1 available \| 0 unavailable\n(.*\n)*",
    ),
    "wait-condition": _case(
        "wait --for=condition=Available deployment/web --timeout=30s",
        r"deployment.apps/web condition met\n",
    ),
    "get-columns": _case(
        "get deployment,service,configmap",
        r"NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\ndeployment.apps/web\s+1/1\s+1\s+1\s+\S+\n\n"
        r"NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\n"
        r"service/web\s+ClusterIP\s+10\.96\.\S+\s+<none>\s+80/TCP\s+\S+\n\n"
        r"NAME\s+DATA\s+AGE\n(configmap/\S+\s+\d+\s+\S+\n)+",
        "expose deployment web --port=80",
        "create configmap settings --from-literal=a=b",
    ),
}


@pytest.fixture
def kubectl(sandbox, tmp_path):
    return Kubectl(sandbox, tmp_path)


async def _run(kubectl, args, env):
    import os

    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        "--kubeconfig",
        kubectl.kubeconfig,
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return proc.returncode, out.decode(), err.decode()


@pytest.mark.parametrize("case", list(CASES.values()), ids=list(CASES))
async def test_command(sandbox, kubectl, case):
    group, version, plural, kind = case.needs
    if plural:
        if sandbox.registry.lookup(group, version, plural) is None:
            pytest.skip(f"the sandbox does not serve {group}/{version} {plural} yet")
        if protomessages.message_for(f"{group}/{version}".lstrip("/"), kind) is None:
            pytest.skip(f"kubectl sends {kind} as protobuf; {kind} is not in protomessages yet")
    await kubectl("create", "deployment", "web", "--image=nginx:1")
    await kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    for step in case.before:
        await kubectl(*step)
    code, out, err = await _run(kubectl, case.args, case.env)
    assert code == 0, err
    assert re.fullmatch(case.stdout, out), out


async def test_edit_changed_the_object(kubectl):
    await kubectl("create", "deployment", "web", "--image=nginx:1")
    env = CASES["edit"].env
    assert (await _run(kubectl, ("edit", "deployment", "web"), env))[0] == 0
    _, out, _ = await kubectl("get", "deployment", "web", "-o", "json")
    assert json.loads(out)["spec"]["replicas"] == 4


async def test_get_watch_prints_the_change(kubectl):
    await kubectl("create", "deployment", "web", "--image=nginx:1")
    proc = await asyncio.create_subprocess_exec(
        "kubectl",
        "--kubeconfig",
        kubectl.kubeconfig,
        "get",
        "deployment",
        "web",
        "-w",
        "--output-watch-events",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        header = await asyncio.wait_for(proc.stdout.readline(), 20)
        assert header.split() == [b"EVENT", b"NAME", b"READY", b"UP-TO-DATE", b"AVAILABLE", b"AGE"]
        assert (await asyncio.wait_for(proc.stdout.readline(), 20)).split()[:2] == [
            b"ADDED",
            b"web",
        ]
        await kubectl("scale", "deployment", "web", "--replicas=2")
        line = b""
        while b"/2" not in line:
            line = await asyncio.wait_for(proc.stdout.readline(), 20)
            assert line, "the watch ended"
        assert line.split()[0] == b"MODIFIED"
    finally:
        proc.kill()
        await proc.wait()


async def test_server_side_apply_is_approximated(kubectl):
    path = kubectl.tmp / "cm.yaml"
    path.write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa}\ndata: {a: '1'}\n")
    _, out, _ = await kubectl("apply", "--server-side", "-f", str(path))
    assert out == "configmap/ssa serverside-applied\n"


async def test_replace_of_what_get_wrote(kubectl):
    await kubectl("create", "deployment", "web", "--image=nginx:1")
    # until the rollout is done the controllers still write status, and a replace of an older
    # resourceVersion is a 409 (as on a real cluster)
    await kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    _, out, _ = await kubectl("get", "deployment", "web", "-o", "yaml")
    path = kubectl.tmp / "web.yaml"
    path.write_text(out.replace("replicas: 1\n", "replicas: 3\n", 1))
    _, out, _ = await kubectl("replace", "-f", str(path))
    assert out == "deployment.apps/web replaced\n"
    _, out, _ = await kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")
    assert out == "3"
