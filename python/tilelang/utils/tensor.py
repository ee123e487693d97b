"""Input tensors for profiling and the closeness check of TileLang's tests.

TensorSupplyType.Auto follows TileLang: float16/bfloat16/float32 uniform in [-1, 1], unsigned
integers in [0, 3), float8 from random int8 values, other integers in [-2, 3)."""
from enum import Enum

__all__ = ["TensorSupplyType", "get_tensor_supply", "torch_assert_close", "is_float8_dtype"]


class TensorSupplyType(Enum):
    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


def is_float8_dtype(dtype):
    return "float8" in str(dtype)


def _param_shape_dtype(param):
    """(shape, torch dtype, dtype name) of a tilescale.ArgInfo (or anything with .shape/.dtype)."""
    from ..language.dtypes import dtype
    name = str(dtype(param.dtype)) if not hasattr(param.dtype, "is_floating_point") else None
    shape = tuple(param.shape)
    if any(s is None or not isinstance(s, int) for s in shape):
        raise ValueError("tilelang: cannot make a tensor for '%s' with dynamic shape %s; pass "
                         "input_tensors" % (getattr(param, "name", "?"), shape))
    tdt = param.dtype if name is None else dtype(name).as_torch()
    return shape, tdt, name or str(param.dtype).replace("torch.", "")


def get_tensor_supply(supply_type=TensorSupplyType.Integer):
    """A function param -> torch tensor on the current CUDA device."""
    def supply(param):
        import torch
        shape, tdt, name = _param_shape_dtype(param)
        dev = torch.device("cuda", torch.cuda.current_device())
        unsigned, fp8, boolean = name.startswith("uint"), "float8" in name, name == "bool"
        st = supply_type
        if st in (TensorSupplyType.Auto, TensorSupplyType.Integer):
            if unsigned:
                return torch.randint(0, 3, shape, device=dev, dtype=tdt)
            if fp8:
                return torch.randint(-128, 128, shape, device=dev, dtype=torch.int8).to(tdt)
            if boolean:
                return torch.randint(0, 2, shape, device=dev, dtype=tdt)
            if st == TensorSupplyType.Auto and tdt in (torch.float16, torch.bfloat16, torch.float32):
                return torch.empty(shape, device=dev, dtype=tdt).uniform_(-1.0, 1.0)
            return torch.randint(-2, 3, shape, device=dev, dtype=tdt)
        if tdt == torch.int8 and st in (TensorSupplyType.Uniform, TensorSupplyType.Normal):
            return torch.ones(shape, device=dev, dtype=tdt)
        if st == TensorSupplyType.Uniform:
            return torch.empty(shape, device=dev, dtype=torch.float32).uniform_(-1.0, 1.0).to(tdt)
        if st == TensorSupplyType.Normal:
            return torch.empty(shape, device=dev, dtype=torch.float32).normal_(-1.0, 1.0).to(tdt)
        if st == TensorSupplyType.Randn:
            return torch.randn(shape, device=dev).to(tdt)
        if st == TensorSupplyType.Zero:
            return torch.zeros(shape, device=dev, dtype=tdt)
        if st == TensorSupplyType.One:
            return torch.ones(shape, device=dev, dtype=tdt)
        raise NotImplementedError(st)
    return supply


def torch_assert_close(tensor_a, tensor_b, rtol=1e-2, atol=1e-3, max_mismatched_ratio=0.001,
                       verbose=False, equal_nan=True, check_device=True, check_dtype=True,
                       check_layout=True, check_stride=False, base_name="LHS", ref_name="RHS"):
    """Asserts that at most max_mismatched_ratio of the elements differ beyond atol + rtol*|b|."""
    import torch
    if tensor_a.shape != tensor_b.shape:
        raise AssertionError("The values for attribute 'shape' do not match: %s != %s."
                             % (tensor_a.shape, tensor_b.shape))
    if check_device and tensor_a.device != tensor_b.device:
        raise AssertionError("The values for attribute 'device' do not match: %s != %s."
                             % (tensor_a.device, tensor_b.device))
    if check_dtype and tensor_a.dtype != tensor_b.dtype:
        raise AssertionError("The values for attribute 'dtype' do not match: %s != %s."
                             % (tensor_a.dtype, tensor_b.dtype))
    a, b = tensor_a, tensor_b
    if a.device != b.device:
        a, b = a.cpu(), b.cpu()
    if a.dtype != b.dtype or is_float8_dtype(a.dtype):
        a, b = a.to(torch.float64), b.to(torch.float64)
    mismatched = ~torch.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    n_bad, total = int(mismatched.sum().item()), a.numel()
    allowed = int(total * max_mismatched_ratio)
    if verbose:
        print("Number of mismatched elements: %d / %d (allowed: %d)" % (n_bad, total, allowed))
    if n_bad > allowed:
        idx = tuple(i.item() for i in torch.nonzero(mismatched)[0])
        diff = (a.double() - b.double()).abs()
        raise AssertionError(
            "Too many mismatched elements: %d > %d (%.2f%% allowed, but got %.2f%%).\n"
            "First mismatch at index %s: %s=%s, %s=%s; max abs diff %s (rtol=%g, atol=%g)"
            % (n_bad, allowed, max_mismatched_ratio * 100, n_bad / total * 100, idx, base_name,
               a[idx].item(), ref_name, b[idx].item(), diff.max().item(), rtol, atol))
