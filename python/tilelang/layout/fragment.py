"""tilelang.layout.fragment: T.Fragment (host-side tables in host code; see _host_layout.py)."""
from ..language import Fragment  # noqa: F401
