"""Logging into the host: lines land in cairn's `tracing` output, tagged
with the provider's name, filtered by `CAIRN_LOG`. Outside a component (unit
tests) lines go to standard error."""

import sys


def _send(level, message):
    try:
        from wit_world.imports import log as wire_log
    except ImportError:
        print(f"[{level}] {message}", file=sys.stderr)
        return
    wire_log.log(getattr(wire_log.Level, level.upper()), str(message))


def trace(message):
    """Log at trace level."""
    _send("trace", message)


def debug(message):
    """Log at debug level."""
    _send("debug", message)


def info(message):
    """Log at info level."""
    _send("info", message)


def warn(message):
    """Log at warn level."""
    _send("warn", message)


def error(message):
    """Log at error level."""
    _send("error", message)
