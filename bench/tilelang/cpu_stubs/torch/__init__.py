# A stand-in torch for running TileLang 0.1.15's compiler on a machine without a GPU or torch
# (bench/tilelang/peer_source.py): the dtypes and types its import and tvm_ffi's argument
# conversion look at are real Python types; everything else is an inert placeholder.
import sys, types
__version__ = "2.9.0"
class Tensor: pass
class dtype:
    def __init__(self, n, bits=16): self.n = n; self.itemsize = bits // 8
    def __repr__(self): return "torch." + self.n
class device:
    def __init__(self, *a, **k): self.type = "cuda"; self.index = 0
class Size(tuple): pass
class Generator: pass
class Stream: pass
for _n, _b in [("float16",16),("bfloat16",16),("float32",32),("float64",64),("int8",8),("uint8",8),("int16",16),("int32",32),("int64",64),("bool",8),
               ("float8_e4m3fn",8),("float8_e5m2",8),("float8_e4m3fnuz",8),("float8_e5m2fnuz",8),("float8_e8m0fnu",8),("uint16",16),("uint32",32),("uint64",64),("complex64",64),("half",16),("float",32)]:
    globals()[_n] = dtype(_n, _b)
class _AnyMeta(type):
    def __getattr__(cls, k): return _Any(cls.__name__ + "." + k)
class _AnyBase(metaclass=_AnyMeta): pass  # base of classes derived from a placeholder (autograd.Function)
class _Any:
    def __init__(self, name="torch"): self._n = name
    def __getattr__(self, k): return _Any(self._n + "." + k)
    def __call__(self, *a, **k): return _Any(self._n + "()")
    def __iter__(self): return iter(())
    def __mro_entries__(self, bases): return (_AnyBase,)
    def __getitem__(self, k): return _Any()
    def __bool__(self): return False
    def __or__(self, o): return self
    __ror__ = __or__
class _cuda:
    @staticmethod
    def is_available(): return False
    @staticmethod
    def current_device(): return 0
    def __getattr__(self, k): return _Any("torch.cuda." + k)
def __getattr__(k):
    if k == "cuda": return _cuda()
    return _Any("torch." + k)
class _Finder:
    def find_spec(self, name, path=None, target=None):
        if name.startswith(("torch.", "einops", "triton", "flash_attn", "fla", "deep_ep", "matplotlib", "pandas", "scipy")):
            import importlib.machinery
            return importlib.machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        m = types.ModuleType(spec.name); m.__path__ = []; m.__getattr__ = lambda k: _Any(spec.name + "." + k); return m
    def exec_module(self, m): pass
sys.meta_path.append(_Finder())
