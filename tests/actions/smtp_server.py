"""A minimal SMTP server for tests: enough of RFC 5321 for smtplib, and ways to misbehave.

Modes (``server.mode``):
    ``accept``            answer 250 to the message.
    ``hang_after_data``   take the whole message (recorded), then never answer — a lost ack.
    ``close_after_data``  take the whole message (recorded), then drop the connection.
    ``hang_before_data``  never answer ``MAIL FROM`` — a timeout before anything was sent.
    ``reject_rcpt``       550 to every ``RCPT TO``.
    ``busy_rcpt``         451 to every ``RCPT TO``.
    ``reject_message``    554 after the message (nothing delivered).

With ``tls`` (a server-side ``ssl.SSLContext``) it offers STARTTLS, or, with ``implicit_tls``,
speaks TLS from the first byte; it offers ``AUTH PLAIN`` and records each login in ``logins``.
"""

from __future__ import annotations

import base64
import socketserver
import ssl
import threading
from dataclasses import dataclass
from email import message_from_bytes
from email.message import Message
from pathlib import Path


@dataclass(frozen=True)
class ServerCertificate:
    """A self-signed certificate for 127.0.0.1 and localhost, and its key (PEM files)."""

    cert: Path
    key: Path


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def reply(self, line: str) -> None:
        self.wfile.write(line.encode() + b"\r\n")
        self.wfile.flush()

    def _wrap(self, context: ssl.SSLContext) -> None:
        self.connection = context.wrap_socket(self.connection, server_side=True)
        self.rfile = self.connection.makefile("rb")
        self.wfile = self.connection.makefile("wb")

    def handle(self) -> None:
        owner = self.server.owner
        try:
            if owner.tls is not None and owner.implicit_tls:
                self._wrap(owner.tls)
            self._converse(owner)
        except (ssl.SSLError, OSError):
            owner.tls_failures += 1

    def _converse(self, owner: FakeSmtpServer) -> None:
        self.reply("220 fake.test ESMTP")
        while True:
            raw = self.rfile.readline()
            if not raw:
                return
            text = raw.decode(errors="replace").strip()
            verb = text.split(" ", 1)[0].upper()
            if verb == "EHLO":
                if owner.tls is not None and not owner.implicit_tls:
                    self.reply("250-fake.test")
                    self.reply("250-STARTTLS")
                else:
                    self.reply("250-fake.test")
                self.reply("250 AUTH PLAIN")
            elif verb == "HELO":
                self.reply("250 fake.test")
            elif verb == "STARTTLS" and owner.tls is not None:
                self.reply("220 go ahead")
                self._wrap(owner.tls)
            elif verb == "AUTH":
                _, _, rest = text.partition(" ")
                _mechanism, _, initial = rest.partition(" ")
                _, user, password = base64.b64decode(initial).decode().split("\0")
                owner.logins.append((user, password))
                self.reply("235 2.7.0 authenticated")
            elif verb == "MAIL":
                if owner.mode == "hang_before_data":
                    owner.stopping.wait()
                    return
                self.reply("250 OK")
            elif verb == "RCPT":
                if owner.mode == "reject_rcpt":
                    self.reply("550 5.1.1 no such user")
                elif owner.mode == "busy_rcpt":
                    self.reply("451 4.3.0 try again later")
                else:
                    self.reply("250 OK")
            elif verb == "DATA":
                self.reply("354 end with <CRLF>.<CRLF>")
                lines: list[bytes] = []
                while (line := self.rfile.readline()) not in (b".\r\n", b""):
                    lines.append(line[1:] if line.startswith(b"..") else line)
                owner.record(b"".join(lines))
                if owner.mode == "hang_after_data":
                    owner.stopping.wait()
                    return
                if owner.mode == "close_after_data":
                    return
                if owner.mode == "reject_message":
                    self.reply("554 5.7.1 message refused")
                else:
                    self.reply("250 2.0.0 queued")
            elif verb in ("RSET", "NOOP"):
                self.reply("250 OK")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("502 command not implemented")


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    owner: FakeSmtpServer


class FakeSmtpServer:
    """Listens on ``host`` (127.0.0.1, a free port); ``messages`` holds every message received."""

    def __init__(
        self,
        mode: str = "accept",
        tls: ssl.SSLContext | None = None,
        implicit_tls: bool = False,
        host: str = "127.0.0.1",
    ) -> None:
        self.mode = mode
        self.tls = tls
        self.implicit_tls = implicit_tls
        self.logins: list[tuple[str, str]] = []
        self.tls_failures = 0
        self.messages: list[Message] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server = _Server((host, 0), _Handler)
        self._server.owner = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    def record(self, data: bytes) -> None:
        with self._lock:
            self.messages.append(message_from_bytes(data))

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)
