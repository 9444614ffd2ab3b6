"""The converter's last check, `check_autoscaler`, is at least as strict as the API server with
our CRD (its structural schema through jsonschema and every CEL rule through cel-python, in
tests/controller/crdcheck.py): whatever it accepts, the CRD accepts. Searched by mutating the
converted examples anywhere."""

from __future__ import annotations

import copy
import runpy
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autoscaler.convert import convert
from autoscaler.core.autoscaler_spec_schema import SPEC_SCHEMA
from autoscaler.core.fields import DocumentError
from autoscaler.core.spec_rules import check_autoscaler
from tests.controller.crdcheck import load_crd, validate
from tests.convert import examples as ex
from tests.convert.keda_docs import DOCS, REFUSED
from tests.convert.test_convert_bad_input import paths, replaced

CRD = load_crd()
OUTPUTS = [
    convert(ex.load(getattr(ex, n))).autoscaler for n in dir(ex) if n.startswith(("KEDA_", "HPA_"))
] + [convert(yaml.safe_load(text)).autoscaler for n, text in DOCS.items() if n not in REFUSED]
# no None: the API server prunes a null in a non-nullable field (crdcheck refuses it instead)
VALUES = st.recursive(
    st.booleans()
    | st.integers(-2, 4000)
    | st.sampled_from(["", "0", "-1", "1.5", "500m", "x", "Value", "AverageValue", "Utilization"])
    | st.sampled_from(["External", "Pods", "Object", "Resource", "Disabled", "10h", "0s", "UTC"])
    | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=4,
)


def accepted(obj: dict[str, Any]) -> bool:
    try:
        check_autoscaler(obj)
    except DocumentError:
        return False
    return True


def test_every_converted_example_passes_both():
    for obj in OUTPUTS:
        assert accepted(obj)
        assert validate(obj, CRD)[1] == []


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_what_check_autoscaler_accepts_the_crd_accepts(data):
    obj = copy.deepcopy(data.draw(st.sampled_from(OUTPUTS)))
    path = data.draw(st.sampled_from([p for p in paths(obj) if p[0] in ("spec", "metadata")]))
    obj = replaced(obj, path, data.draw(VALUES))
    if accepted(obj):
        assert validate(obj, CRD)[1] == [], path


def test_the_cores_schema_is_the_crds():
    script = runpy.run_path(str(Path(__file__).parents[2] / "scripts/crd_spec_schema.py"))
    module = Path(__file__).parents[2] / "autoscaler/core/autoscaler_spec_schema.py"
    assert script["spec_schema"]() == SPEC_SCHEMA, "run scripts/crd_spec_schema.py"
    assert module.read_text() == script["text"](), "run scripts/crd_spec_schema.py"
