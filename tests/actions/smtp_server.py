"""A minimal SMTP server for tests: enough of RFC 5321 for smtplib, and ways to misbehave.

Modes (``server.mode``):
    ``accept``            answer 250 to the message.
    ``hang_after_data``   take the whole message (recorded), then never answer — a lost ack.
    ``close_after_data``  take the whole message (recorded), then drop the connection.
    ``hang_before_data``  never answer ``MAIL FROM`` — a timeout before anything was sent.
    ``reject_rcpt``       550 to every ``RCPT TO``.
    ``busy_rcpt``         451 to every ``RCPT TO``.
    ``reject_message``    554 after the message (nothing delivered).
"""

from __future__ import annotations

import socketserver
import threading
from email import message_from_bytes
from email.message import Message


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def reply(self, line: str) -> None:
        self.wfile.write(line.encode() + b"\r\n")
        self.wfile.flush()

    def handle(self) -> None:
        owner = self.server.owner
        self.reply("220 fake.test ESMTP")
        while True:
            raw = self.rfile.readline()
            if not raw:
                return
            verb = raw.decode(errors="replace").strip().split(" ", 1)[0].upper()
            if verb in ("EHLO", "HELO"):
                self.reply("250 fake.test")
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
    """Listens on 127.0.0.1 (a free port); ``messages`` holds every message received."""

    def __init__(self, mode: str = "accept") -> None:
        self.mode = mode
        self.messages: list[Message] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
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
