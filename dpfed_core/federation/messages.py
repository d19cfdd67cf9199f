"""What crosses an entity's boundary: one :class:`Message` per protocol message, with its size.
The message log is what the dashboard shows a compliance officer."""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

SERVER = "server"


@dataclass(frozen=True)
class Message:
    """One message of the protocol: what crossed an entity's boundary, and its size.

    ``copies``: how many times it was sent — one per user when each of an entity's users sends or
    receives its own (a per-user download or upload); ``bytes`` is then the total of the copies."""

    round: int
    sender: str
    receiver: str
    content: str
    shape: tuple[int, ...]
    bytes: int
    copies: int = 1

    def to_dict(self) -> dict:
        d = asdict(self)
        d["shape"] = list(self.shape)
        return d


def array_message(round_: int, sender: str, receiver: str, content: str, arr: np.ndarray) -> Message:
    arr = np.asarray(arr)
    return Message(round_, sender, receiver, content, tuple(int(s) for s in arr.shape), int(arr.nbytes))
