"""A real Prometheus server for the demo and the tests, and a remote-write client.

`PrometheusServer` runs the Debian `prometheus` binary on a free loopback port with a temporary
data dir and a query log (every PromQL query it answers is logged: a black-box record of what a
client sent). `remote_write` pushes samples with the remote-write protocol: a protobuf
`WriteRequest`, encoded here by hand, compressed with snappy's literal-only framing (a valid
snappy block that needs no compression library).
"""

from __future__ import annotations

import contextlib
import json
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path

import aiohttp

Series = tuple[Mapping[str, str], Sequence[tuple[float, float]]]  # labels, [(unix_s, value)]

__all__ = [
    "PrometheusServer",
    "Series",
    "encode_write_request",
    "free_port",
    "remote_write",
    "remote_write_sync",
    "snappy_literal",
]


def free_port() -> int:
    """A port that was free on 127.0.0.1 a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


# ---- protobuf and snappy, just enough for remote write ----------------------------------


def _varint(value: int) -> bytes:
    out = bytearray()
    value &= (1 << 64) - 1  # negative int64 values are sent as 10-byte two's complement
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def encode_write_request(series: Sequence[Series]) -> bytes:
    """`prometheus.WriteRequest{timeseries: [{labels, samples}]}` as protobuf bytes."""
    out = bytearray()
    for labels, samples in series:
        ts = bytearray()
        for name in sorted(labels):  # Prometheus expects labels sorted by name
            label = _field(1, name.encode()) + _field(2, labels[name].encode())
            ts += _field(1, label)
        for at, value in samples:
            sample = b"\x09" + struct.pack("<d", value)  # field 1, fixed64 double
            sample += b"\x10" + _varint(round(at * 1000))  # field 2, varint ms timestamp
            ts += _field(2, sample)
        out += _field(1, bytes(ts))
    return bytes(out)


def snappy_literal(data: bytes) -> bytes:
    """A snappy block made only of literals: valid snappy, no compression."""
    out = bytearray(_varint(len(data)))
    for start in range(0, len(data), 65536):
        chunk = data[start : start + 65536]
        n = len(chunk) - 1
        if n < 60:
            out.append(n << 2)
        elif n < 256:
            out += bytes([60 << 2, n])
        else:
            out += bytes([61 << 2]) + n.to_bytes(2, "little")
        out += chunk
    return bytes(out)


_WRITE_HEADERS = {
    "Content-Encoding": "snappy",
    "Content-Type": "application/x-protobuf",
    "X-Prometheus-Remote-Write-Version": "0.1.0",
}


async def remote_write(url: str, series: Sequence[Series]) -> None:
    """Push samples to Prometheus at `url` (its base URL); raises on any non-2xx answer."""
    body = snappy_literal(encode_write_request(series))
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"{url}/api/v1/write", data=body, headers=_WRITE_HEADERS) as resp,
    ):
        if resp.status // 100 != 2:
            raise RuntimeError(f"remote write failed: {resp.status} {await resp.text()}")


def remote_write_sync(url: str, series: Sequence[Series]) -> None:
    """`remote_write` for synchronous code (fixtures, scripts)."""
    body = snappy_literal(encode_write_request(series))
    request = urllib.request.Request(
        f"{url}/api/v1/write", data=body, headers=_WRITE_HEADERS, method="POST"
    )
    with urllib.request.urlopen(request, timeout=10) as resp:
        if resp.status // 100 != 2:
            raise RuntimeError(f"remote write failed: {resp.status}")


# ---- the server --------------------------------------------------------------------------


class PrometheusServer:
    """One real Prometheus process. `stop()` and `start()` again keep its port and data."""

    def __init__(
        self, workdir: Path | None = None, *, port: int | None = None, out_of_order_window: str = ""
    ) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            raise RuntimeError("prometheus is not on PATH (make install puts it there)")
        self.binary = binary
        self._own_dir = workdir is None
        self.dir = Path(tempfile.mkdtemp(prefix="promscaler-prom-")) if workdir is None else workdir
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.query_log_path = self.dir / "queries.log"
        self.config_path = self.dir / "prometheus.yml"
        self.config_path.write_text(
            "global:\n"
            f"  query_log_file: {self.query_log_path}\n"
            "  scrape_interval: 1s\n"
            "  evaluation_interval: 1s\n"
        )
        if out_of_order_window:  # accept remote-written samples this old (history backfills)
            with self.config_path.open("a") as config:
                config.write(
                    f"storage:\n  tsdb:\n    out_of_order_time_window: {out_of_order_window}\n"
                )
        self._process: subprocess.Popen[bytes] | None = None

    def start(self, *, timeout: float = 20.0) -> None:
        if self.running:
            return
        log = (self.dir / "prometheus.out").open("ab")
        self._process = subprocess.Popen(
            [
                self.binary,
                f"--config.file={self.config_path}",
                f"--storage.tsdb.path={self.dir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--web.enable-remote-write-receiver",
                "--web.enable-lifecycle",
                "--log.level=warn",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
        )
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                output = (self.dir / "prometheus.out").read_text(errors="replace")[-2000:]
                raise RuntimeError(f"prometheus exited with {self._process.returncode}: {output}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"{self.url}/-/ready", timeout=1) as resp,
            ):
                if resp.status == 200:
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"prometheus did not become ready within {timeout}s")

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int | None:
        """The process id while running (tests SIGSTOP it to make a hung server)."""
        return self._process.pid if self.running and self._process is not None else None

    def signal(self, sig: int) -> None:
        """Send the running process a signal (SIGSTOP, then SIGCONT: a Prometheus that hangs).

        `kill(2)` returns before the stop takes effect: a thread that is running on another CPU
        may still answer a request sent right after it. With SIGSTOP this returns only once
        every thread of the process is stopped, so "hung" is what the caller gets."""
        if self._process is not None and self._process.poll() is None:
            self._process.send_signal(sig)
            if sig == signal.SIGSTOP:
                wait_stopped(self._process.pid)

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL); data and port are kept for `start()`."""
        if self._process is None:
            return
        if self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._process = None

    def close(self) -> None:
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    def queries(self) -> list[str]:
        """Every PromQL expression this server answered, oldest first (from its query log)."""
        if not self.query_log_path.exists():
            return []
        out = []
        for line in self.query_log_path.read_text().splitlines():
            with contextlib.suppress(ValueError, KeyError):
                out.append(json.loads(line)["params"]["query"])
        return out

    def query(self, promql: str, *, at: float | None = None) -> list[dict[str, object]]:
        """An instant query, synchronously (for assertions); returns the result vector."""
        params = {"query": promql} | ({"time": f"{at:.3f}"} if at is not None else {})
        url = f"{self.url}/api/v1/query?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=10) as resp:
            payload = json.load(resp)
        result: list[dict[str, object]] = payload["data"]["result"]
        return result

    def __enter__(self) -> PrometheusServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def wait_stopped(pid: int, timeout: float = 5.0) -> None:
    """Wait until every thread of `pid` is in the stopped state (`T` in /proc/PID/task/*/stat);
    where /proc is not there (not Linux), a short sleep stands in."""
    tasks = Path(f"/proc/{pid}/task")
    if not tasks.is_dir():
        time.sleep(0.1)
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = []
        for task in tasks.iterdir():
            try:
                stat = (task / "stat").read_text()
            except OSError:
                continue  # the thread ended meanwhile
            states.append(stat.rsplit(")", 1)[1].split()[0])
        if states and all(state in ("T", "t") for state in states):
            return
        time.sleep(0.005)
    raise RuntimeError(f"process {pid} did not stop within {timeout}s of SIGSTOP")
