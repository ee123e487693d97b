x = "abc
"
y = '''
z = b"\xzz\N{foo}\u12" + "\777"
