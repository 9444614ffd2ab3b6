"""The test stack itself: a real Prometheus, fed by our remote-write helper, answers exactly."""

import time

import pytest

from tests.support.prometheus import (
    PrometheusServer,
    encode_write_request,
    remote_write,
    snappy_literal,
)


def test_snappy_literal_framing_carries_length_and_data():
    data = bytes(range(256)) * 300  # > 65536 bytes: several literal chunks
    block = snappy_literal(data)
    # preamble: varint of the uncompressed length
    assert block[:3] == bytes([0x80, 0xD8, 0x04])  # 76800
    assert len(block) > len(data)
    assert block[3] == 61 << 2  # first chunk: 2-byte length tag


def test_write_request_sorts_labels():
    body = encode_write_request([({"z": "1", "__name__": "m"}, [(1.0, 2.0)])])
    assert body.index(b"__name__") < body.index(b"z")


async def test_remote_write_then_query_exact_value(prometheus: PrometheusServer):
    now = time.time()
    labels = {"__name__": "queue_depth", "queue": "orders", "namespace": "default"}
    await remote_write(prometheus.url, [(labels, [(now - 10, 41.0), (now - 5, 42.5)])])
    result = prometheus.query('queue_depth{queue="orders"}', at=now)
    assert len(result) == 1
    assert result[0]["metric"] == labels
    assert float(result[0]["value"][1]) == 42.5
    assert 'queue_depth{queue="orders"}' in prometheus.queries()


async def test_rate_over_pushed_counter_is_exact(prometheus: PrometheusServer):
    start = int(time.time()) - 120
    samples = [(start + i * 15, float(i * 150)) for i in range(8)]  # +10/s
    await remote_write(prometheus.url, [({"__name__": "reqs_total", "pod": "a"}, samples)])
    result = prometheus.query("rate(reqs_total[1m])", at=start + 105)
    assert float(result[0]["value"][1]) == pytest.approx(10.0)


def test_stop_and_start_keep_data_and_port(prometheus: PrometheusServer):
    url = prometheus.url
    prometheus.stop()
    assert not prometheus.running
    prometheus.start()
    assert prometheus.url == url
    assert prometheus.running
