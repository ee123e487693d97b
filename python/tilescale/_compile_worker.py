"""A compile worker process: reads compile requests, one JSON object per line on stdin, compiles
each with libtilescale into the binary cache folder the request names, and answers one JSON
line per request on stdout ({"ok": true} or {"ok": false, "error": text}).

NVRTC does not scale past about four threads of one process (measured on the 16-core H100
machine: 0.12 s per compile with 4, 8 or 14 threads; separate processes keep scaling), so
tilelang's parallel compiles (the autotuner) hand requests to several of these workers; the
caller then compiles each kernel again in-process and finds its binary in the cache.  Nothing
here touches the GPU.  Request keys: path, source (the file's text to compile instead of the
file itself, or null), func, arch (null: the device's), compiler, params ({name: -D text}),
cache_dir, private (the folder is a temporary one: used even when the cache is off),
module_path (the caller's import folders; null: this process's)."""
import json
import sys


def _compile(ts, contexts, req):
    ctx = contexts.get(req["cache_dir"])
    if ctx is None:
        ctx = contexts[req["cache_dir"]] = ts.Context(cache_dir=req["cache_dir"],
                                                      private_cache=bool(req.get("private")))
    if req.get("source") is not None:
        prog = ctx.load_source(req["path"], req["source"])
    else:
        prog = ctx.load(req["path"])
    params = {k: ts.DType(v) for k, v in req["params"].items()}
    prog.compile(req["func"], req.get("arch"), params=params,
                 compiler=req.get("compiler") or "nvrtc", pass_configs=req.get("pass_configs") or None,
                 module_path=req.get("module_path"))


def main():
    import tilescale as ts
    contexts = {}
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            _compile(ts, contexts, json.loads(line))
            answer = {"ok": True}
        except Exception as e:  # noqa: BLE001 (reported to the caller, which compiles again)
            answer = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
