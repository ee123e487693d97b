"""Only tilelang.cuda.intrinsics.sparse_layout is real here (the host helpers the gemm_sp
examples call from CPython); any other name of this package is a placeholder, as for the
TileLang submodules TileScale does not provide (tilelang/__init__.py)."""


def __getattr__(name):
    from tilelang import _placeholder_attr
    return _placeholder_attr(__name__, name)
