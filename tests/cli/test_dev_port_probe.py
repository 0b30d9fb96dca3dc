"""``almanac dev``'s port probe: a port left in TIME_WAIT by a crash is free; a listener is not.

After a SIGKILL the crashed process's connections linger in TIME_WAIT on its ports for a minute
or two while nothing listens. The services bind with ``SO_REUSEADDR`` and could start at once, so
the probe must not refuse those ports (issue 15: ``almanac dev`` refused to start for ~90 s).
"""

from __future__ import annotations

import errno
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

from almanac.stack.dev import DevError, check_ports

SERVER = textwrap.dedent(
    """
    import socket, sys, time
    listener = socket.socket()
    # As the services do (Go's listeners, Python's HTTPServer): Linux lets a SO_REUSEADDR bind
    # share a port with TIME_WAIT sockets only if those sockets had SO_REUSEADDR too.
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    print(listener.getsockname()[1], flush=True)
    connection, _ = listener.accept()
    connection.sendall(b"ready")
    time.sleep(600)
    """
)


def _port_in_time_wait() -> int:
    """A port whose service was SIGKILLed with a connection open: TIME_WAIT, no listener."""
    server = subprocess.Popen([sys.executable, "-c", SERVER], stdout=subprocess.PIPE)
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline())
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            assert client.recv(5) == b"ready"
            server.send_signal(signal.SIGKILL)
            server.wait(timeout=10)
            # The kernel closed the killed side first (its FIN is here): that side, on `port`,
            # goes to TIME_WAIT once this side closes too.
            client.settimeout(10)
            assert client.recv(1) == b""
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    return port


def test_a_port_in_time_wait_after_a_sigkill_is_free_for_an_immediate_restart() -> None:
    port = _port_in_time_wait()
    # The precondition the old probe tripped on: a plain bind is refused (TIME_WAIT).
    with socket.socket() as plain, pytest.raises(OSError) as refused:
        plain.bind(("127.0.0.1", port))
    assert refused.value.errno == errno.EADDRINUSE
    check_ports({"Almanac sink": port})  # no DevError: the restart goes ahead at once


def test_a_port_something_listens_on_is_still_reported_in_use() -> None:
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(DevError, match=f"port {port} \\(Almanac sink\\) is in use"):
            check_ports({"Almanac sink": port})


def test_every_port_in_use_is_named_in_one_message() -> None:
    with socket.socket() as one, socket.socket() as two:
        for listener in (one, two):
            listener.bind(("127.0.0.1", 0))
            listener.listen()
        ports = {"Temporal frontend": one.getsockname()[1], "Almanac sink": two.getsockname()[1]}
        with pytest.raises(DevError) as caught:
            check_ports(ports)
    message = str(caught.value)
    assert f"{ports['Temporal frontend']} (Temporal frontend)" in message
    assert f"{ports['Almanac sink']} (Almanac sink) are in use" in message


def test_a_port_a_wildcard_listener_holds_is_reported_in_use() -> None:
    with socket.socket() as listener:
        listener.bind(("0.0.0.0", 0))
        listener.listen()
        port = listener.getsockname()[1]
        with pytest.raises(DevError, match="is in use"):
            check_ports({"Temporal frontend": port})


def test_an_address_this_machine_does_not_have_is_bad_input_not_a_busy_port() -> None:
    # 192.0.2.1 is TEST-NET-1 (RFC 5737): never assigned to a host, so binding it fails with
    # EADDRNOTAVAIL (the trial saw "port … is in use" for such a --host).
    with pytest.raises(
        DevError, match=r"--host='192\.0\.2\.1': not an address of this machine"
    ) as e:
        check_ports({"Temporal frontend": 7233}, "192.0.2.1")
    assert e.value.exit_code == 2
