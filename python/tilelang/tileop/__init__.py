"""tilelang.tileop: host placeholders of tile-operator enums."""
