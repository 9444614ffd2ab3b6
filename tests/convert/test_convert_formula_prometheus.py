"""The PromQL a scalingModifiers formula becomes, evaluated by a real Prometheus, gives what
expr-lang gives for the same values (computed here by hand, as KEDA would): arithmetic and
precedence, comparisons, && || !, ternaries, an empty trigger read as 0."""

from __future__ import annotations

import pytest

from autoscaler.convert.keda_formula import formula_promql
from tests.adapter.stack import series
from tests.support.prometheus import remote_write_sync

pytestmark = pytest.mark.prometheus

# a = 6, b = 2; c's query has no series (ignoreNullValues: an empty result is 0)
SCALARS = {
    "a": "scalar((sum(f_a)) or vector(0))",
    "b": "scalar((sum(f_b)) or vector(0))",
    "c": "scalar((sum(f_missing)) or vector(0))",
}
CASES = [
    ("(a + b) / 2", 4.0),
    ("a - b - 1", 3.0),
    ("a / b * 3", 9.0),
    ("-b ** 2", -4.0),  # unary minus binds looser than ** in expr-lang
    ("b ** 3 ** 2", 512.0),  # right-associative
    ("a + c", 6.0),
    ("a > 5 ? a : 0", 6.0),
    ("a > 7 ? a : b", 2.0),
    ("a > 5 && b > 5 ? 1 : 0", 0.0),
    ("a > 5 || b > 5 ? 1 : 0", 1.0),
    ("!(a > 5) ? 1 : 0", 0.0),
    ("c == 0 ? 10 : a", 10.0),
    ("a > 1 ? b > 1 ? 3 : 4 : 5", 3.0),
    ("a >= 6 and not (b != 2) ? 7 : 8", 7.0),
    ("1_000 * 1.5e-3", 1.5),
]


def test_formulas_evaluate_as_expr_lang_would(prometheus):
    remote_write_sync(prometheus.url, [series("f_a", {}, [6]), series("f_b", {}, [2])])
    for formula, want in CASES:
        promql = f"vector({formula_promql(formula, SCALARS, at='formula')})"
        (sample,) = prometheus.query(promql)
        assert float(sample["value"][1]) == pytest.approx(want), (formula, promql)
