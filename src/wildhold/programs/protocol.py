"""Frames between the world and the program runner: a 4-byte big-endian length, then one orjson object.

Binary values (a paused program's snapshot) travel base64-encoded. Both sides refuse a frame
larger than `MAX_FRAME`, so neither can be made to buffer without bound.
"""

from __future__ import annotations

import base64
import struct
from typing import Any, BinaryIO

import orjson

MAX_FRAME = 16 << 20
HEADER = struct.Struct(">I")


class FrameError(RuntimeError):
    """The channel broke: end of stream, an oversized frame, or bytes that are not a frame."""


def encode(message: dict[str, Any]) -> bytes:
    try:
        body = orjson.dumps(message)
    except orjson.JSONEncodeError as exc:
        raise FrameError(f"a value cannot travel in a frame: {exc}") from None
    if len(body) > MAX_FRAME:
        raise FrameError(f"frame of {len(body)} bytes is over the {MAX_FRAME}-byte limit")
    return HEADER.pack(len(body)) + body


def decode(body: bytes) -> dict[str, Any]:
    try:
        message = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise FrameError(f"not a JSON frame: {exc}") from None
    if not isinstance(message, dict):
        raise FrameError("a frame must hold a JSON object")
    return message


def frame_length(header: bytes) -> int:
    (length,) = HEADER.unpack(header)
    if length > MAX_FRAME:
        raise FrameError(f"frame of {length} bytes is over the {MAX_FRAME}-byte limit")
    return length


def read_frame(stream: BinaryIO) -> dict[str, Any] | None:
    """The next frame from a blocking stream, or None at a clean end of stream."""
    header = stream.read(HEADER.size)
    if not header:
        return None
    if len(header) < HEADER.size:
        raise FrameError("the stream ended inside a frame header")
    length = frame_length(header)
    body = stream.read(length)
    if len(body) < length:
        raise FrameError("the stream ended inside a frame")
    return decode(body)


def write_frame(stream: BinaryIO, message: dict[str, Any]) -> None:
    stream.write(encode(message))
    stream.flush()


def pack_bytes(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unpack_bytes(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)
