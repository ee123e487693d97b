"""tilelang.layout for host code.  Inside kernels every name here is the compiler's
(`T.annotate_layout({A: tilelang.layout.make_swizzled_layout(A)})` is evaluated by the C front
end from the source).  Host code may call the bank-swizzle helpers on plain sizes, as TileLang's
plot_layout examples do: `make_full_bank_swizzled_layout(rows, cols, element_bits)` gives a
host-side Layout (_host_layout.py) to print or plot.  Other names are placeholders."""
from ..language import Fragment, Layout, _HostCallable  # noqa: F401 (tilelang.layout.Layout/Fragment)


def _swizzle(kind):
    def make(*args, **kwargs):
        from .. import _host_layout as hl
        if len(args) == 3 and not kwargs and all(isinstance(a, int) for a in args):
            return hl.bank_swizzled_layout(kind, *args)
        from ..language import kernel_only_error
        raise kernel_only_error("tilelang.layout.make_%s_bank_swizzled_layout on a buffer" % kind)
    return _HostCallable("tilelang.layout.make_%s_bank_swizzled_layout" % kind, make)


make_quarter_bank_swizzled_layout = _swizzle("quarter")
make_half_bank_swizzled_layout = _swizzle("half")
make_full_bank_swizzled_layout = _swizzle("full")


def __getattr__(name):
    from .. import _placeholder_attr
    return _placeholder_attr(__name__, name)
