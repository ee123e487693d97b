"""math: the functions of Python's math module that the interpreter does not provide natively
(sqrt, log, exp, floor, ceil, pow, pi ... are native)."""


def gcd(*integers):
    result = 0
    for x in integers:
        a, b = (result if result >= 0 else -result), (x if x >= 0 else -x)
        while b:
            a, b = b, a % b
        result = a
    return result


def lcm(*integers):
    result = 1
    for x in integers:
        if x == 0:
            return 0
        result = result * (x if x >= 0 else -x) // gcd(result, x)
    return result


def isqrt(n):
    if n < 0:
        raise ValueError("isqrt() argument must be nonnegative")
    x = n
    y = (x + 1) // 2
    while y < x:
        x = y
        y = (x + n // x) // 2
    return x
