"""A small Kubernetes REST client for the demo (the demo acts as a user of the cluster)."""

from __future__ import annotations

import asyncio
import base64
import ssl
import time
from pathlib import Path
from typing import Any

import aiohttp
import yaml


class RestError(RuntimeError):
    """The API answered with an error, or did not reach the wanted state in time."""


class Rest:
    """Bearer-token JSON calls against one API server, verifying its CA."""

    def __init__(self, server: str, *, token: str, ca_pem: bytes) -> None:
        self.server = server.rstrip("/")
        context = ssl.create_default_context(cadata=ca_pem.decode())
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(ssl=context),
            headers={"Authorization": f"Bearer {token}", "Accept": "application/json"},
            timeout=aiohttp.ClientTimeout(total=10),
        )

    @classmethod
    def from_kubeconfig(cls, path: Path) -> Rest:
        config = yaml.safe_load(path.read_text())
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        return cls(
            cluster["server"],
            token=user["token"],
            ca_pem=base64.b64decode(cluster["certificate-authority-data"]),
        )

    async def close(self) -> None:
        await self._session.close()

    async def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        async with self._session.request(method, self.server + path, **kwargs) as resp:
            body: dict[str, Any] = await resp.json(content_type=None)
            if resp.status >= 400:
                raise RestError(f"{method} {path}: {resp.status} {body.get('message', body)}")
            return body

    async def get(self, path: str, *, params: dict[str, str] | None = None) -> dict[str, Any]:
        return await self._call("GET", path, params=params)

    async def create(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        return await self._call("POST", path, json=obj)

    async def wait_condition(self, path: str, condition: str, *, timeout: float) -> None:
        """Wait until the object's status condition `condition` is True."""
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            obj = await self.get(path)
            for cond in obj.get("status", {}).get("conditions") or []:
                if cond.get("type") == condition:
                    last = cond
                    if cond.get("status") == "True":
                        return
            await asyncio.sleep(0.2)
        raise RestError(f"{path}: {condition} not True within {timeout}s (last: {last})")
