"""tvm_ffi: TileScale's stand-in for apache-tvm-ffi on machines without it (python/compat/README.md).

TileScale's DeepEP example wraps a kernel call in `tvm_ffi.use_torch_stream(torch.cuda.stream(s))`
so that TVM-FFI kernels launch on torch's stream `s`.  This project's kernels always launch on
torch's current stream, so the stand-in only enters the stream context it is given."""
import contextlib


@contextlib.contextmanager
def use_torch_stream(context=None):
    """Run the block with `context` (a torch.cuda.StreamContext, or None: the current stream)."""
    if context is None:
        yield
        return
    with context:
        yield


def __getattr__(name):
    raise AttributeError("tvm_ffi (TileScale's stand-in for apache-tvm-ffi, python/compat/tvm_ffi_shim) has no %r; "
                         "install apache-tvm-ffi for the full API" % name)
