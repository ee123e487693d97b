import tilelang.language as T
x = [1, 2, (3, {4: 5}), "s" 'q' f"{x!r:>{w}}" b"\x00" r"\d" """multi
line"""]
y = x[1:2:-1] if not x else (lambda *a, **k: a)(*x, **{})
async def co():
    await co()
    async with a as (b, c): pass
class C(object, metaclass=M):
    def __init__(self, /, a, *, b=3) -> None:
        self.a: int = a @ b
        del self.a
        global g
        try:
            raise ValueError("x") from None
        except (ValueError, KeyError) as e:
            pass
        finally:
            yield from range(3)
match x:
    case [1, *rest]:
        pass
z = 0x1F + 0o17 + 0b101 + 1_000 + 1.5e-3 + 3j + ~1 ** -2 << 3 >> 1 & 7 | 8 ^ 9
if (n := len(x)) > 2: print(n, sep="")
