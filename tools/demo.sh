#!/bin/sh
# demo.sh CLI — the `make demo` script: compiles examples/elementwise_add.py with the
# tilescale CLI given as the first argument (default build/tilescale) and, when the machine
# has a usable GPU, runs it on random data and prints its time and bandwidth.  Without a
# GPU it prints the generated CUDA, builds a cubin for sm_90a through NVRTC to show the
# whole compile path works, and says that it only compiled.
set -u
CLI=${1:-build/tilescale}
EXAMPLE=examples/elementwise_add.py
DEFS="-k elementwise_add -D M=8192 -D N=8192"

if [ ! -x "$CLI" ]; then
  echo "demo: $CLI not found (run make first)" >&2
  exit 1
fi

echo "== tilescale run $EXAMPLE $DEFS --check"
# shellcheck disable=SC2086
"$CLI" run "$EXAMPLE" $DEFS --check
rc=$?
if [ $rc -eq 0 ]; then
  exit 0
fi
if [ $rc -ne 4 ]; then
  # Exit code 4 means "no usable GPU or driver"; anything else is a real failure.
  echo "demo: tilescale run failed (exit code $rc)" >&2
  exit 1
fi
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  echo "demo: nvidia-smi sees a GPU but tilescale could not use it (see above)" >&2
  exit 1
fi

echo
echo "== tilescale compile $EXAMPLE $DEFS --emit cuda --arch sm_90a"
# shellcheck disable=SC2086
"$CLI" compile "$EXAMPLE" $DEFS --emit cuda --arch sm_90a || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tilescale-demo.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
echo
echo "== tilescale compile $EXAMPLE $DEFS --emit cubin --arch sm_90a -o $tmp/elementwise_add.cubin"
# shellcheck disable=SC2086
"$CLI" compile "$EXAMPLE" $DEFS --emit cubin --arch sm_90a --compiler nvrtc -o "$tmp/elementwise_add.cubin" || exit 1
size=$(wc -c <"$tmp/elementwise_add.cubin" | tr -d ' ')
echo "cubin: $size bytes"
echo "no GPU found: compiled only (NVRTC cubin for sm_90a built)"
