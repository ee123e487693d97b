"""Layouts built by host code (`T.Layout`, `T.Fragment` and the bank-swizzle helpers called at
module level, as TileLang's plot_layout examples do), for printing and tilelang.tools.plot_layout.

Inside a kernel these names belong to the C compiler, which evaluates the kernel from its source;
CPython only meets them in host code.  There a layout is a table: the user's index functions
(plain Python callables over plain ints) are called once per element of the input shape, the way
TileLang's host side evaluates them.  Nothing here is compiled or lowered."""
import itertools


def _ints(values, what):
    out = []
    for v in values:
        if isinstance(v, bool) or not hasattr(v, "__index__"):
            raise TypeError("%s: expected integers, got %r" % (what, v))
        out.append(v.__index__())
    return out


def _as_tuple(value):
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _extents(points):
    """The shape [max + 1 per dimension] covering index tuples `points`."""
    points = list(points)
    return [max(p[d] for p in points) + 1 for d in range(len(points[0]))]


def flat_index(idx, shape):
    """Row-major position of index tuple idx in shape (and of an output in its extents)."""
    flat = 0
    for d, s in zip(idx, shape):
        flat = flat * s + d
    return flat


class Layout:
    """T.Layout(shape, forward_fn): each index of `shape` maps to a tuple of output indices."""

    def __init__(self, shape, forward_fn):
        self.shape = _ints(_as_tuple(shape), "T.Layout shape")
        if not self.shape or any(s <= 0 for s in self.shape):
            raise ValueError("T.Layout: the shape needs positive extents, got %s" % (self.shape,))
        if not callable(forward_fn):
            raise TypeError("T.Layout: forward_fn must be callable, got %r" % (forward_fn,))
        self.table = {}
        for idx in itertools.product(*(range(s) for s in self.shape)):
            self.table[idx] = tuple(_ints(_as_tuple(forward_fn(*idx)), "T.Layout forward_fn%s" % (idx,)))
        ranks = {len(v) for v in self.table.values()}
        if len(ranks) != 1:
            raise ValueError("T.Layout: forward_fn returns tuples of different lengths %s" % sorted(ranks))

    @classmethod
    def _from_table(cls, shape, table):
        lay = cls.__new__(cls)
        lay.shape, lay.table = list(shape), table
        return lay

    def is_equal(self, other):
        """The same shape and every index mapped to the same output (however it was written)."""
        return isinstance(other, Layout) and self.shape == other.shape and self.table == other.table

    def repeat(self, dim, factor):
        """The layout tiled `factor` times along input dimension `dim`: index i there maps to
        (i // extent,) + this layout at i % extent."""
        (dim, factor) = _ints([dim, factor], "Layout.repeat")
        n = len(self.shape)
        if factor < 1:
            raise ValueError("Layout.repeat: factor must be at least 1, got %d" % factor)
        if not -n <= dim < n:
            raise ValueError("Layout.repeat: dim %d is outside the %d input dimensions" % (dim, n))
        if factor == 1:
            return self
        dim %= n
        ext = self.shape[dim]
        shape = self.shape[:dim] + [ext * factor] + self.shape[dim + 1:]
        table = {}
        for idx in itertools.product(*(range(s) for s in shape)):
            base = idx[:dim] + (idx[dim] % ext,) + idx[dim + 1:]
            table[idx] = (idx[dim] // ext,) + self.table[base]
        return Layout._from_table(shape, table)

    def expand(self, leading):
        """New leading input dimensions of extents `leading` (an int or a sequence), each passed
        through as a leading output index."""
        if isinstance(leading, (str, bytes)):
            raise TypeError("Layout.expand: expected an int or a sequence of ints, got %r" % (leading,))
        leading = _ints(_as_tuple(leading), "Layout.expand")
        if any(e < 1 for e in leading):
            raise ValueError("Layout.expand: extents must be positive, got %s" % (leading,))
        if not leading:
            return self
        table = {}
        for lead in itertools.product(*(range(e) for e in leading)):
            for idx, out in self.table.items():
                table[lead + idx] = lead + out
        return Layout._from_table(list(leading) + self.shape, table)

    def map_indices(self, indices):
        return list(self.table[tuple(_ints(indices, "map_indices"))])

    def get_input_shape(self):
        return list(self.shape)

    def get_output_shape(self):
        return _extents(self.table.values())

    def is_bijective(self):
        return len(set(self.table.values())) == len(self.table)

    def __repr__(self):
        return "Layout(%s -> %s)" % (self.get_input_shape(), self.get_output_shape())


class Fragment:
    """T.Fragment(shape, forward_thread_fn=..., forward_index_fn=..., replicate=1) or
    T.Fragment(shape, forward_fn=...) returning (thread, index): which thread holds each element,
    and where in that thread's registers.  With replicate=R the thread function takes the replica
    number as a last argument and R threads hold each element."""

    def __init__(self, shape, forward_thread_fn=None, forward_index_fn=None, replicate=1, forward_fn=None):
        self.shape = _ints(_as_tuple(shape), "T.Fragment shape")
        if not self.shape or any(s <= 0 for s in self.shape):
            raise ValueError("T.Fragment: the shape needs positive extents, got %s" % (self.shape,))
        (self.replicas,) = _ints([replicate], "T.Fragment replicate")
        if self.replicas < 1:
            raise ValueError("T.Fragment: replicate must be at least 1, got %d" % self.replicas)
        if forward_fn is None and forward_thread_fn is None:
            raise TypeError("T.Fragment needs forward_fn or forward_thread_fn (with forward_index_fn, or no "
                            "register index)")
        self._fns = (forward_fn, forward_thread_fn, forward_index_fn)  # for tilelang_param_text
        self.threads, self.index = {}, {}
        for idx in itertools.product(*(range(s) for s in self.shape)):
            reps = []
            for r in range(self.replicas):
                args = idx + ((r,) if self.replicas > 1 else ())
                if forward_fn is not None:
                    got = _as_tuple(forward_fn(*args))
                    if len(got) < 2:
                        raise ValueError("T.Fragment: forward_fn%s must return (thread, index...)" % (args,))
                    thread, local = got[0], got[1:]
                else:
                    thread = forward_thread_fn(*args)
                    local = _as_tuple(forward_index_fn(*idx)) if forward_index_fn is not None else ()
                reps.append(_ints([thread], "T.Fragment thread of %s" % (idx,))[0])
                self.index[idx] = tuple(_ints(local, "T.Fragment index of %s" % (idx,)))
            self.threads[idx] = tuple(reps)

    @classmethod
    def _from_tables(cls, shape, threads, index, replicate):
        f = cls.__new__(cls)
        f.shape, f.threads, f.index, f.replicas = list(shape), threads, index, replicate
        f._fns = None
        return f

    def tilelang_param_text(self):
        """This fragment as a kernel parameter (`loop_layout=` of T.Parallel / T.copy): the
        T.Fragment call that makes it, its functions as lambda text (straight-line functions:
        tilelang._compiler.function_text), which the compiler evaluates itself."""
        from ._compiler import function_text
        if self._fns is None:
            raise TypeError("tilelang: a fragment made by repeat() or replicate() on the host cannot be "
                            "passed to the compiler; build it with T.Fragment(shape, forward_fn=...)")
        texts = []
        for name, fn in zip(("forward_fn", "forward_thread_fn", "forward_index_fn"), self._fns):
            if fn is None:
                continue
            t = function_text(fn)
            if t is None:
                raise TypeError("tilelang: T.Fragment's %s %r cannot be passed to the compiler: it must be a "
                                "lambda or a function of assignments and a return, reading no enclosing "
                                "variables" % (name, fn))
            texts.append("%s=%s" % (name, t))
        shape = "(%s,)" % self.shape[0] if len(self.shape) == 1 else "(%s)" % ", ".join(map(str, self.shape))
        return "T.Fragment(%s, %s, replicate=%d)" % (shape, ", ".join(texts), self.replicas)

    def repeat(self, repeats, repeat_on_thread=False, lower_dim_first=True):
        """The fragment tiled `repeats` times along each input dimension.  Copy number
        c (row-major over the repeats with lower_dim_first, the first dimension fastest
        otherwise) goes to threads + c * thread count (repeat_on_thread), or to registers
        + c * register count of a one-dimensional register index."""
        repeats = _ints(_as_tuple(repeats), "Fragment.repeat")
        if len(repeats) != len(self.shape) or any(r < 1 for r in repeats):
            raise ValueError("Fragment.repeat: one positive count per input dimension %s, got %s"
                             % (self.shape, repeats))
        regs = self.get_output_shape()
        if not repeat_on_thread and len(regs) != 1:
            raise ValueError("Fragment.repeat on registers needs a one-dimensional register index, got %s" % regs)
        nthreads = self.get_thread_size()
        order = range(len(self.shape) - 1, -1, -1) if lower_dim_first else range(len(self.shape))
        threads, index = {}, {}
        for idx in itertools.product(*(range(s * r) for s, r in zip(self.shape, repeats))):
            base = tuple(i % s for i, s in zip(idx, self.shape))
            copy, stride = 0, 1
            for d in order:
                copy += stride * (idx[d] // self.shape[d])
                stride *= repeats[d]
            if repeat_on_thread:
                threads[idx] = tuple(t + nthreads * copy for t in self.threads[base])
                index[idx] = self.index[base]
            else:
                threads[idx] = self.threads[base]
                index[idx] = (self.index[base][0] + regs[0] * copy,)
        return Fragment._from_tables([s * r for s, r in zip(self.shape, repeats)], threads, index, self.replicas)

    def replicate(self, copies):
        """Each element also held by `copies` times as many threads: replica r of the result is
        replica r % R of this one on threads + (r // R) * thread count."""
        (copies,) = _ints([copies], "Fragment.replicate")
        if copies < 1:
            raise ValueError("Fragment.replicate: at least 1 copy, got %d" % copies)
        nthreads = self.get_thread_size()
        threads = {idx: tuple(ts[r % len(ts)] + nthreads * (r // len(ts)) for r in range(len(ts) * copies))
                   for idx, ts in self.threads.items()}
        return Fragment._from_tables(self.shape, threads, dict(self.index), self.replicas * copies)

    def is_equal(self, other):
        """The same shape and replication, every element on the same threads and registers."""
        return (isinstance(other, Fragment) and self.shape == other.shape and self.replicas == other.replicas
                and self.threads == other.threads and self.index == other.index)

    def map_indices(self, indices):
        idx = tuple(_ints(indices, "map_indices"))
        return [self.threads[idx][0]] + list(self.index[idx])

    def get_input_shape(self):
        return list(self.shape)

    def get_thread_size(self):
        return max(t for ts in self.threads.values() for t in ts) + 1

    def get_output_shape(self):
        return _extents(self.index.values()) if any(self.index.values()) else []

    def __repr__(self):
        return "Fragment(%s -> threads %d, registers %s%s)" % (
            self.get_input_shape(), self.get_thread_size(), self.get_output_shape(),
            ", replicate %d" % self.replicas if self.replicas > 1 else "")


# The bank-swizzled shared-memory layouts (tilelang.layout.make_*_bank_swizzled_layout) on a
# [rows, cols] tile of element_size-bit elements: the 16-byte chunk of a row is XORed with the
# row's bits above the swizzle span, the pattern TMA and wgmma use (and the compiler's swizzled
# tiles: 128 B spans XOR the chunk with row % 8).
_SWIZZLE_BYTES = {"quarter": 32, "half": 64, "full": 128}


def bank_swizzled_layout(kind, rows, cols, element_size):
    rows, cols, element_size = _ints([rows, cols, element_size], "make_%s_bank_swizzled_layout" % kind)
    span = _SWIZZLE_BYTES[kind]
    if element_size not in (8, 16, 32, 64):
        raise ValueError("make_%s_bank_swizzled_layout: element_size is in bits (8, 16, 32 or 64), got %d"
                         % (kind, element_size))
    per_span = span * 8 // element_size       # elements in one swizzle span
    per_chunk = 128 // element_size           # elements in one 16-byte chunk
    chunks = span // 16
    if rows <= 0 or cols <= 0 or cols % per_span:
        raise ValueError("make_%s_bank_swizzled_layout: a row of %d elements is not a whole number of "
                         "%d-byte spans (%d elements of %d bits)" % (kind, cols, span, per_span, element_size))
    rows_per_phase = 128 // span              # rows sharing one XOR value (128 B = 8 chunks per bank line)

    def forward(i, j):
        span_idx, within = divmod(j, per_span)
        chunk, lane = divmod(within, per_chunk)
        chunk ^= (i // rows_per_phase) % chunks
        return i, span_idx * per_span + chunk * per_chunk + lane
    return Layout([rows, cols], forward)
