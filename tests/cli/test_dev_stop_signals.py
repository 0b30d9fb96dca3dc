"""``almanac dev``'s stop signals: a second Ctrl-C exits at once, a repeated SIGTERM does not.

``make run`` stopped with ``kill -TERM -- -<group>`` receives SIGTERM twice (the group's, and the
one make passes on); that must still be the graceful stop, while a second Ctrl-C stays the way
to give up waiting.
"""

from __future__ import annotations

import signal

from almanac.cli.dev import StopRequests


def test_a_second_ctrl_c_forces_the_exit() -> None:
    requests = StopRequests()
    assert not requests.forced(signal.SIGINT)
    assert requests.forced(signal.SIGINT)


def test_a_repeated_sigterm_only_asks_again() -> None:
    requests = StopRequests()
    assert not requests.forced(signal.SIGTERM)
    assert not requests.forced(signal.SIGTERM)
    assert not requests.forced(signal.SIGTERM)


def test_ctrl_c_after_a_sigterm_forces_the_exit() -> None:
    requests = StopRequests()
    assert not requests.forced(signal.SIGTERM)
    assert requests.forced(signal.SIGINT)
