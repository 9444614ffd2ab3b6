from __future__ import annotations

from common.memo import remember


def test_a_full_memo_starts_afresh_with_the_new_entry():
    memo: dict[str, int] = {}
    for i in range(3):
        remember(memo, f"k{i}", i, limit=3)
    assert memo == {"k0": 0, "k1": 1, "k2": 2}
    remember(memo, "k3", 3, limit=3)
    assert memo == {"k3": 3}


def test_a_known_key_is_replaced_below_the_limit():
    memo = {"a": 1}
    remember(memo, "a", 2, limit=3)
    assert memo == {"a": 2}
