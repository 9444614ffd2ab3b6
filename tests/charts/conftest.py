from __future__ import annotations

import pytest

from tests.charts.helm import Helm, find_helm


@pytest.fixture(scope="session")
def helm() -> Helm:
    binary = find_helm()
    if binary is None:
        pytest.skip(
            "helm is not installed: run `bash scripts/install-helm.sh .tools` (or `make helm`)"
        )
    return Helm(binary)
