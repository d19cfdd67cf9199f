"""Loopback doorbells of a local deployment: "look now" without data, so that idle polls can be rare.

Flower's SuperNodes and ServerApp *pull*: every idle poll is a TLS request that the one SuperLink
process answers through its HTTP stack (and, with node authentication, verifies a signature on).
Profiled on the 30-hospital clinic sample, the SuperLink process was busy all the time,
in its HTTP middleware, TLS and signature checks; with 30 nodes polling every ≤ 0.5 s and the
ServerApp pulling every ≤ 50 ms, idle polls were a steady ~80 requests a second on top of the
requests that carried messages. With doorbells the idle polls back off to 2 s (nodes) and 1 s
(ServerApp) without delaying a message.

A doorbell is a UDP socket on 127.0.0.1 (the port *number* of the TCP port the process already
serves, in the UDP space, so ``--port-range`` still says every port used). A datagram carries no
content (one byte, never read): it only ends the current idle wait, after which the process polls as
Flower would. The ServerApp rings every node after it pushes messages; a node rings the ServerApp
after it pushes a reply. A lost or refused datagram only means the usual poll happens later, so a
real multi-site deployment (no doorbells, stock ``flower-supernode``) runs the same protocol.
"""
from __future__ import annotations

import os
import select
import socket

#: Environment variable the launcher sets on the sites of a local deployment ("1": doorbells on).
ENV = "DPFED_DOORBELL"
HOST = "127.0.0.1"


def enabled() -> bool:
    return os.environ.get(ENV) == "1"


class Doorbell:
    """A bound UDP socket; :meth:`wait` returns True when rung within ``timeout`` seconds."""

    def __init__(self, port: int) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.sock.bind((HOST, int(port)))
        except OSError:
            self.sock.close()
            raise
        self.sock.setblocking(False)

    @classmethod
    def open(cls, port: int | None) -> "Doorbell | None":
        """The doorbell on ``port``, or None when doorbells are off or the port is taken (then the
        caller just polls)."""
        if not port or not enabled():
            return None
        try:
            return cls(port)
        except OSError:
            return None

    def wait(self, timeout: float) -> bool:
        ready, _, _ = select.select([self.sock], [], [], max(0.0, timeout))
        rang = bool(ready)
        while True:  # drain: several rings while busy are one "look now"
            try:
                self.sock.recv(16)
            except (BlockingIOError, InterruptedError):
                break
            except OSError:
                break
        return rang

    def close(self) -> None:
        self.sock.close()


def ring(ports) -> None:
    """Ring each doorbell on 127.0.0.1 (best effort: nothing listens → nothing happens)."""
    if not enabled():
        return
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for p in ports:
            try:
                s.sendto(b"!", (HOST, int(p)))
            except OSError:
                pass
