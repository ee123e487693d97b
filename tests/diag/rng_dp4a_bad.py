# T.rng_* and T.dp4a misuse: a draw before T.rng_init, a generator there is none of, a float
# seed, a second generator in one kernel, unsupported rng_rand_float options, and dp4a
# operands of the wrong types or forms.
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((64,), "int8"), F: T.Tensor((64,), "float32"), D: T.Tensor((64,), "int32")):
    with T.Kernel(1, threads=64) as bx:
        tx = T.get_thread_binding()
        x = T.rng_rand()
        T.rng_init(1, 0, tx, generator="curandStateSobol32_t")
        T.rng_init(1.5, 0, tx)
        T.rng_init(7, 0, tx)
        T.rng_init(7, 0, tx, generator="curandStateMRG32k3a_t")
        y = T.rng_rand_float(bit=16, dist="gamma")
        a = T.alloc_local((4,), "int8")
        f = T.alloc_local((4,), "float32")
        c = T.alloc_local((1,), "int32")
        T.dp4a(a[0], f[0], c[0])
        T.dp4a(1, a[0], c[0])
        T.dp4a(a[0], a[0], f[0])
