#!/bin/sh
# pack_peer.sh — packs the peer's wheels (../shared/peer/fetch-tilelang.sh writes them to .peer/a
# and .peer/b, about 80 MB: two device calls to install) into one xz tarball of their unpacked
# files (about 38 MB), so that one device call carries TileLang with the corpus beside it and
# `make bench-tilelang PEER_TAR=...` unpacks it on the GPU machine.  A wheel is a zip of files
# laid out for site-packages, so unpacking it is what `pip install --no-deps --target` does,
# less its .data folders (headers and scripts TileLang does not load).
#
#   bench/tilelang/pack_peer.sh [OUT.tar.xz] [WHEEL_DIR...]   (defaults: .peer/all/peer.tar.xz .peer/a .peer/b)
set -eu
out=${1:-.peer/all/peer.tar.xz}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- .peer/a .peer/b
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
n=0
for dir in "$@"; do
  for whl in "$dir"/*.whl; do
    [ -f "$whl" ] || { echo "pack_peer.sh: no wheels in $dir (run ../shared/peer/fetch-tilelang.sh)" >&2; exit 2; }
    python3 -m zipfile -e "$whl" "$stage"
    n=$((n + 1))
  done
done
[ -d "$stage/tilelang" ] || { echo "pack_peer.sh: no tilelang package among the $n wheels" >&2; exit 2; }
mkdir -p "$(dirname "$out")"
echo "pack_peer.sh: $n wheels -> $out (xz, a few minutes on 2 cores)" >&2
tar -C "$stage" --exclude='./*.data' -cf - . | xz -9 -T0 > "$out.tmp"
mv "$out.tmp" "$out"
ls -l "$out" >&2
