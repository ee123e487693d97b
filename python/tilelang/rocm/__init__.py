"""tilelang.rocm: TileLang's AMD backend.  TileScale compiles for CUDA only; what host code asks
of it (is HIP available, the warp size of an AMD arch) is answered here."""
