"""ctypes declarations mirroring include/tilescale.h (keep in step with it).

The shared library is found as _locate.py says ($TILESCALE_LIB, the wheel's copy, the source
checkout's build/, the loader's path); `fastcall` is the C call path's extension module, or None
when it is missing or $TILESCALE_FASTCALL is 0 (the packages then take their Python call path)."""
import ctypes
import os
from ctypes import (POINTER, Structure, c_char_p, c_double, c_int, c_int64, c_size_t,
                    c_void_p)

from . import _locate

# ---- enums ---------------------------------------------------------------------------------
STATUS_NAMES = [
    "TS_OK", "TS_ERR_INVALID_ARGUMENT", "TS_ERR_IO", "TS_ERR_COMPILE", "TS_ERR_NOT_FOUND",
    "TS_ERR_JIT", "TS_ERR_NO_DRIVER", "TS_ERR_CUDA", "TS_ERR_LAUNCH_ARGUMENT",
    "TS_ERR_UNSUPPORTED", "TS_ERR_OUT_OF_MEMORY", "TS_ERR_INTERNAL",
]
TS_OK = 0

# ts_dtype, in enum order; the names are ts_dtype_name's.
DTYPE_NAMES = [
    "void", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "float8_e4m3", "float8_e5m2",
    "int4", "uint4", "float4_e2m1fn", "handle",
]
DTYPE_IDS = {name: i for i, name in enumerate(DTYPE_NAMES)}

TS_EMIT_IR, TS_EMIT_CUDA, TS_EMIT_PTX, TS_EMIT_CUBIN, TS_EMIT_STATS = 0, 1, 2, 3, 4
TS_COMPILER_NVRTC, TS_COMPILER_NVCC = 0, 1
TS_ARG_TENSOR, TS_ARG_SCALAR = 0, 1
MAX_DIMS = 8  # ts_arg_info.shape[8]


# ---- structs -------------------------------------------------------------------------------
class ts_context_options(Structure):
    _fields_ = [("size", c_size_t), ("device", c_int), ("cache_dir", c_char_p),
                ("disable_cache", c_int), ("verbose", c_int)]


class ts_cache_info(Structure):
    _fields_ = [("dir", c_char_p), ("enabled", c_int), ("max_bytes", ctypes.c_uint64),
                ("entries", ctypes.c_uint64), ("bytes", ctypes.c_uint64)]


class ts_param(Structure):
    _fields_ = [("name", c_char_p), ("value", c_char_p)]


class ts_compile_options(Structure):
    _fields_ = [("size", c_size_t), ("arch", c_char_p), ("compiler", c_int), ("no_jit", c_int),
                ("dump_after", c_char_p), ("debug", c_int), ("pass_configs", POINTER(ts_param)),
                ("npass_configs", c_int), ("module_path", c_char_p)]


class ts_arg_info(Structure):
    _fields_ = [("name", c_char_p), ("kind", c_int), ("dtype", c_int), ("ndim", c_int),
                ("shape", c_int64 * MAX_DIMS), ("is_output", c_int)]


class ts_tensor(Structure):
    _fields_ = [("data", c_void_p), ("dtype", c_int), ("ndim", c_int),
                ("shape", POINTER(c_int64)), ("strides", POINTER(c_int64)), ("device", c_int)]


class ts_arg(Structure):
    _fields_ = [("kind", c_int), ("tensor", ts_tensor), ("i", c_int64), ("f", c_double)]


class ts_dist_options(Structure):  # include/tilescale_dist.h
    _fields_ = [("size", c_size_t), ("rank", c_int), ("world_size", c_int), ("local_rank", c_int),
                ("local_world_size", c_int), ("master_addr", c_char_p), ("master_port", c_int),
                ("backend", c_int), ("heap_bytes", c_size_t), ("host_only", c_int),
                ("connect_timeout_ms", c_int), ("op_timeout_ms", c_int)]


class ts_dist_env(Structure):
    _fields_ = [("rank", c_int), ("world_size", c_int), ("local_rank", c_int),
                ("local_world_size", c_int), ("master_addr", ctypes.c_char * 256),
                ("master_port", c_int), ("launcher", c_char_p)]


TS_DIST_BACKENDS = {"default": 0, "ipc": 1, "nvshmem": 2}
TS_DIST_WAIT = {"geq": 0, "eq": 1, "and": 2, "nor": 3}

# ts_host_call_fn: (user, module, qualname, args, const char **result) -> int
HOST_CALL_FN = ctypes.CFUNCTYPE(c_int, c_void_p, c_char_p, c_char_p, c_char_p, POINTER(c_char_p))

# ---- functions -----------------------------------------------------------------------------
_P = c_void_p
_DIST_SIGS = {  # include/tilescale_dist.h
    "ts_dist_default_options": (ts_dist_options, []),
    "ts_dist_env_read": (c_int, [_P, POINTER(ts_dist_env)]),
    "ts_dist_env_local_rank": (c_int, []),
    "ts_dist_init": (c_int, [_P, POINTER(ts_dist_options), POINTER(_P)]),
    "ts_dist_finalize": (None, [_P]),
    "ts_dist_rank": (c_int, [_P]),
    "ts_dist_world_size": (c_int, [_P]),
    "ts_dist_local_rank": (c_int, [_P]),
    "ts_dist_local_world_size": (c_int, [_P]),
    "ts_dist_backend_of": (c_int, [_P]),
    "ts_dist_backend_name": (c_char_p, [c_int]),
    "ts_dist_malloc": (c_int, [_P, c_size_t, POINTER(_P)]),
    "ts_dist_free": (c_int, [_P, _P]),
    "ts_dist_peer_ptr": (c_int, [_P, _P, c_int, POINTER(_P)]),
    "ts_dist_heap_base": (_P, [_P]),
    "ts_dist_heap_size": (c_size_t, [_P]),
    "ts_dist_module_attach": (c_int, [_P, _P]),
    "ts_dist_kernel_attach": (c_int, [_P, _P]),
    "ts_dist_kernel_uses": (c_int, [_P]),
    "ts_dist_barrier": (c_int, [_P, _P]),
    "ts_dist_set_op_timeout": (None, [_P, c_int]),
    "ts_dist_allgather": (c_int, [_P, _P, c_size_t, _P]),
    "ts_dist_broadcast": (c_int, [_P, _P, c_size_t]),
    "ts_dist_stream_write32": (c_int, [_P, _P, _P, ctypes.c_uint32]),
    "ts_dist_stream_write64": (c_int, [_P, _P, _P, ctypes.c_uint64]),
    "ts_dist_stream_wait32": (c_int, [_P, _P, _P, ctypes.c_uint32, c_int]),
    "ts_dist_stream_wait64": (c_int, [_P, _P, _P, ctypes.c_uint64, c_int]),
    "ts_dist_host_counters_alloc": (c_int, [_P, c_size_t, POINTER(_P), POINTER(_P)]),
    "ts_dist_host_counters_free": (c_int, [_P, _P]),
    "ts_dist_peer_copy": (c_int, [_P, _P, _P, c_size_t, _P]),
    "ts_dist_copy_stream": (_P, [_P]),
}

_SIGS = {
    # name: (restype, argtypes)
    "ts_status_string": (c_char_p, [c_int]),
    "ts_dtype_name": (c_char_p, [c_int]),
    "ts_dtype_size": (c_size_t, [c_int]),
    "ts_context_create": (c_int, [POINTER(ts_context_options), POINTER(c_void_p)]),
    "ts_context_destroy": (None, [c_void_p]),
    "ts_last_error": (c_char_p, [c_void_p]),
    "ts_context_device_sm": (c_int, [c_void_p]),
    "ts_context_set_host_call": (c_int, [c_void_p, HOST_CALL_FN, c_void_p]),
    "ts_program_load_file": (c_int, [c_void_p, c_char_p, POINTER(c_void_p)]),
    "ts_program_load_source": (c_int, [c_void_p, c_char_p, c_char_p, POINTER(c_void_p)]),
    "ts_program_destroy": (None, [c_void_p]),
    "ts_program_functions": (c_int, [c_void_p, POINTER(c_char_p), c_int]),
    "ts_kernel_compile": (c_int, [c_void_p, c_char_p, POINTER(ts_param), c_int,
                                  POINTER(ts_compile_options), POINTER(c_void_p)]),
    "ts_compile_options_check": (c_int, [c_void_p, POINTER(ts_compile_options)]),
    "ts_kernel_destroy": (None, [c_void_p]),
    "ts_cache_get_info": (c_int, [c_void_p, POINTER(ts_cache_info)]),
    "ts_cache_clear": (c_int, [c_void_p, POINTER(ctypes.c_uint64)]),
    "ts_kernel_text": (c_char_p, [c_void_p, c_int]),
    "ts_kernel_binary": (c_int, [c_void_p, POINTER(c_void_p), POINTER(c_size_t)]),
    "ts_kernel_from_cache": (c_int, [c_void_p]),
    "ts_kernel_autotune_configs": (c_char_p, [c_void_p, POINTER(c_int)]),
    "ts_kernel_num_pass_configs": (c_int, [c_void_p]),
    "ts_kernel_pass_config": (c_int, [c_void_p, c_int, POINTER(c_char_p), POINTER(c_char_p)]),
    "ts_kernel_num_args": (c_int, [c_void_p]),
    "ts_kernel_arg_info": (c_int, [c_void_p, c_int, POINTER(ts_arg_info)]),
    "ts_kernel_launch": (c_int, [c_void_p, POINTER(ts_arg), c_int, c_void_p]),
    "ts_device_malloc": (c_int, [c_void_p, c_size_t, POINTER(c_void_p)]),
    "ts_device_free": (c_int, [c_void_p, c_void_p]),
    "ts_memcpy_h2d": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t]),
    "ts_memcpy_d2h": (c_int, [c_void_p, c_void_p, c_void_p, c_size_t]),
    "ts_memset_d8": (c_int, [c_void_p, c_void_p, ctypes.c_ubyte, c_size_t]),
    "ts_synchronize": (c_int, [c_void_p]),
    "ts_kernel_benchmark": (c_int, [c_void_p, POINTER(ts_arg), c_int, c_int, c_int, c_int,
                                    POINTER(c_double)]),
}


def _load():
    errors = []
    for path in _locate.library_candidates():
        if os.sep in path and not os.path.exists(path):
            errors.append("%s: not found" % path)
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append("%s: %s" % (path, e))
            continue
        for name, (res, args) in list(_SIGS.items()) + list(_DIST_SIGS.items()):
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        lib.path = path
        return lib
    raise OSError("tilescale: cannot load libtilescale.so (set $TILESCALE_LIB or run `make`): "
                  + "; ".join(errors))


lib = _load()
fastcall = _locate.fastcall
