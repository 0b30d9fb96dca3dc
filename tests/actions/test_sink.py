"""The sink (``almanac sink``) over real HTTP: one effect per Idempotency-Key, result queries,
fault injection, persistence in its SQLite file, and the command's graceful stop."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from almanac.stack.sink import Sink

CLIENT = httpx.Client()


def post(sink: Sink, key: str | None, body: object = None, timeout: float = 5.0) -> httpx.Response:
    headers = {"Idempotency-Key": key} if key is not None else {}
    return CLIENT.post(
        f"{sink.url}/effects",
        json=body if body is not None else {"n": 1},
        headers=headers,
        timeout=timeout,
    )


def test_first_delivery_records_and_repeat_returns_first_result(sink: Sink) -> None:
    first = post(sink, "k1", {"n": 1})
    again = post(sink, "k1", {"n": 2})

    assert first.status_code == 201
    assert again.status_code == 200
    assert again.json() == first.json()
    assert first.json()["idempotencyKey"] == "k1"
    assert first.json()["receivedCount"] == 1
    [effect] = sink.effects()
    assert effect.body == {"n": 1}  # the repeat's body was not recorded
    assert effect.delivery_count == 2


def test_missing_or_blank_key_is_400_and_records_nothing(sink: Sink) -> None:
    assert post(sink, None).status_code == 400
    assert post(sink, "").status_code == 400
    assert sink.effects() == []


def test_body_must_be_a_json_object(sink: Sink) -> None:
    bad_json = httpx.post(
        f"{sink.url}/effects", content=b"{not json", headers={"Idempotency-Key": "k"}
    )
    a_list = post(sink, "k", [1, 2])
    assert (bad_json.status_code, a_list.status_code) == (400, 400)
    assert sink.effects() == []


def test_result_query_finds_recorded_effect_or_answers_404(sink: Sink) -> None:
    created = post(sink, "daily.r7.20261101T013000.f0").json()

    found = httpx.get(f"{sink.url}/effects/daily.r7.20261101T013000.f0")
    missing = httpx.get(f"{sink.url}/effects/daily.r7.20261102T013000.f0")

    assert found.status_code == 200
    assert found.json()["effectId"] == created["effectId"]
    assert found.json()["deliveryCount"] == 1
    assert missing.status_code == 404


def test_list_shows_effects_in_order_with_delivery_counts(sink: Sink) -> None:
    for key in ["a", "b", "a", "a"]:
        post(sink, key)
    listed = httpx.get(f"{sink.url}/effects").json()["effects"]
    assert [(e["idempotencyKey"], e["deliveryCount"]) for e in listed] == [("a", 3), ("b", 1)]


def test_concurrent_deliveries_of_one_key_make_one_effect(sink: Sink) -> None:
    with ThreadPoolExecutor(max_workers=16) as pool:
        responses = list(pool.map(lambda _: post(sink, "same"), range(100)))
    assert sorted(r.status_code for r in responses) == [200] * 99 + [201]
    assert len({r.json()["effectId"] for r in responses}) == 1
    [effect] = sink.effects()
    assert effect.delivery_count == 100


def test_fault_fails_matching_keys_n_times_per_key_then_records(sink: Sink) -> None:
    created = httpx.post(f"{sink.url}/faults", json={"match": "flaky", "failTimes": 2})
    assert created.status_code == 201

    statuses_a = [post(sink, "flaky-a").status_code for _ in range(3)]
    statuses_b = [post(sink, "flaky-b").status_code for _ in range(3)]
    other = post(sink, "steady").status_code

    assert statuses_a == statuses_b == [500, 500, 201]
    assert other == 201
    assert [e.delivery_count for e in sink.effects()] == [1, 1, 1]  # failures were not deliveries


def test_delay_fault_records_before_the_late_answer(sink: Sink) -> None:
    sink.add_fault(match="slow", delay=30)
    with pytest.raises(httpx.ReadTimeout):
        post(sink, "slow-1", timeout=0.3)
    effect = sink.effect("slow-1")
    assert effect is not None and effect.delivery_count == 1


def test_faults_can_be_listed_and_cleared(sink: Sink) -> None:
    httpx.post(f"{sink.url}/faults", json={"failTimes": 1, "status": 503})
    assert httpx.get(f"{sink.url}/faults").json()["faults"][0]["status"] == 503
    assert httpx.delete(f"{sink.url}/faults").status_code == 200
    assert httpx.get(f"{sink.url}/faults").json() == {"faults": []}
    assert post(sink, "k").status_code == 201


def test_invalid_fault_is_400(sink: Sink) -> None:
    response = httpx.post(f"{sink.url}/faults", json={"failTimes": -1, "colour": "red"})
    assert response.status_code == 400
    assert "failTimes" in response.text and "colour" in response.text


def test_healthz(sink: Sink) -> None:
    assert httpx.get(f"{sink.url}/healthz").json() == {"ok": True}


def test_sqlite_file_keeps_effects_across_restarts(tmp_path: Path) -> None:
    db = tmp_path / "sink.sqlite3"
    with Sink(db=db) as first:
        created = post(first, "k").json()
    with Sink(db=db) as second:
        again = post(second, "k")
        assert again.status_code == 200
        assert again.json() == created
        assert [e.delivery_count for e in second.effects()] == [2]


def test_command_serves_until_sigterm_and_exits_zero(tmp_path: Path) -> None:
    almanac = Path(sys.executable).parent / "almanac"
    process = subprocess.Popen(
        [str(almanac), "sink", "--port", "0", "--db", str(tmp_path / "s.sqlite3")],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()  # the banner comes first; readline returns at EOF too
        match = re.search(r"http://[\d.]+:\d+", line)
        assert match, line
        url = match.group(0)
        assert httpx.get(f"{url}/healthz").status_code == 200
        assert (
            httpx.post(f"{url}/effects", json={}, headers={"Idempotency-Key": "k"}).status_code
            == 201
        )
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
        assert time.monotonic() - started < 10
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_strict_sink_answers_422_to_another_payload_and_keeps_the_first(
    strict_sink: Sink,
) -> None:
    first = post(strict_sink, "k1", {"n": 1})
    changed = post(strict_sink, "k1", {"n": 2})
    same = post(strict_sink, "k1", {"n": 1})

    assert (first.status_code, changed.status_code, same.status_code) == (201, 422, 200)
    assert same.json() == first.json()
    [effect] = strict_sink.effects()
    assert (effect.body, effect.delivery_count, effect.refused_count) == ({"n": 1}, 2, 1)


def _repeat_while_the_first_is_answered(sink: Sink, body: dict[str, int]) -> httpx.Response:
    """POST key ``k1`` (held 2 s after recording), and ``body`` again while it is held."""
    sink.add_fault(match="k1", delay=2, delayTimes=1)
    with ThreadPoolExecutor(1) as pool:
        first = pool.submit(post, sink, "k1", {"n": 1})
        deadline = time.monotonic() + 10
        while sink.effect("k1") is None and time.monotonic() < deadline:
            time.sleep(0.01)
        repeat = post(sink, "k1", body)
        assert first.result().status_code == 201
    return repeat


def test_strict_sink_answers_409_while_the_first_request_is_answered(strict_sink: Sink) -> None:
    in_flight = _repeat_while_the_first_is_answered(strict_sink, {"n": 1})
    after = post(strict_sink, "k1", {"n": 1})

    assert (in_flight.status_code, after.status_code) == (409, 200)
    [effect] = strict_sink.effects()
    assert (effect.delivery_count, effect.refused_count) == (2, 1)


def test_lenient_sink_answers_every_repeat_with_the_first_result(sink: Sink) -> None:
    in_flight = _repeat_while_the_first_is_answered(sink, {"n": 2})

    assert in_flight.status_code == 200
    [effect] = sink.effects()
    assert (effect.delivery_count, effect.refused_count) == (2, 0)
