"""Reading from the controlling terminal only: a passphrase, a reviewer's answer.

A warrant key's passphrase must come from a person at a terminal, never from an argument, the
environment, a file or a pipe, so an agent running as the same user cannot use the key
unattended. :func:`ask` opens ``/dev/tty`` itself (the process's controlling terminal; standard
input is never read) and refuses in one line when there is none.
"""

from __future__ import annotations

import contextlib
import os
import termios
from collections.abc import Iterator

from .errors import UsageError

__all__ = ["TERMINAL", "NoTerminal", "ask"]

TERMINAL = "/dev/tty"
"""The controlling terminal of the process."""

_MAX_ANSWER = 4096


class NoTerminal(UsageError):
    """There is no controlling terminal to ask a person (exit status 2)."""


@contextlib.contextmanager
def _terminal() -> Iterator[int]:
    try:
        fd = os.open(TERMINAL, os.O_RDWR | os.O_NOCTTY)
    except OSError as exc:
        raise NoTerminal(
            "no terminal to ask the passphrase or answer on: this needs a person at a terminal "
            "(it is never read from an argument, the environment, a file or standard input)"
        ) from exc
    try:
        yield fd
    finally:
        os.close(fd)


def _read_line(fd: int) -> str:
    data = bytearray()
    while len(data) < _MAX_ANSWER:
        chunk = os.read(fd, 1)
        if not chunk or chunk in (b"\n", b"\r"):
            break
        data += chunk
    return data.decode("utf-8", errors="replace")


def ask(prompt: str, *, secret: bool) -> str:
    """Ask ``prompt`` on the controlling terminal and return the line typed (without echo when
    ``secret``: echo is off before the prompt shows, so nothing typed after it is ever echoed).
    Raises :class:`NoTerminal` when the process has no controlling terminal."""
    with _terminal() as fd:
        if not secret:
            os.write(fd, prompt.encode("utf-8"))
            return _read_line(fd)
        try:
            before = termios.tcgetattr(fd)
        except termios.error as exc:
            raise NoTerminal(f"{TERMINAL} is not a terminal: the passphrase is read from a person only") from exc
        quiet = list(before)
        quiet[3] &= ~termios.ECHO
        termios.tcsetattr(fd, termios.TCSAFLUSH, quiet)  # what was typed before the prompt is dropped
        try:
            os.write(fd, prompt.encode("utf-8"))
            return _read_line(fd)
        finally:
            termios.tcsetattr(fd, termios.TCSADRAIN, before)
            os.write(fd, b"\n")
