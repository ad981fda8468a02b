"""A mailbox for the stack: a small SMTP server on the loopback that keeps every message.

The stack's worker sends through Django's SMTP backend (EMAIL_HOST set, no TLS) to this
server, so a test reads what participants would find in their mailboxes. It speaks just
enough SMTP for that client: HELO/EHLO, MAIL, RCPT, DATA, RSET, NOOP, QUIT.
"""

from __future__ import annotations

import email
import socketserver
import threading
import time
from email.message import Message


class _Handler(socketserver.StreamRequestHandler):
    def reply(self, line: str) -> None:
        self.wfile.write(line.encode() + b"\r\n")

    def handle(self) -> None:
        box: Mailbox = self.server.mailbox
        self.reply("220 mailbox ready")
        recipients: list[str] = []
        while line := self.rfile.readline():
            command = line.decode("ascii", "replace").strip()
            verb = command[:4].upper()
            if verb in ("HELO", "EHLO"):
                self.reply("250 mailbox")
            elif verb == "MAIL":
                recipients = []
                self.reply("250 OK")
            elif verb == "RCPT":
                recipients.append(command.split(":", 1)[1].strip().strip("<>"))
                self.reply("250 OK")
            elif verb == "DATA":
                self.reply("354 end with <CRLF>.<CRLF>")
                lines = []
                while (data := self.rfile.readline()) not in (b".\r\n", b".\n", b""):
                    lines.append(data[1:] if data.startswith(b"..") else data)
                box.deliver(recipients, email.message_from_bytes(b"".join(lines)))
                self.reply("250 OK queued")
            elif verb in ("RSET", "NOOP"):
                self.reply("250 OK")
            elif verb == "QUIT":
                self.reply("221 bye")
                return
            else:
                self.reply("502 not implemented")


class Mailbox:
    """Start it, give the stack ``env``, read ``messages`` (recipients, message)."""

    def __init__(self):
        self.messages: list[tuple[list[str], Message]] = []
        self._lock = threading.Lock()
        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.mailbox = self
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def env(self) -> dict[str, str]:
        return {"EMAIL_HOST": "127.0.0.1", "EMAIL_PORT": str(self.port), "EMAIL_USE_TLS": "0"}

    def deliver(self, recipients: list[str], message: Message) -> None:
        with self._lock:
            self.messages.append((recipients, message))

    def to(self, address: str) -> list[Message]:
        with self._lock:
            return [message for recipients, message in self.messages if address in recipients]

    def wait_for(self, address: str, subject_part: str, *, timeout: float = 60) -> Message:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for message in self.to(address):
                if subject_part in message["Subject"]:
                    return message
            time.sleep(0.2)
        raise AssertionError(f"no e-mail to {address} about {subject_part!r} in {timeout} s")
