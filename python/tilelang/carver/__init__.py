"""tilelang.carver: only the device queries host code uses (carver.arch.driver)."""
