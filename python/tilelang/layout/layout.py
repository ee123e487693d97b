"""tilelang.layout.layout: T.Layout (host-side tables in host code; see _host_layout.py)."""
from ..language import Layout  # noqa: F401
