"""cuda: TileScale's stand-in for cuda-python on machines without it (python/compat/README.md).
`from cuda import cuda` / `cudart` and `from cuda.bindings import driver` / `runtime`."""
