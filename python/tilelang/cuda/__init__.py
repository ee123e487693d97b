"""Only tilelang.cuda.intrinsics.sparse_layout is real here (the host helpers the gemm_sp
examples call from CPython); any other name of this package is a placeholder, as for the
TileLang submodules TileScale does not provide (tilelang/__init__.py)."""


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    from tilelang.language import _Placeholder
    return _Placeholder("%s.%s" % (__name__, name))
