from kubeloop.runtime.expectations import (
    CREATE,
    DELETE,
    ControllerExpectations,
    ResourceVersionExpectations,
    ScaleExpectations,
    UIDTrackingControllerExpectations,
)


class StepClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def now(self) -> float:
        return self.t

    async def sleep(self, seconds: float) -> None:
        self.t += seconds

    def call_at(self, deadline: float, callback: object) -> object:
        raise AssertionError("not used")


def test_controller_expectations_lifecycle() -> None:
    clock = StepClock()
    exp = ControllerExpectations(clock)
    assert exp.satisfied("ns/rs")  # no record
    exp.expect_creations("ns/rs", 2)
    assert not exp.satisfied("ns/rs")
    exp.creation_observed("ns/rs")
    assert not exp.satisfied("ns/rs")
    exp.creation_observed("ns/rs")
    assert exp.satisfied("ns/rs")
    exp.expect_deletions("ns/rs", 1)
    assert not exp.satisfied("ns/rs")
    clock.t += 300
    assert not exp.satisfied("ns/rs")  # exactly the timeout: still pending
    clock.t += 0.001
    assert exp.satisfied("ns/rs")  # expired
    exp.delete_expectations("ns/rs")
    exp.lower("ns/rs", 1, 1)  # no record: nothing happens
    assert exp.get("ns/rs") is None


def test_raise_only_with_a_record() -> None:
    exp = ControllerExpectations(StepClock())
    exp.raise_expectations("k", 1, 0)
    assert exp.satisfied("k")
    exp.set_expectations("k", 0, 0)
    exp.raise_expectations("k", 1, 0)
    assert not exp.satisfied("k")


def test_uid_tracking_counts_each_deletion_once() -> None:
    exp = UIDTrackingControllerExpectations(StepClock())
    exp.expect_deletions_of("ns/rs", ["ns/p1", "ns/p2"])
    exp.deletion_observed_of("ns/rs", "ns/p1")
    exp.deletion_observed_of("ns/rs", "ns/p1")  # seen again (update then delete)
    exp.deletion_observed_of("ns/rs", "ns/other")
    assert not exp.satisfied("ns/rs")
    assert exp.expected_deletion_keys("ns/rs") == {"ns/p2"}
    exp.deletion_observed_of("ns/rs", "ns/p2")
    assert exp.satisfied("ns/rs")
    exp.delete_expectations("ns/rs")
    assert exp.expected_deletion_keys("ns/rs") == set()


def test_scale_expectations() -> None:
    clock = StepClock()
    exp = ScaleExpectations(clock)
    assert exp.satisfied("cs")[0]
    exp.expect("cs", CREATE, "cs-a")
    exp.expect("cs", DELETE, "cs-b")
    ok, waited, pending = exp.satisfied("cs")
    assert not ok and waited == 0 and pending == {CREATE: ["cs-a"], DELETE: ["cs-b"]}
    clock.t += 5
    assert exp.satisfied("cs")[1] == 5
    exp.observe("cs", CREATE, "cs-a")
    exp.observe("cs", DELETE, "cs-b")
    assert exp.satisfied("cs") == (True, 0.0, {})


def test_resource_version_expectations() -> None:
    exp = ResourceVersionExpectations()
    exp.expect("uid", "10")
    assert not exp.satisfied("uid", "9")
    assert exp.satisfied("uid", "10")
    exp.expect("uid", "12")
    assert exp.satisfied("uid", "x")  # unparsable clears it
    exp.expect("uid", "5")
    exp.delete("uid")
    assert exp.satisfied("uid", "1")
