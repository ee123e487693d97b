"""tilelang.contrib.nvcc: compute-capability queries host code makes before building kernels
(`arch = nvcc.get_target_compute_version()`; `assert float(arch) >= 9.0`).

Answers come from the target when it names an arch, else the GPU (torch.cuda, then the
library's driver), else the library's default target (sm_90a) — see tilelang._device.
TileScale compiles with NVRTC inside libtilescale: compile_cuda and the nvcc tool paths of
TileLang's module are not provided."""
import os
import shutil

from .. import _device

__all__ = ["get_target_compute_version", "parse_compute_version", "get_target_arch",
           "have_fp16", "have_int8", "have_tensorcore", "have_bf16", "have_fp8", "have_tma",
           "is_hopper", "have_pdl", "have_mbarrier", "have_cudagraph", "find_cuda_path",
           "get_cuda_version", "get_nvcc_compiler"]


def get_target_compute_version(target=None):
    """The compute capability as text, "9.0" on an H100."""
    major, minor = _device.compute_capability(target)
    return "%d.%d" % (major, minor)


def parse_compute_version(compute_version):
    """"8.6" -> (8, 6)."""
    parts = str(compute_version).split(".")
    try:
        return int(parts[0]), int(parts[1])
    except (IndexError, ValueError) as err:
        raise RuntimeError("Compute version parsing error: %r" % (compute_version,)) from err


def get_target_arch(compute_version):
    """"9.0" -> "90a" (Hopper and later use the arch-specific feature set), "8.6" -> "86"."""
    major, minor = (parse_compute_version(compute_version) if isinstance(compute_version, str)
                    else compute_version)
    return "%d%s" % (major * 10 + minor, "a" if major >= 9 else "")


def have_fp16(compute_version):
    major, minor = parse_compute_version(compute_version)
    return major >= 6 or (major == 5 and minor >= 3)


def have_int8(compute_version):
    return parse_compute_version(compute_version)[0] >= 6


def have_tensorcore(compute_version=None, target=None):
    if compute_version is None:
        compute_version = get_target_compute_version(target)
    return parse_compute_version(compute_version)[0] >= 7


def have_bf16(compute_version):
    return parse_compute_version(compute_version)[0] >= 8


def have_fp8(compute_version):
    major, minor = parse_compute_version(compute_version)
    return (major, minor) >= (8, 9)


def _sm(target):
    major, minor = _device.compute_capability(target)
    return major * 10 + minor


def have_tma(target=None):
    return _sm(target) >= 90


def is_hopper(target=None):
    return _sm(target) == 90


def have_pdl(target=None):
    return _sm(target) >= 90


def have_mbarrier(target=None):
    return _sm(target) >= 80


def have_cudagraph():
    return True


def find_cuda_path():
    """$CUDA_HOME (or CUDA_PATH), the folder of nvcc on PATH, else /usr/local/cuda."""
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            return os.environ[var]
    nvcc = shutil.which("nvcc")
    if nvcc:
        return os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    return "/usr/local/cuda"


def get_cuda_version(cuda_path=None):
    """(major, minor) of the CUDA toolkit, from version.json or nvcc --version."""
    import json
    import re
    import subprocess
    path = cuda_path or find_cuda_path()
    try:
        with open(os.path.join(path, "version.json"), encoding="utf-8") as f:
            v = json.load(f)["cuda"]["version"].split(".")
        return int(v[0]), int(v[1])
    except (OSError, KeyError, ValueError, IndexError):
        pass
    try:
        out = subprocess.run([os.path.join(path, "bin", "nvcc"), "--version"],
                             capture_output=True, text=True, check=False).stdout
    except OSError as e:
        raise RuntimeError("tilelang: cannot find the CUDA toolkit under %s" % path) from e
    m = re.search(r"release (\d+)\.(\d+)", out)
    if not m:
        raise RuntimeError("tilelang: cannot read the CUDA version from %s" % path)
    return int(m.group(1)), int(m.group(2))


def get_nvcc_compiler():
    return os.path.join(find_cuda_path(), "bin", "nvcc")
