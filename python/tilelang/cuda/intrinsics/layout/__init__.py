"""tilelang.cuda.intrinsics.layout for CPython: the MMA fragment maps host code uses to build
T.Fragment objects (mma_layout.py) and get_mma_micro_size (utils.py).  Other names are
placeholders, as for the TileLang submodules TileScale does not provide."""


def __getattr__(name):
    from tilelang import _placeholder_attr
    return _placeholder_attr(__name__, name)
