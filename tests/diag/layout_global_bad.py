# T.Layout index maps annotated on tensors (T.annotate_layout({buf: T.Layout(shape, fn)})):
# a forward_fn of the wrong arity, a map that is not a bijection of the shape onto its box
# (folding l // 2 leaves half the tensor's memory unused and two indices on one position),
# a layout made for another shape, a non-integer output, a second different layout for the
# same tensor, and a T.Layout made for another shape than the shared tile it annotates (a
# shared tile takes any T.Layout of its shape: it only picks banks) are refused at the
# annotation; a T.Fragment on a fragment is taken (fragment_bad.py has its misuse).
# tilescale-test: -k bad
import tilelang.language as T


@T.prim_func
def bad(A: T.Tensor((4, 64, 32), "float32"), C: T.Tensor((8, 8), "float32"), D: T.Tensor((8, 8), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.annotate_layout({A: T.Layout(A.shape, lambda b, l: [b, l])})
        T.annotate_layout({A: T.Layout(A.shape, lambda b, l, d: [b, l // 2, d])})
        T.annotate_layout({C: T.Layout((8, 4), lambda i, j: [j, i])})
        T.annotate_layout({C: T.Layout(C.shape, lambda i, j: [i, j * 0.5])})
        T.annotate_layout({D: T.Layout(D.shape, lambda i, j: [j, i])})
        T.annotate_layout({D: T.Layout(D.shape, lambda i, j: [i, j])})
        S = T.alloc_shared((8, 8), "float32")
        T.annotate_layout({S: T.Layout((8, 4), lambda i, j: [j, i])})
        T.copy(S, C)
        f = T.alloc_fragment((8, 8), "float32")
        T.annotate_layout({f: T.Fragment(f.shape, forward_thread_fn=lambda i, j: i * 8 + j, forward_index_fn=lambda i, j: 0)})
        T.copy(f, D)
