x = 123456789012345678901234567890 + 0xffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff + 1e999999 + 0b2 + 09 + 1__0 + 1_
