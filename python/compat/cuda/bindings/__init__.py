"""cuda.bindings: driver and runtime of TileScale's cuda-python stand-in."""
