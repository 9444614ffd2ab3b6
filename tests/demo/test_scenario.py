import pytest

from demo.scenario import PHASES, Queue, duration, load_at
from demo.timeline import Sample, replica_path, summary_lines


@pytest.mark.parametrize(
    ("t", "phase", "web_rps", "arrivals"),
    [
        pytest.param(0, "idle", 4, 0, id="start-idle"),
        pytest.param(25, "ramp", 82, 12, id="ramp-midpoint"),
        pytest.param(55, "plateau", 160, 24, id="plateau"),
        pytest.param(75, "drop", 4, 0, id="drop"),
        pytest.param(110, "burst", 240, 36, id="burst"),
        pytest.param(10_000, "idle", 4, 0, id="after-the-end"),
    ],
)
def test_load_shape(t, phase, web_rps, arrivals):
    load = load_at(t)
    assert (load.phase, load.web_rps, load.arrivals) == (phase, web_rps, arrivals)


def test_speed_plays_the_shape_faster():
    assert load_at(25 / 3, speed=3) == load_at(25)
    assert duration() == sum(p.seconds for p in PHASES) == 150


def test_queue_grows_with_arrivals_and_drains_with_workers():
    queue = Queue()
    assert queue.step(arrivals=10, ready_workers=0, dt=2) == 20
    assert queue.step(arrivals=0, ready_workers=1, dt=2) == 8  # 6 items/s per worker
    assert queue.step(arrivals=0, ready_workers=4, dt=10) == 0, "never negative"


def test_replica_path_and_summary():
    assert replica_path([1, 1, 3, 3, 1, 0, 0]) == [1, 3, 1, 0]
    samples = [
        Sample(t, "idle", rps, 0, 0, web, web, worker, worker, "", "", "", "")
        for t, rps, web, worker in [(0, 4, 1, 1), (1, 100, 5, 0), (2, 4, 2, 3)]
    ]
    assert summary_lines(samples)[:2] == [
        "web replica path: 1 -> 5 -> 2",
        "worker replica path: 1 -> 0 -> 3",
    ]


def test_plain_view_prints_conditions_when_they_change(capsys):
    from demo.view import View

    def sample(t, web_conditions):
        return Sample(t, "idle", 4, 0, 0, 1, 1, 0, 0, "", "", web_conditions, "")

    view = View(plain=True)
    view.show(sample(0, "AbleToScale(ReadyForNewScale)"))
    view.show(sample(1, "AbleToScale(ReadyForNewScale)"))
    view.show(sample(2, "AbleToScale(SucceededRescale)"))
    lines = capsys.readouterr().out.splitlines()
    changes = [line.strip() for line in lines if "conditions:" in line]
    assert changes == [
        "web conditions: AbleToScale(ReadyForNewScale)",
        "web conditions: AbleToScale(SucceededRescale)",
    ]


@pytest.mark.parametrize(
    ("native", "web_kind", "web_path"),
    [
        pytest.param(True, "HorizontalPodAutoscaler", "/apis/autoscaling/v2/", id="native-hpa"),
        pytest.param(False, "Autoscaler", "/apis/promscaler.dev/v1alpha1/", id="no-native-hpa"),
    ],
)
def test_web_is_under_a_native_hpa_unless_asked_otherwise(native, web_kind, web_path):
    from demo.manifests import autoscalers

    (path, web), (worker_path, worker) = autoscalers(speed=1, native_web=native)
    assert (web["kind"], web["metadata"]["name"]) == (web_kind, "web")
    assert path.startswith(web_path)
    assert (worker["kind"], worker_path.split("/")[2]) == ("Autoscaler", "promscaler.dev")
    assert web["spec"]["metrics"][0]["pods"]["metric"]["name"] == "http_requests_per_second"
