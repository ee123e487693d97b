"""tilelang.transform.simplify: TileLang's TIR simplifier entry points.  TileScale's compiler
simplifies while it lowers (and Python never holds TIR), so both give back what they are given."""


def simplify_prim_func(func):
    """The decorator form: a factory whose result TileLang would simplify."""
    return func


def apply_simplify(stmt):
    """A prim_func (or what a factory returns) TileLang would simplify."""
    return stmt
