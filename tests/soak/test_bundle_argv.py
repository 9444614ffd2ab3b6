"""The soak's command lines parse as the programs read them, whatever the random values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from sandbox.__main__ import _parser
from soak.bundle import Bundle


class _Stop(Exception):
    pass


@pytest.mark.parametrize("token", ["-Xk2a", "--a", "plain"])
async def test_an_admin_token_starting_with_a_dash_reaches_the_sandbox(
    tmp_path: Path, token: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """token_urlsafe starts one token in 64 with "-": as a separate argument argparse took it
    for a flag, and the soak's sandbox exited at start."""
    bundle = Bundle(tmp_path, stack=None, proxy_url="", timing=None, admin_token=token)  # type: ignore[arg-type]

    async def launch(*_: Any) -> None:
        raise _Stop

    monkeypatch.setattr(bundle, "_launch", launch)
    with pytest.raises(_Stop):
        await bundle.start_sandbox()
    argv = bundle.commands["sandbox"]
    assert argv[:3] == ["-m", "sandbox", "serve"]
    assert _parser().parse_args(argv[2:]).admin_token == token
