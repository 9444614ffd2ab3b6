"""check_autoscaler against the CRD tests' own tables: every object the CRD refuses there
(tests/controller/test_crd.py, test_crd_controls.py) it refuses too, and every object the CRD
accepts there it accepts."""

from __future__ import annotations

import copy

import pytest

from autoscaler.core.fields import DocumentError
from autoscaler.core.spec_rules import check_autoscaler
from tests.controller import test_crd, test_crd_controls

REJECTED = [
    pytest.param(p.values[0], id=p.id) for p in [*test_crd.REJECTED, *test_crd_controls.REJECTED]
]
ACCEPTED = [
    pytest.param(p.values[0], id=p.id) for p in [*test_crd.ACCEPTED, *test_crd_controls.ACCEPTED]
]


@pytest.mark.parametrize("obj", REJECTED)
def test_what_the_crd_refuses_check_autoscaler_refuses(obj):
    with pytest.raises(DocumentError):
        check_autoscaler(copy.deepcopy(obj))


@pytest.mark.parametrize("obj", ACCEPTED)
def test_what_the_crd_accepts_check_autoscaler_accepts(obj):
    check_autoscaler(copy.deepcopy(obj))
