"""tilelang.tools.cuda.iket: markers of the IKET kernel profiler (timeline ranges, instant
markers, runtime payloads), which only record events into a trace beside the kernel's own
work and never change what it computes.  Here they compile to nothing: the kernel's results
are the same, and no trace is recorded (use TileLang with the IKET package to collect one).
The session / event_table API is host code around the compile and is not provided."""
from contextlib import nullcontext


def range(name, *args, **kwargs):
    return nullcontext()


def mark(name, *args, **kwargs):
    return None


def payload(value, dtype=None):
    return None
