""" "Temporal unreachable" points to `make run` only where that is the fix: nothing listening on
this machine (a refused connection to a loopback address), not a TLS mismatch or a remote host."""

from __future__ import annotations

import pytest

from almanac.schedule_reader import _local_hint

HINT = "; is the dev stack running? Start it with `make run`"
REFUSED = "Connection refused (os error 111)"
TLS_ON_PLAIN = "Server connection error: InvalidMessage(InvalidContentType)"


@pytest.mark.parametrize(
    ("address", "problem", "hint"),
    [
        ("localhost:7233", REFUSED, HINT),
        ("127.0.0.1:7233", REFUSED, HINT),
        ("[::1]:7233", REFUSED, HINT),
        ("localhost:7233", TLS_ON_PLAIN, ""),  # something listens: starting a stack is no fix
        ("temporal.example.com:7233", REFUSED, ""),  # not this machine's dev stack
        ("10.0.0.5:7233", REFUSED, ""),
    ],
)
def test_the_make_run_hint_only_for_a_refused_local_address(
    address: str, problem: str, hint: str
) -> None:
    assert _local_hint(address, problem) == hint
