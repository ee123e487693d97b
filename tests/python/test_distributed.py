"""CPU tests of TileScale's host API in the packages (no GPU; torch parts skip without torch):
tilescale.dist_env over every launcher family, tilescale.Dist on a host-only group of two ranks
started by tilelang/distributed/launch.sh (over `tilescale launch`), the tilelang.distributed /
pynvshmem / tilelang.get_allocator API surface and its errors, kernels of TileScale's examples
compiled through tilelang.compile (what they use, symmetric outputs, initialize()),
tilelang.testing.requires_distributed and the tvm.register_func stand-in.
Run: python3 tests/python/test_distributed.py  (uses $TILESCALE_LIB, else build/libtilescale.so)."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import textwrap
import types
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PY = os.path.join(ROOT, "python")
sys.path.insert(0, PY)
sys.dont_write_bytecode = True

import tilescale  # noqa: E402
import tilelang  # noqa: E402
import tilelang.distributed as td  # noqa: E402
from tilelang.distributed import _runtime  # noqa: E402

CORPUS = os.environ.get("TILESCALE_CORPUS") or os.path.join(os.path.dirname(ROOT), "shared", "corpus")
DIST = os.path.join(CORPUS, "tilescale", "examples", "distributed")
CLI = os.path.join(os.path.dirname(os.environ.get("TILESCALE_LIB") or
                                   os.path.join(ROOT, "build", "libtilescale.so")), "tilescale")
HAS_TORCH = importlib.util.find_spec("torch") is not None

if "TILESCALE_CACHE_DIR" not in os.environ:
    tilelang.disable_cache()

LAUNCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
               "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK",
               "OMPI_COMM_WORLD_LOCAL_SIZE", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID",
               "MPI_LOCALNRANKS", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_STEP_NUM_TASKS",
               "SLURM_LOCALID", "SLURM_NODEID", "SLURM_STEP_TASKS_PER_NODE",
               "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_JOB_ID",
               "TILESCALE_DIST_BACKEND", "TILELANG_USE_NVSHMEM")


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARS}
    env["PYTHONPATH"] = PY + os.pathsep + env.get("PYTHONPATH", "")
    env.update({k: str(v) for k, v in extra.items()})
    return env


def run_py(code, env, timeout=120, args=()):
    return subprocess.run([sys.executable, "-c", code] + list(args), env=env, capture_output=True,
                          text=True, timeout=timeout)


class EnvTest(unittest.TestCase):
    """tilescale.dist_env: the launcher families of ts_dist_env_read, seen from Python."""
    CODE = "import tilescale; print(tuple(tilescale.dist_env()))"

    def env_of(self, **kv):
        r = run_py(self.CODE, clean_env(**kv))
        self.assertEqual(r.returncode, 0, r.stderr)
        return eval(r.stdout.strip())  # noqa: S307 (our own repr of a tuple)

    def test_none(self):
        self.assertEqual(self.env_of(), (0, 1, 0, 1, "127.0.0.1", 29500, "none"))

    def test_torchrun(self):
        self.assertEqual(self.env_of(RANK=3, WORLD_SIZE=4, LOCAL_RANK=1, LOCAL_WORLD_SIZE=2,
                                     MASTER_ADDR="h0", MASTER_PORT=777),
                         (3, 4, 1, 2, "h0", 777, "torchrun"))

    def test_openmpi(self):
        self.assertEqual(self.env_of(OMPI_COMM_WORLD_RANK=1, OMPI_COMM_WORLD_SIZE=2,
                                     OMPI_COMM_WORLD_LOCAL_RANK=1, OMPI_COMM_WORLD_LOCAL_SIZE=2)[:4],
                         (1, 2, 1, 2))

    def test_slurm_step(self):
        e = self.env_of(SLURM_PROCID=2, SLURM_STEP_NUM_TASKS=4, SLURM_LOCALID=0, SLURM_NODEID=1,
                        SLURM_STEP_TASKS_PER_NODE="2(x2)", SLURM_STEP_NODELIST="gpu[12-13]",
                        SLURM_JOB_ID=41)
        self.assertEqual(e, (2, 4, 0, 2, "gpu12", 20041, "slurm"))

    def test_bad_environment_names_the_variable(self):
        r = run_py(self.CODE, clean_env(RANK=5, WORLD_SIZE=2))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("inconsistent torchrun environment: rank 5 of 2", r.stderr)
        r = run_py(self.CODE, clean_env(RANK="one"))
        self.assertIn("RANK='one'", r.stderr)


class NoGroupTest(unittest.TestCase):
    """Every entry point needs a group and says how to get one; nothing needs torch to import."""

    def test_api_surface(self):
        import pynvshmem
        from tilelang.distributed import (CUDA_CHECK, create_mapped_tensor, dtype_map,  # noqa: F401
                                          has_fullmesh_nvlink, init_dist, init_distributed, perf_fn)
        from tilelang.distributed.utils import CUDA_CHECK as c2  # noqa: F401
        for name in ("nvshmem_create_tensor", "nvshmem_create_tensor_list_intra_node",
                     "nvshmem_barrier_all", "nvshmem_my_pe", "nvshmem_n_pes", "nvshmem_team_my_pe",
                     "nvshmem_team_n_pes", "Team", "init_nvshmem_by_uniqueid", "nvshmem_malloc",
                     "nvshmem_free", "nvshmem_ptr", "write64_on_stream"):
            self.assertTrue(callable(getattr(pynvshmem, name)), name)
        self.assertEqual((int(pynvshmem.Team.NODE), int(pynvshmem.CmpType.GE),
                          int(pynvshmem.Amo.SIGNAL_ADD)), (2, 5, 10))
        self.assertTrue(os.access(td.LAUNCH_SCRIPT, os.R_OK))
        self.assertTrue(callable(tilelang.get_allocator) and callable(tilelang.tensor))
        self.assertTrue(callable(tilelang.disable_cache))

    def test_rendezvous_port_below_the_ephemeral_range(self):
        # a port bind(0) gives lies inside the range, where the job's own NCCL / NVSHMEM
        # sockets can take it before rank 0 listens
        try:
            with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
                low = int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            self.skipTest("no /proc/sys/net/ipv4/ip_local_port_range")
        ports = {_runtime._free_port("127.0.0.1") for _ in range(5)}
        for port in ports:
            self.assertTrue(max(1024, low - 16384) <= port < low, port)
            self.assertTrue(_runtime._bindable("127.0.0.1", port))

    def test_errors_without_a_group(self):
        import pynvshmem
        self.assertFalse(td.is_initialized())
        for call in (pynvshmem.nvshmem_my_pe, lambda: pynvshmem.nvshmem_create_tensor([4], "int32"),
                     lambda: tilelang.get_allocator(size=2**25), td.barrier, td.get_rank):
            with self.assertRaises(td.DistributedError) as cm:
                call()
            self.assertIn("init_distributed", str(cm.exception))
        with self.assertRaises(NotImplementedError) as cm:
            pynvshmem.nvshmemx_get_uniqueid()
        self.assertIn("init_distributed", str(cm.exception))

    def test_cuda_check(self):
        td.CUDA_CHECK(0)
        td.CUDA_CHECK((0, "result"))
        err = types.SimpleNamespace(name="CUDA_ERROR_INVALID_VALUE", value=1)
        with self.assertRaises(RuntimeError) as cm:
            td.CUDA_CHECK(err)
        self.assertIn("CUDA_ERROR_INVALID_VALUE", str(cm.exception))

    def test_nvlink_topology(self):
        from tilelang.distributed.utils import _topo_fullmesh
        mesh = ("\tGPU0\tGPU1\tGPU2\tNIC0\tCPU Affinity\n"
                "GPU0\t X \tNV18\tNV18\tSYS\t0-63\n"
                "GPU1\tNV18\t X \tNV18\tSYS\t0-63\n"
                "GPU2\tNV18\tNV18\t X \tSYS\t0-63\n"
                "NIC0\tSYS\tSYS\tSYS\t X \n")
        self.assertTrue(_topo_fullmesh(mesh))
        self.assertFalse(_topo_fullmesh(mesh.replace("GPU1\tNV18", "GPU1\tPIX")))
        self.assertFalse(_topo_fullmesh(""))

    def test_requires_distributed(self):
        import tilelang.testing as tt
        names = ("TILELANG_USE_DISTRIBUTED", "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                 "SLURM_STEP_NUM_TASKS")
        saved = {n: os.environ.pop(n) for n in names if n in os.environ}
        try:
            @tt.requires_distributed
            def t():
                return "ran"
            skipped = False
            try:
                t()
            except unittest.SkipTest:
                skipped = True
            self.assertTrue(skipped or getattr(t, "pytestmark", None))
            os.environ["WORLD_SIZE"] = "2"  # under a launcher: the decorated main runs

            @tt.requires_distributed
            def main():
                return "ran"
            self.assertEqual(main(), "ran")
        finally:
            os.environ.pop("WORLD_SIZE", None)
            os.environ.update(saved)

    def test_target(self):
        from tilelang.utils.target import determine_target, target_is_hopper
        self.assertEqual(determine_target(), "cuda")
        t = determine_target("cuda -arch=sm_90a", return_object=True)
        self.assertEqual((t.arch, t.kind.name, str(t)), ("sm_90", "cuda", "cuda -arch=sm_90"))
        self.assertTrue(target_is_hopper(t))
        self.assertFalse(target_is_hopper(determine_target("sm_80", return_object=True)))
        with self.assertRaises(ValueError):
            determine_target("hip")

    def test_tvm_register_func(self):
        import tvm

        @tvm.register_func("tilelang_test_hook", override=True)
        def hook(code, _):
            return code
        self.assertIs(tvm.get_global_func("tilelang_test_hook"), hook)
        with self.assertRaises(ValueError):
            tvm.register_func("tilelang_test_hook", hook)
        self.assertIsNone(tvm.get_global_func("no such", allow_missing=True))


GROUP_SCRIPT = textwrap.dedent("""
    import os, sys
    import tilescale
    import tilelang.distributed as td
    import pynvshmem
    from tilelang.distributed import _runtime
    e = tilescale.dist_env()
    d = _runtime.start(e.rank, e.world_size, e.local_rank, e.local_world_size, e.master_addr,
                       e.master_port, host_only=True)
    assert td.is_initialized() and td.get_rank() == e.rank and td.get_world_size() == 2
    assert d.allgather(bytes([e.rank]) * 3) == [b"\\0\\0\\0", b"\\1\\1\\1"]
    assert d.broadcast(b"hi" if e.rank == 0 else b"xx") == b"hi"
    td.barrier()
    assert pynvshmem.nvshmem_my_pe() == e.rank and pynvshmem.nvshmem_n_pes() == 2
    assert pynvshmem.nvshmem_team_n_pes(pynvshmem.Team.NODE) == 2
    assert _runtime.start(e.rank, 2, e.local_rank, 2) is d   # the same group again: no-op
    try:
        _runtime.start(0, 3, 0, 3)
        raise SystemExit("a second group was accepted")
    except td.DistributedError as err:
        assert "already rank" in str(err)
    try:
        pynvshmem.nvshmem_create_tensor([4], "int32")
        raise SystemExit("a host-only group allocated")
    except td.DistributedError as err:
        assert "host_only" in str(err)
    print("group ok rank %d backend %s launcher %s nvls %s dist %s" % (
        e.rank, d.backend, e.launcher, os.environ.get("NVSHMEM_DISABLE_NVLS"),
        os.environ.get("TILELANG_USE_DISTRIBUTED")))
    td.finalize()
    assert not td.is_initialized()
""")


@unittest.skipUnless(os.access(CLI, os.X_OK), "no tilescale CLI beside the library")
class HostGroupTest(unittest.TestCase):
    """Two ranks started by launch.sh (over `tilescale launch`) form a host-only group."""

    def launch(self, **extra):
        with tempfile.TemporaryDirectory() as tmp:
            script = os.path.join(tmp, "group.py")
            with open(script, "w") as f:
                f.write(GROUP_SCRIPT)
            env = clean_env(TILESCALE_CLI=CLI, GPUS=2, PYTHON=sys.executable, **extra)
            env.pop("NVSHMEM_DISABLE_NVLS", None)
            env.pop("TILELANG_USE_DISTRIBUTED", None)
            return subprocess.run(["bash", td.LAUNCH_SCRIPT, script], env=env, capture_output=True,
                                  text=True, timeout=180)

    def test_group_of_two(self):
        r = self.launch()
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        for rank in (0, 1):
            self.assertIn("group ok rank %d backend ipc launcher torchrun nvls 1 dist 1" % rank,
                          r.stdout)

    def test_use_nvshmem_selects_the_backend(self):
        r = self.launch(TILELANG_USE_NVSHMEM=1)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("backend nvshmem", r.stdout)
        r = self.launch(TILELANG_USE_NVSHMEM=1, TILESCALE_DIST_BACKEND="ipc")  # the primary switch
        self.assertIn("backend ipc", r.stdout)

    def test_launch_script_usage(self):
        r = subprocess.run(["bash", td.LAUNCH_SCRIPT], env=clean_env(TILESCALE_CLI=CLI),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 2)
        self.assertIn("usage: GPUS=N bash launch.sh", r.stderr)


FAMILY_SCRIPT = textwrap.dedent("""
    import os
    import tilelang.distributed as td
    from tilelang.distributed import _runtime
    from tilelang.distributed.utils import export_torch_env
    e = export_torch_env()
    d = _runtime.start(e.rank, e.world_size, e.local_rank, e.local_world_size, e.master_addr,
                       e.master_port, host_only=True)
    got = d.allgather(bytes([e.rank]))
    print("family %s rank %d of %d local %d of %d torch %s %s %s %s %s:%s gathered %s" % (
        e.launcher, e.rank, e.world_size, e.local_rank, e.local_world_size, os.environ["RANK"],
        os.environ["WORLD_SIZE"], os.environ["LOCAL_RANK"], os.environ["LOCAL_WORLD_SIZE"],
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"], got == [b"\\0", b"\\1"]))
    td.finalize()
""")


def free_port_in(lo, hi):
    import random
    import socket
    for _ in range(200):
        port = random.randrange(lo, hi)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        return port
    raise RuntimeError("no free port in [%d, %d)" % (lo, hi))


class LauncherFamilyTest(unittest.TestCase):
    """tilelang.distributed in two ranks started without `tilescale launch`, each with only one
    launcher family's variables (what mpirun / srun give them): the group forms, and
    export_torch_env writes the variables torch's env:// rendezvous reads."""

    def ranks(self, family, **common):
        procs = []
        for r in range(2):
            kv = {k: (v(r) if callable(v) else v) for k, v in common.items()}
            procs.append(subprocess.Popen([sys.executable, "-c", FAMILY_SCRIPT], env=clean_env(**kv),
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        outs = []
        for r, p in enumerate(procs):
            out, err = p.communicate(timeout=120)
            self.assertEqual(p.returncode, 0, "%s rank %d: %s%s" % (family, r, out, err))
            outs.append(out.strip())
        return outs

    def test_open_mpi(self):
        port = free_port_in(30000, 60000)
        outs = self.ranks("openmpi", OMPI_COMM_WORLD_RANK=lambda r: r, OMPI_COMM_WORLD_SIZE=2,
                          OMPI_COMM_WORLD_LOCAL_RANK=lambda r: r, OMPI_COMM_WORLD_LOCAL_SIZE=2,
                          MASTER_PORT=port)
        for r in (0, 1):
            self.assertEqual(outs[r], "family openmpi rank %d of 2 local %d of 2 torch %d 2 %d 2 "
                                      "127.0.0.1:%d gathered True" % (r, r, r, r, port))

    def test_slurm_step(self):
        port = free_port_in(20000, 40000)  # the port srun's ranks derive from the job id
        outs = self.ranks("slurm", SLURM_PROCID=lambda r: r, SLURM_NTASKS=2, SLURM_STEP_NUM_TASKS=2,
                          SLURM_LOCALID=lambda r: r, SLURM_NODEID=0, SLURM_STEP_TASKS_PER_NODE=2,
                          SLURM_STEP_NODELIST="localhost", SLURM_JOB_ID=3 * 20000 + port - 20000)
        for r in (0, 1):
            self.assertEqual(outs[r], "family slurm rank %d of 2 local %d of 2 torch %d 2 %d 2 "
                                      "localhost:%d gathered True" % (r, r, r, r, port))


class SwitchesTest(unittest.TestCase):
    """TileScale's documented switches: TILELANG_USE_DISTRIBUTED / TILELANG_USE_NVSHMEM read
    (and assignable) as tilelang.env.USE_*; execution_backend="auto" under them is the NVRTC path
    that builds NVSHMEM kernels (see also HostGroupTest: TILELANG_USE_NVSHMEM=1 picks the
    nvshmem heap)."""

    def test_env_attributes(self):
        code = ("from tilelang.env import env\n"
                "a = (env.USE_DISTRIBUTED, env.USE_NVSHMEM)\n"
                "env.USE_NVSHMEM = False\n"
                "print(a, env.USE_NVSHMEM, env.USE_DISTRIBUTED)")
        r = run_py(code, clean_env(TILELANG_USE_DISTRIBUTED=1, TILELANG_USE_NVSHMEM="true"))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "(True, True) False True")
        plain = clean_env()
        plain.pop("TILELANG_USE_DISTRIBUTED", None)
        r = run_py(code, plain)
        self.assertEqual(r.stdout.strip(), "(False, False) False False")

    @unittest.skipUnless(os.path.isdir(DIST), "no corpus at %s" % DIST)
    def test_auto_backend_builds_nvshmem_kernels(self):
        code = textwrap.dedent("""
            import importlib.util, os, sys, types
            if importlib.util.find_spec("torch") is None:   # the example imports torch
                for n in ("torch", "torch.distributed", "torch.multiprocessing"):
                    sys.modules[n] = types.ModuleType(n)
            import tilelang
            from tilelang import _compiler
            path = os.path.join(sys.argv[1], "example_allgather.py")
            spec = importlib.util.spec_from_file_location("ex_ag", path)
            m = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(m)
            k = tilelang.compile(m.allgather(2, 256, 128, dtype="float16", threads=128),
                                 execution_backend="auto")
            print(_compiler.compiler_for("auto"), sorted(k._dist_uses))
        """)
        r = run_py(code, clean_env(TILELANG_USE_DISTRIBUTED=1, TILELANG_USE_NVSHMEM=1,
                                   TILESCALE_DISABLE_CACHE=1), args=[DIST])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip().splitlines()[-1], "nvrtc ['device_lib', 'nvshmem']")


BENCH = os.path.join(ROOT, "bench", "dist", "bench_overlap.py")

# torch, torch.* and packaging as stand-ins whose every attribute is a fresh class (usable as a
# base class, an annotation or a default value), no GPU: enough to import TileScale's example
# files, which build classes and dataclasses over torch names at import time.
BENCH_IMPORTS = textwrap.dedent("""
    import sys, types
    def fake(name):
        m = types.ModuleType(name)
        m.__path__ = []
        def attr(a):
            if a.startswith("__"):
                raise AttributeError(a)
            v = type(a, (), {})
            setattr(m, a, v)
            return v
        m.__getattr__ = attr
        sys.modules[name] = m
        return m
    torch = fake("torch")
    for sub in ("cuda", "distributed", "multiprocessing", "nn"):
        setattr(torch, sub, fake("torch." + sub))
    torch.cuda.is_available = lambda: False
    packaging = fake("packaging")
    packaging.version = fake("packaging.version")
    packaging.version.parse = lambda s: tuple(int(x) for x in s.split("+")[0].split(".") if x.isdigit())
    sys.path.insert(0, sys.argv[2])
    import bench_overlap as b
    d = b.example_dir_of(sys.argv[1])
    b.setup_paths(d, cuda_python=False)   # the stand-in of python/compat, as without cuda-python
    mods = b.load_examples(d, b.BENCHES)
    print(" ".join(sorted(mods)))
    a = b.parse_args([])
    for world in (2, 4, 8):
        b.check_shapes(a, world)
    print(b.heap_bytes_needed(a, 2, b.BENCHES) >> 20, b.heap_bytes_needed(a, 4, ["gemm_rs"]) >> 20)
    try:
        b.check_shapes(b.parse_args(["--n", "1000"]), 2)
    except b.UsageError as e:
        print(e)
""")


class BenchOverlapTest(unittest.TestCase):
    """bench/dist/bench_overlap.py (make bench-dist) on CPU: its arguments, its errors, and the
    example files it imports from the corpus with the names it calls."""

    def bench(self, *args):
        return subprocess.run([sys.executable, BENCH] + list(args), env=clean_env(),
                              capture_output=True, text=True, timeout=120)

    def test_help_and_usage_errors(self):
        r = self.bench("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        for word in ("--small", "--only", "--corpus", "--trials", "--breakdown", "tilescale launch"):
            self.assertIn(word, r.stdout)
        r = self.bench("--only", "ag_gemm,nope")
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown benchmark 'nope'", r.stderr)
        r = self.bench("--corpus", "/nonexistent")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no TileScale examples at /nonexistent/tilescale/examples/distributed", r.stderr)

    @unittest.skipUnless(os.path.isdir(DIST), "no corpus at %s" % DIST)
    def test_example_imports_and_shapes(self):
        r = run_py(BENCH_IMPORTS, clean_env(), args=[CORPUS, os.path.dirname(BENCH)])
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertEqual(lines[0], "example_allgather_gemm_overlapped.py example_gemm_rs_overlapped.py "
                                   "example_sp_ag_attention_intra_node.py")
        # cannon: 5 tiles of 8448^2 fp16, x1.25 (16896 on 2x2: at 16384 the example's last put
        # overruns its buffer, mesh_gemm_model.put_overrun)
        self.assertEqual(lines[1], "3836 3006")
        self.assertEqual(lines[2], "N 1000 is not a multiple of 2 ranks x 256")

    def test_wrong_checks_and_the_examples_race(self):
        """run_checked on stand-in calls: a wrong check stays WRONG unless adding the
        example's missing barrier (diagnose) makes every check right; the count is reported."""
        spec = importlib.util.spec_from_file_location("bench_overlap_t", BENCH)
        b = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(b)
        state = {"barrier": False, "calls": 0}

        def checked_call(g, ours, serial, poison, rel, tol):
            state["calls"] += 1  # every third call races unless the barrier is in
            racy = state["calls"] % 3 == 0 and not state["barrier"]
            return (not racy, float("inf") if racy else 0.001)
        b.checked_call = checked_call
        b.measure = lambda g, o, t, w, n, calls=1: ([1.0] * n, [2.0] * n)
        args = b.parse_args(["--trials", "4", "--rechecks", "6"])

        def run(diagnose):
            state.update(barrier=False, calls=0)
            row = b.Row("gemm_rs", "shape")
            return b.run_checked(None, args, row, None, None, None, True, 0.01, diagnose=diagnose)
        row = run(None)
        self.assertFalse(row.ok)
        self.assertEqual(row.check, "WRONG after timing in 2 of 6 checks (max err inf)")
        row = run((lambda: state.update(barrier=True), "the race"))
        self.assertTrue(row.ok)
        self.assertIn("the race: WRONG in 2 of 6 checks as written, right in 10 of 10", row.check)
        row = run((lambda: None, "no cure"))  # still wrong with the barrier: ours
        self.assertFalse(row.ok)
        self.assertTrue(row.check.startswith("WRONG after timing in 2 of 6"))


def fake_torch_modules():
    """torch, torch.distributed and torch.multiprocessing as empty modules: enough for the
    example files' imports."""
    names = ("torch", "torch.distributed", "torch.multiprocessing")
    saved = {n: sys.modules.get(n) for n in names}
    mods = {n: types.ModuleType(n) for n in names}
    mods["torch"].__path__ = []  # a package, so `import torch.x` looks in sys.modules
    mods["torch"].distributed = mods["torch.distributed"]
    mods["torch"].multiprocessing = mods["torch.multiprocessing"]
    sys.modules.update(mods)
    return saved


def restore_modules(saved):
    for n, m in saved.items():
        if m is None:
            sys.modules.pop(n, None)
        else:
            sys.modules[n] = m


def load_example(name):
    spec = importlib.util.spec_from_file_location("ts_ex_" + name.replace("/", "_")[:-3],
                                                  os.path.join(DIST, name))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@unittest.skipUnless(os.path.isdir(DIST), "no corpus at %s" % DIST)
class ExampleKernelTest(unittest.TestCase):
    """TileScale's example kernels through tilelang.compile: the library reports that they use
    the distributed device library, outputs go through the Python path (symmetric when a group
    exists), and they wait for a group to be attached."""

    def setUp(self):
        self.saved = None if HAS_TORCH else fake_torch_modules()

    def tearDown(self):
        if self.saved is not None:
            restore_modules(self.saved)

    def test_allgather_kernel(self):
        m = load_example("example_allgather.py")
        k = tilelang.compile(m.allgather(2, 256, 128, dtype="float16", threads=128))
        self.assertEqual(k._dist_uses, {"device_lib", "nvshmem"})
        self.assertIn(k, set(_runtime._kernels))  # attached when a group forms
        with self.assertRaises(td.DistributedError):
            k.initialize()

    def test_simple_shift_through_the_binding(self):
        prog = tilescale.Context().load(os.path.join(DIST, "example_simple_shift.py"))
        k = prog.compile("simple_shift", "sm_90a", M=128, N=128, block_M=128, block_N=128)
        self.assertEqual(tilescale.Dist.kernel_uses(k), {"device_lib", "nvshmem"})

    def test_ordinary_kernel_uses_nothing(self):
        spec = importlib.util.spec_from_file_location("ts_gemm", os.path.join(ROOT, "examples",
                                                                              "gemm.py"))
        gemm = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gemm)
        k = gemm.matmul(256, 256, 256)
        self.assertEqual(k._dist_uses, set())

    def test_primitives_put_warp(self):
        m = load_example("primitives/example_put_warp.py")
        k = tilelang.compile(m.kernel_(65536, 2, 4096, 128))
        self.assertIn("device_lib", k._dist_uses)
        self.assertNotIn("nvshmem", k._dist_uses)


@unittest.skipUnless(HAS_TORCH, "torch is not installed")
class TorchTest(unittest.TestCase):
    def test_dlpack_views_keep_their_owner(self):
        """_dlpack over host bytes: zero-copy views of any dtype, the owner released (its
        finalizer run) only when the last view dies."""
        import ctypes
        import gc
        import weakref

        import torch
        from tilelang.distributed import _dlpack
        buf = (ctypes.c_uint8 * 64)(*range(64))

        class Owner:
            pass
        owner, died = Owner(), []
        weakref.finalize(owner, died.append, True)
        t = _dlpack.as_tensor(ctypes.addressof(buf), (4, 4), torch.int32, "cpu", owner, torch)
        del owner
        gc.collect()
        self.assertEqual((tuple(t.shape), t.dtype), ((4, 4), torch.int32))
        self.assertEqual(t.data_ptr(), ctypes.addressof(buf))
        self.assertEqual(int(t[0, 0]), int.from_bytes(bytes(range(4)), "little"))
        buf[0] = 99
        self.assertEqual(int(t[0, 0]) & 0xFF, 99)   # no copy
        v = t[1:]
        del t
        gc.collect()
        self.assertEqual(died, [])                   # a view still uses the memory
        del v
        gc.collect()
        self.assertEqual(died, [True])

    def test_dtype_map(self):
        import torch
        self.assertIs(td.dtype_map["float16"], torch.float16)
        self.assertIs(td.dtype_map["bfloat16"], torch.bfloat16)
        with self.assertRaises(KeyError):
            td.dtype_map["float3"]


def child_python(test, pythonpath, code):
    """Runs `code` in a child python whose PYTHONPATH is only `pythonpath`; its output words."""
    p = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, PYTHONPATH=pythonpath),
                       capture_output=True, text=True)
    test.assertEqual(p.returncode, 0, p.stderr)
    return p.stdout.split()


class CudaPythonStandIn(unittest.TestCase):
    """python/compat/cuda: the cuda-python calls TileScale's examples make, for machines without
    it (run in a child python whose PYTHONPATH has only python/compat)."""

    def child(self, code):
        return child_python(self, os.path.join(ROOT, "python", "compat"), code)

    def test_names_the_examples_use(self):
        out = self.child(
            "import importlib.metadata as m; print(m.version('cuda-python'))\n"
            "from cuda.bindings import driver as cuda; from cuda import cuda as old, cudart\n"
            "print(int(cuda.CUstreamWaitValue_flags.CU_STREAM_WAIT_VALUE_EQ), "
            "int(old.CUstreamWriteValue_flags.CU_STREAM_WRITE_VALUE_DEFAULT), "
            "int(cudart.cudaMemcpyKind.cudaMemcpyDefault), int(cudart.cudaMemcpyKind.cudaMemcpyDeviceToDevice))\n"
            "print(all(callable(f) for f in (cuda.cuStreamWaitValue32, cuda.cuStreamWaitValue64, "
            "old.cuStreamWriteValue32, cudart.cudaMemcpyAsync)))")
        self.assertEqual(out, ["12.9.0+tilescale.compat", "1", "0", "4", "3", "True"])

    def test_unknown_names_and_kinds_say_so(self):
        out = self.child(
            "from cuda import cuda, cudart\n"
            "try:\n    cuda.cuCtxCreate\nexcept AttributeError as e:\n    print('stand-in' in str(e))\n"
            "(err,) = cudart.cudaMemcpyAsync(0, 0, 0, 77, 0)\nprint(int(err))")
        self.assertEqual(out, ["True", "1"])


class TvmFfiStandIn(unittest.TestCase):
    """python/compat/tvm_ffi_shim: tvm_ffi.use_torch_stream, which TileScale's DeepEP dispatch wraps
    around its kernel call (child python whose PYTHONPATH has only the shim)."""

    def child(self, code):
        return child_python(self, os.path.join(ROOT, "python", "compat", "tvm_ffi_shim"), code)

    def test_use_torch_stream_enters_the_context(self):
        out = self.child(
            "import tvm_ffi\n"
            "class Ctx:\n"
            "    def __enter__(self): print('enter')\n"
            "    def __exit__(self, *a): print('exit', a[0].__name__ if a[0] else None)\n"
            "with tvm_ffi.use_torch_stream(Ctx()):\n    print('body')\n"
            "try:\n    with tvm_ffi.use_torch_stream(Ctx()):\n        raise KeyError(1)\n"
            "except KeyError:\n    print('raised')\n"
            "with tvm_ffi.use_torch_stream():\n    print('none')\n"
            "try:\n    tvm_ffi.Function\nexcept AttributeError as e:\n    print('stand-in' in str(e))")
        self.assertEqual(out, ["enter", "body", "exit", "None", "enter", "exit", "KeyError", "raised", "none", "True"])


if __name__ == "__main__":
    unittest.main(verbosity=1)
