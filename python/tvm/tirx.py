"""tvm.tirx for CPython: IndexMap over plain ints (IndexMap.from_func(fn).map_indices([i, j]),
as TileLang's layout examples use it in host code).  Every other name is a placeholder: kernel
code that uses tvm.tirx is understood by the C compiler (src/front/prelude/tvm/tirx.py)."""


class IndexMap:
    """An index function evaluated on plain ints."""

    def __init__(self, fn):
        self.fn = fn

    @classmethod
    def from_func(cls, mapping_function, ndim=None, index_dtype=None, **kwargs):
        if not callable(mapping_function):
            raise TypeError("IndexMap.from_func: expected a function, got %r" % (mapping_function,))
        return cls(mapping_function)

    def map_indices(self, indices):
        out = self.fn(*indices)
        return list(out) if isinstance(out, (tuple, list)) else [out]


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    from tilelang.language import _Placeholder
    return _Placeholder("tvm.tirx." + name)
