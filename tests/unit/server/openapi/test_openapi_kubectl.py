"""kubectl itself reads our OpenAPI document: explain, and client-side validation.

Runs with every kubectl client version found (kubectl 1.20 from Debian's kubernetes-client
reads the protobuf ``/openapi/v2``; kubectl 1.27+ reads ``/openapi/v3`` for explain). The
versions used are printed (``pytest -s``) and recorded as test properties.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from tests.unit.server.openapi.kubectl_harness import FakeApiServer, Kubectl, find_kubectls, run_kubectl

pytestmark = pytest.mark.e2e

KUBECTLS = find_kubectls()

BAD_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  bogus: 1
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: app
        image: nginx
        ports:
        - containerPort: "eighty"
"""

GOOD_DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {tier: front}
spec:
  replicas: 2
  strategy: {type: RollingUpdate, rollingUpdate: {maxSurge: 1, maxUnavailable: "25%"}}
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      volumes: [{name: scratch, emptyDir: {sizeLimit: 1Gi}}]
      tolerations: [{key: k, operator: Exists, effect: NoSchedule}]
      containers:
      - name: app
        image: nginx:1.21
        env: [{name: A, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
        resources: {limits: {cpu: 100m, memory: 1Gi}}
        ports: [{containerPort: 80, protocol: TCP}]
        readinessProbe: {httpGet: {port: http, path: /}, periodSeconds: 5}
        volumeMounts: [{name: scratch, mountPath: /scratch}]
"""

BAD_CLONESET = """\
apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: cs
spec:
  replicas: "three"
  unknownField: 1
  selector:
    matchLabels: {app: cs}
  template:
    metadata:
      labels: {app: cs}
    spec:
      containers: [{name: app, image: nginx, anything: goes}]
"""

VALIDATION_HINT = "if you choose to ignore these errors, turn validation off with --validate=false"


@pytest.fixture
async def server() -> AsyncIterator[FakeApiServer]:
    fake = FakeApiServer()
    await fake.start()
    yield fake
    await fake.close()


def test_a_kubectl_is_available() -> None:
    """CI installs Debian's kubernetes-client (kubectl 1.20); without any kubectl the tests below
    would not run at all, so its absence is a failure."""
    assert KUBECTLS, "no kubectl found (install kubernetes-client or set KUBELOOP_KUBECTL)"
    print("kubectl versions:", ", ".join(f"{k.version} ({k.path})" for k in KUBECTLS))



@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda k: k.version)
async def test_explain_reads_our_schema(kubectl: Kubectl, server: FakeApiServer, tmp_path: Path,
                                        record_property: Callable[[str, object], None]) -> None:
    record_property("kubectl", f"{kubectl.version} {kubectl.path}")
    config = server.kubeconfig(tmp_path)
    result = await run_kubectl(kubectl, config, tmp_path, "explain", "deployment.spec.strategy")
    assert result.returncode == 0, result.stderr
    # Upstream's descriptions (kubectl wraps them): the field's, then its members'.
    assert "The deployment strategy to use to replace existing pods with new ones." in " ".join(result.stdout.split())
    assert "rollingUpdate" in result.stdout and 'Can be "Recreate" or "RollingUpdate"' in result.stdout
    header = "RESOURCE: strategy <Object>" if kubectl.minor < 27 else "FIELD: strategy <DeploymentStrategy>"
    assert header in result.stdout

    cloneset = await run_kubectl(kubectl, config, tmp_path, "explain", "cloneset.spec")
    assert cloneset.returncode == 0, cloneset.stderr
    assert "The desired state of the CloneSet." in cloneset.stdout
    assert "scaleStrategy" in cloneset.stdout and "updateStrategy" in cloneset.stdout

    deep = await run_kubectl(kubectl, config, tmp_path, "explain", "pod.spec.containers.ports")
    assert deep.returncode == 0, deep.stderr
    assert "containerPort" in deep.stdout and "-required-" in deep.stdout
    fetched = {path for path, _, _ in server.requests}
    assert ("/openapi/v2" in fetched) if kubectl.minor < 27 else any(p.startswith("/openapi/v3") for p in fetched)


@pytest.mark.parametrize("kubectl", KUBECTLS, ids=lambda k: k.version)
async def test_client_side_validation_rejects_unknown_and_mistyped_fields(
        kubectl: Kubectl, server: FakeApiServer, tmp_path: Path) -> None:
    config = server.kubeconfig(tmp_path)
    (tmp_path / "bad.yaml").write_text(BAD_DEPLOYMENT)
    (tmp_path / "good.yaml").write_text(GOOD_DEPLOYMENT)
    (tmp_path / "bad-cs.yaml").write_text(BAD_CLONESET)

    bad = await run_kubectl(kubectl, config, tmp_path, "create", "--dry-run=client", "--validate=true", "-f",
                            str(tmp_path / "bad.yaml"))
    if kubectl.minor >= 25:
        # Built-in writes declare fieldValidation: kubectl 1.25+ leaves the checks to the server
        # (tests/e2e/kubectl/test_kubectl_field_validation.py), so a client-side dry run passes.
        assert bad.returncode == 0, bad.stderr
    else:
        assert bad.returncode != 0
        assert ('ValidationError(Deployment.spec): unknown field "bogus" in io.k8s.api.apps.v1.DeploymentSpec'
                in bad.stderr)
        assert ("ValidationError(Deployment.spec.template.spec.containers[0].ports[0].containerPort): invalid type "
                'for io.k8s.api.core.v1.ContainerPort.containerPort: got "string", expected "integer"') in bad.stderr
        assert VALIDATION_HINT in bad.stderr

    good = await run_kubectl(kubectl, config, tmp_path, "create", "--dry-run=client", "--validate=true", "-o", "name",
                             "-f", str(tmp_path / "good.yaml"))
    assert good.returncode == 0, good.stderr
    assert good.stdout.strip() == "deployment.apps/web"

    custom = await run_kubectl(kubectl, config, tmp_path, "create", "--dry-run=client", "--validate=true", "-f",
                               str(tmp_path / "bad-cs.yaml"))
    assert custom.returncode != 0
    assert ('ValidationError(CloneSet.spec): unknown field "unknownField" in io.kruise.apps.v1alpha1.CloneSet.spec'
            in custom.stderr)
    assert ('ValidationError(CloneSet.spec.replicas): invalid type for io.kruise.apps.v1alpha1.CloneSet.spec.replicas:'
            ' got "string", expected "integer"') in custom.stderr
