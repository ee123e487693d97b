"""peer_source.py — the CUDA TileLang 0.1.15 generates for a kernel, on this machine (no GPU):
lets the schedule of a corpus kernel be read beside ours (`tilescale compile ... --emit cuda`)
without a device call.

Set up once (TileLang's wheels are built for Python 3.12):
    mkdir -p /tmp/peer && xz -dc .peer/all/peer.tar.xz | tar -xf - -C /tmp/peer
    python3.12 -m pip install --target /tmp/py312dep typing_extensions numpy ml_dtypes psutil tqdm cloudpickle
Run:
    PYTHONPATH=/tmp/peer:bench/tilelang/cpu_stubs:/tmp/py312dep python3.12 bench/tilelang/peer_source.py \\
        FILE FACTORY [name=value ...] [--arch sm_90a] > tl.cu
FACTORY is a function of FILE returning a T.prim_func (values are Python literals); torch is the
stand-in of cpu_stubs/, so the file's module-level code must not compute with tensors."""
import ast
import importlib.util
import os
import sys


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--arch")]
    arch = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--arch=")), "sm_90a")
    if len(args) < 2:
        sys.exit(__doc__)
    path, factory = args[0], args[1]
    kw = {k: ast.literal_eval(v) for k, v in (a.split("=", 1) for a in args[2:])}
    import tilelang
    from tvm.target import Target
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))  # the example's sibling modules
    spec = importlib.util.spec_from_file_location("peer_kernel", path)
    mod = importlib.util.module_from_spec(spec)
    sys.argv = [path]
    target = Target({"kind": "cuda", "arch": arch})
    with target:  # module-level kernels and autotuned factories resolve their target when called
        try:
            spec.loader.exec_module(mod)
        except Exception as err:  # module-level code that computes with tensors: the factory may still be defined
            if not hasattr(mod, factory):
                raise
            print("peer_source: module code stopped (%s); using %s" % (err, factory), file=sys.stderr)
        fn = getattr(mod, factory)
        # a @tilelang.jit factory gives its PrimFunc through get_tir (calling it would compile and run)
        func = fn.get_tir(**kw) if hasattr(fn, "get_tir") else fn(**kw)
        func = getattr(func, "prim_func", None) or func
        print(tilelang.lower(func, target=target).kernel_source)


if __name__ == "__main__":
    main()
