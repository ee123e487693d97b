# TileScale-C — one Makefile.  `make demo` builds and runs an example, `make test` runs the
# CPU suite (CI), `make check-gpu` the GPU suite, `make bench` the benchmarks.
CUDA_HOME ?= $(shell d=$$(dirname $$(dirname $$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc))); echo $$d)
CC       ?= gcc
BUILD    ?= build
OPT      ?= -O2
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror=implicit-function-declaration
CFLAGS   += -std=c11 $(OPT) -g $(WARN) -D_GNU_SOURCE -fPIC -fvisibility=hidden -Iinclude -I$(CUDA_HOME)/include $(EXTRA_CFLAGS)
LDLIBS   += -ldl -lm -lpthread

LIB_SRC  := $(sort $(wildcard src/base/*.c src/front/*.c src/ir/*.c src/layout/*.c src/pass/*.c \
                              src/codegen/*.c src/driver/*.c src/rt/*.c src/distributed/*.c))
GEN_SRC  := $(BUILD)/gen/device_headers.c $(BUILD)/gen/prelude_files.c
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(GEN_SRC:$(BUILD)/gen/%.c=$(BUILD)/obj/gen/%.o)
DEV_HDRS := $(sort $(wildcard device/tilescale/*.cuh))
PRELUDE  := $(sort $(shell find src/front/prelude -name '*.py'))
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o)
GPU_SRC  := $(filter-out tests/gpu/test_gemm.c,$(sort $(wildcard tests/gpu/*.c)))

# The C call path of the Python packages (python/tilescale/_fastcall.c), built beside the
# library for $(PYTHON) when its headers are there; without it the packages take their Python
# path.  It includes only tilescale.h and Python.h (no torch, no link against the library).
PYTHON   ?= python3
PY_CFG   := $(shell $(PYTHON) -c 'import sysconfig as s; print(s.get_paths()["include"], s.get_config_var("EXT_SUFFIX") or "")' 2>/dev/null)
PY_INC   := $(word 1,$(PY_CFG))
PY_EXT   := $(word 2,$(PY_CFG))
FASTCALL := $(if $(and $(PY_EXT),$(wildcard $(PY_INC)/Python.h)),$(BUILD)/_fastcall$(PY_EXT))

LIB_A    := $(BUILD)/libtilescale.a
LIB_SO   := $(BUILD)/libtilescale.so
CLI      := $(BUILD)/tilescale

.PHONY: all lib fastcall demo test check-corpus check-gpu check-dist bench bench-dist bench-tilelang asan clean format \
        install uninstall check-tilelang-scripts check-tilescale-scripts check-corpus-gpu
all: $(LIB_A) $(LIB_SO) $(CLI) $(FASTCALL)
lib: $(LIB_A) $(LIB_SO) $(FASTCALL)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 $(WARN) $< -o $@

# The embedded file lists, rewritten only when they change: a header or prelude module
# removed (or renamed) regenerates the embedding too, not only one added or edited.
$(shell mkdir -p $(BUILD)/gen)
embed_list = $(if $(filter-out $(strip $(file < $(1))),$(2))$(filter-out $(2),$(strip $(file < $(1)))),$(file > $(1),$(2)))
$(call embed_list,$(BUILD)/gen/device.list,$(DEV_HDRS))
$(call embed_list,$(BUILD)/gen/prelude.list,$(PRELUDE))

$(BUILD)/gen/device_headers.c: $(BUILD)/tools/embed $(DEV_HDRS) $(BUILD)/gen/device.list
	@mkdir -p $(dir $@)
	$(BUILD)/tools/embed $@ ts_device_headers device $(DEV_HDRS)

$(BUILD)/gen/prelude_files.c: $(BUILD)/tools/embed $(PRELUDE) $(BUILD)/gen/prelude.list
	@mkdir -p $(dir $@)
	$(BUILD)/tools/embed $@ ts_prelude_files src/front/prelude $(PRELUDE)

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO): $(LIB_OBJ)
	$(CC) -shared -o $@ $^ $(LDLIBS)

fastcall: $(FASTCALL)
ifneq ($(FASTCALL),)
$(FASTCALL): python/tilescale/_fastcall.c include/tilescale.h
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O2 -g $(WARN) -fPIC -fvisibility=hidden -shared -Iinclude -I$(PY_INC) $< -o $@
endif

# The CLI: tilescale.c dispatches the subcommands; launch*.c is `tilescale launch`.
CLI_SRC  := $(sort $(wildcard cli/*.c))
$(CLI): $(CLI_SRC:%.c=$(BUILD)/obj/%.o) $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

# The unit tests run `tilescale launch` (the CLI next to them) for the launcher's cases.
$(BUILD)/test_unit: $(UNIT_OBJ) $(LIB_A) | $(CLI)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/test_gpu: $(GPU_SRC:%.c=$(BUILD)/obj/%.o) $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/bench: $(BUILD)/obj/bench/bench.o $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

# GEMM tests (CPU reference) and the GEMM benchmark (cuBLAS, linked into this binary only).
$(BUILD)/test_gemm: $(BUILD)/obj/tests/gpu/test_gemm.o $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/bench_gemm: $(BUILD)/obj/bench/bench_gemm.o $(LIB_A)
	$(CC) -o $@ $^ -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcublasLt -lcublas -lcudart $(LDLIBS)

# Builds, compiles an example kernel, and runs it on the GPU when there is one
# (otherwise prints the generated CUDA and says it only compiled).
demo: all
	@./tools/demo.sh $(CLI)

# The CPU suite (CI): unit tests, golden IR, diagnostics, codegen, NVRTC compile of every
# example for sm_80 and sm_90a, the corpus check (check-corpus).  Ends with "N passed, N failed".
test: all $(BUILD)/test_unit $(BUILD)/fuzz_replay
	@./tests/run.sh $(BUILD)

# The corpus (TileLang's and TileScale's example kernels, CORPUS=../shared/corpus by default): every
# `hopper` row of tests/corpus/manifest.tsv compiled to PTX for sm_90a; fails when a row listed in
# tests/corpus/baseline.txt stops compiling or the manifest misses a factory.  Also the last step of
# `make test`.  `python3 tests/corpus/check_corpus.py --update` records rows that newly compile.
CORPUS ?= ../shared/corpus
check-corpus: all
	@python3 tests/corpus/check_corpus.py --corpus $(CORPUS) --cli $(CLI)

# TileLang's example scripts, unchanged, with this project's `tilelang` package (GPU machine, one
# call): every Hopper-relevant script of $(CORPUS)/tilelang/examples and TileLang's own
# test_example_*.py beside them (under pytest), by tests/corpus/run_scripts.py: one line per file
# (PASS, WRONG, COMPILE, MISSING, TIMEOUT, ERROR and why), the totals, "N passed, N failed".
# Fails when a script gives a WRONG result.  SCRIPTS_J scripts at a time, SCRIPTS_TIMEOUT seconds
# each, SCRIPTS_ONLY=SUBSTR for some of them, SCRIPTS_ARGS for more (--shard I/N, --json F).
SCRIPTS_J       ?= 8
SCRIPTS_TIMEOUT ?= 240
SCRIPTS_ONLY    ?=
SCRIPTS_ARGS    ?=
# TileScale's distributed example scripts, unchanged, through `tilescale launch` (2+ GPUs):
# tests/dist/host_api.py first, then every script (NDEV ranks; SCRIPTS_ONLY=substr,...).
check-tilescale-scripts: all
	@test -d $(CORPUS)/tilescale/examples/distributed || { echo "check-tilescale-scripts: no $(CORPUS)/tilescale/examples/distributed (set CORPUS=DIR)"; exit 2; }
	PYTHONUNBUFFERED=1 $(PYTHON) tests/dist/run_corpus_dist.py $(CORPUS) -n $${NDEV:-2} --cli $(CLI) \
	    $(if $(SCRIPTS_ONLY),--only $(SCRIPTS_ONLY))

check-tilelang-scripts: all
	@test -d $(CORPUS)/tilelang/examples || { echo "check-tilelang-scripts: no $(CORPUS)/tilelang/examples (set CORPUS=DIR)"; exit 2; }
	TILESCALE_LIB=$(abspath $(LIB_SO)) PYTHONUNBUFFERED=1 $(PYTHON) tests/corpus/run_scripts.py $(CORPUS)/tilelang/examples \
	    --tests -j $(SCRIPTS_J) --timeout $(SCRIPTS_TIMEOUT) $(if $(SCRIPTS_ONLY),--only $(SCRIPTS_ONLY)) $(SCRIPTS_ARGS)

# The corpus on the GPU (one H100/H200): every compiled corpus kernel family at its files' sizes
# against an independent torch reference (tests/corpus/regress_gpu.py), then TileLang's example
# scripts unchanged, each checked by the file's own reference (check-tilelang-scripts).
check-corpus-gpu: all
	@test -d $(CORPUS)/tilelang/examples || { echo "check-corpus-gpu: no $(CORPUS)/tilelang/examples (set CORPUS=DIR)"; exit 2; }
	TILESCALE_LIB=$(abspath $(LIB_SO)) PYTHONPATH=$(abspath python) PYTHONUNBUFFERED=1 $(PYTHON) tests/corpus/regress_gpu.py $(CORPUS)/tilelang/examples
	$(MAKE) check-tilelang-scripts

check-gpu: all $(BUILD)/test_gpu $(BUILD)/test_gemm
	$(BUILD)/test_gpu
	$(BUILD)/test_gemm

$(BUILD)/test_dist_smoke: $(BUILD)/obj/tests/dist/dist_smoke.o $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

# Distributed examples: TileLang kernels (examples/dist/*.py) with their C host programs.
DIST_EXAMPLES := ring_shift allgather all_to_all_signal attn_all2all
DIST_EX_BINS  := $(DIST_EXAMPLES:%=$(BUILD)/examples/dist/%)
$(BUILD)/examples/dist/%: $(BUILD)/obj/examples/dist/%.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) -o $@ $^ $(LDLIBS)

# Distributed GPU tests (2 or 4 GPUs): every test program and example under `tilescale launch`,
# on both backends (on nvshmem, programs print SKIP with the reason when NVSHMEM is missing).
# TILESCALE_WAIT_TIMEOUT_MS turns a hang into a reported trap.  test_dist_prims covers every
# primitive (tests/dist/*.py, prims.cu); check_wait_timeout.sh checks the trap itself.
# Every program prints PASS/FAIL lines; the target ends with one line per program and backend.
DIST_TEST_BINS := $(BUILD)/test_dist_smoke $(BUILD)/test_dist_prims
$(BUILD)/test_dist_prims: $(BUILD)/obj/tests/dist/dist_prims.o $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/test_dist_wait_timeout: $(BUILD)/obj/tests/dist/wait_timeout.o $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

# DIST_BACKENDS picks the backends (default both), DIST_TIMEOUT the launcher's limit per program.
DIST_BACKENDS ?= ipc nvshmem
DIST_TIMEOUT  ?= 300
check-dist: all $(DIST_TEST_BINS) $(BUILD)/test_dist_wait_timeout $(DIST_EX_BINS)
	@NDEV=$${NDEV:-2}; export TILESCALE_WAIT_TIMEOUT_MS=$${TILESCALE_WAIT_TIMEOUT_MS:-20000} NVSHMEM_DISABLE_NVLS=1; \
	fail=0; summary=""; for be in $(DIST_BACKENDS); do \
	  for p in $(DIST_TEST_BINS) $(DIST_EX_BINS); do \
	    echo "== $$be: $$p"; \
	    if TILESCALE_DIST_BACKEND=$$be $(CLI) launch --timeout $(DIST_TIMEOUT) -n $$NDEV $$p; then summary="$$summary\nPASS $$be $$p"; \
	    else echo "FAILED $$be $$p"; summary="$$summary\nFAIL $$be $$p"; fail=1; fi; \
	  done; \
	  echo "== $$be: wait-timeout trap"; \
	  if TILESCALE_DIST_BACKEND=$$be sh tests/dist/check_wait_timeout.sh $(CLI) $(BUILD)/test_dist_wait_timeout; then \
	    summary="$$summary\nPASS $$be wait-timeout trap"; else summary="$$summary\nFAIL $$be wait-timeout trap"; fail=1; fi; \
	done; printf "== check-dist summary (NDEV=$$NDEV)$$summary\n"; exit $$fail

# all-gather and all-to-all against NCCL (dlopen'd), 4 GPUs by default; then TileScale's own
# overlapped AG-GEMM, GEMM-RS and SP attention (the example files of $(CORPUS)) against torch's
# serial cuBLAS + NCCL path (bench/dist/bench_overlap.py; BENCH_OVERLAP_ARGS=--small for quick
# shapes, --only NAME,...).  Skipped with a message when the corpus or torch is missing.
$(BUILD)/bench_dist: $(BUILD)/obj/bench/bench_dist.o $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

bench-dist: all $(BUILD)/bench_dist
	@NDEV=$${NDEV:-4}; rc=0; export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1; \
	echo "TILESCALE_DIST_HEAP_BYTES=2684354560 $(CLI) launch -n $$NDEV $(BUILD)/bench_dist"; \
	TILESCALE_DIST_HEAP_BYTES=2684354560 $(CLI) launch --timeout $${BENCH_DIST_TIMEOUT:-900} -n $$NDEV $(BUILD)/bench_dist || rc=1; \
	if [ ! -d "$(CORPUS)/tilescale/examples/distributed" ]; then \
	  echo "bench-dist: no TileScale examples at $(CORPUS)/tilescale/examples/distributed: overlapped AG-GEMM / GEMM-RS / SP attention skipped (set CORPUS=DIR)"; \
	elif ! $(PYTHON) -c "import torch" >/dev/null 2>&1; then \
	  echo "bench-dist: $(PYTHON) has no torch: overlapped AG-GEMM / GEMM-RS / SP attention skipped"; \
	else \
	  echo "$(CLI) launch -n $$NDEV $(PYTHON) bench/dist/bench_overlap.py --corpus $(CORPUS) $(BENCH_OVERLAP_ARGS)"; \
	  PYTHONUNBUFFERED=1 TILESCALE_LIB=$(abspath $(LIB_SO)) $(CLI) launch --timeout $${BENCH_DIST_TIMEOUT:-900} -n $$NDEV \
	    $(PYTHON) bench/dist/bench_overlap.py --corpus $(CORPUS) $(BENCH_OVERLAP_ARGS) || rc=1; \
	fi; exit $$rc

bench: all $(BUILD)/bench $(BUILD)/bench_gemm
	$(BUILD)/bench
	$(BUILD)/bench_gemm

# TileLang's own example files (bench/tilelang/bench_cases.py: one row each, the file's own
# configuration and sizes) through TileLang 0.1.15 in PEER (../shared/peer/README.md installs it)
# and through this project: same inputs, both checked against torch, timed alternately, one table
# of torch / TileLang / ours and ours/TileLang with the geomean (GPU machine).  BENCH_ONLY=substr,...
# for some rows (a whole run outlasts one 10-minute device call: split it in three, e.g.
# `gemm,deepgemm,dequant,convolution`, `mha_,gqa_,flash_decoding,mla_` and
# `mamba,elementwise,rms_norm,layernorm,online_softmax,per_token,gemv,topk`), BENCH_JSON=FILE to
# append each row as a JSON line, BENCH_ROUNDS alternations per row (default 2).  PEER_TAR=FILE
# (bench/tilelang/pack_peer.sh: all the peer's wheels in one 38 MB file, one device call with the
# corpus beside it instead of two installs) is unpacked into PEER when PEER has no TileLang yet.
# BENCH_TUNED=1 runs the best-configuration rows instead (GEMM, FA forward, MLA decode: one
# menu of configurations swept in both systems, each keeping its fastest right one).  GB/s
# rows also print a device-to-device copy of the same bytes and ours/copy.  BENCH_AB=KEY=VALUE,...
# also times ours built with those pass configs in the same rounds (an A/B of a compiler switch
# without the drift between separate runs) and prints its speed over ours as built.
# BENCH_PROFILE=1 also prints each system's kernels under torch.profiler: their summed time per
# call and the span of the call on the GPU (the difference: gaps the host leaves).
PEER         ?= /tmp/peer
PEER_TAR     ?=
BENCH_ONLY   ?=
BENCH_JSON   ?=
BENCH_ROUNDS ?= 2
BENCH_AHEAD  ?= 4
BENCH_TUNED  ?=
BENCH_AB     ?=
BENCH_PROFILE ?=
bench-tilelang: all
	@test -d $(CORPUS)/tilelang/examples || { echo "bench-tilelang: no $(CORPUS)/tilelang/examples (set CORPUS=DIR)"; exit 2; }
	@if [ ! -d $(PEER)/tilelang ] && [ -n "$(PEER_TAR)" ]; then mkdir -p $(PEER) && xz -dc $(PEER_TAR) | tar -xf - -C $(PEER); fi
	@test -d $(PEER)/tilelang || { echo "bench-tilelang: no TileLang in $(PEER) (../shared/peer/README.md; set PEER=DIR, or PEER_TAR=FILE from bench/tilelang/pack_peer.sh)"; exit 2; }
	TILESCALE_LIB=$(abspath $(LIB_SO)) PYTHONUNBUFFERED=1 $(PYTHON) bench/tilelang/bench_vs_tilelang.py \
	    $(CORPUS)/tilelang/examples --peer $(PEER) --rounds $(BENCH_ROUNDS) --ahead $(BENCH_AHEAD) $(if $(BENCH_ONLY),--only "$(BENCH_ONLY)") $(if $(BENCH_TUNED),--tuned) \
	    $(if $(BENCH_JSON),--json $(BENCH_JSON)) $(if $(BENCH_AB),--ab "$(BENCH_AB)") \
	    $(if $(BENCH_PROFILE),--profile)

# The whole CPU suite under AddressSanitizer + UndefinedBehaviorSanitizer.
# float-cast-overflow is not part of gcc's "undefined" group (clang's fuzz build has it).
# Leaks are checked too (LSan, on by default); the fuzz corpus replay (tests/fuzz) runs under both.
# use_tls=0: gcc 12's LSan reads a bogus dynamic-TLS range once NVRTC has set thread-local data
# (glibc 2.36) and its tracer crashes; tests/lsan.supp names the one glibc block this hides.
# CORPUS_TIMEOUT: the sanitizers slow the compiler down several times; corpus rows get 120 s each.
ASAN_SAN := -fsanitize=address,undefined,float-cast-overflow
asan:
	CORPUS_TIMEOUT=$${CORPUS_TIMEOUT:-120} LSAN_OPTIONS="use_tls=0:suppressions=$(abspath tests/lsan.supp)$${LSAN_OPTIONS:+:$$LSAN_OPTIONS}" \
	$(MAKE) BUILD=build-asan OPT="-O1 $(ASAN_SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all" \
	        LDLIBS="-ldl -lm -lpthread $(ASAN_SAN)" test

# ---- fuzzing (tests/fuzz/): libFuzzer + ASan + UBSan over lexer, parser, evaluator, passes, codegen.
# The committed corpus (tests/fuzz/corpus) and seeds are read-only inputs: `make fuzz` never
# writes under tests/.  libFuzzer writes new finds only to its first corpus folder,
# $(FUZZ_CORPUS) (build-fuzz/corpus, ignored by git), which persists across runs, so repeated
# runs build on each other.  `make fuzz-promote` then copies into tests/fuzz/corpus only the
# finds that add edge coverage over it (-merge=1 -use_counters=0): review `git status
# tests/fuzz/corpus` and commit what it added.
# A crash, leak or timeout stops the run and leaves the input as $(FUZZ_BUILD)/crash-* / leak-* / timeout-*.
FUZZ_SECONDS ?= 600
FUZZ_BUILD   ?= build-fuzz
FUZZ_CORPUS  ?= $(FUZZ_BUILD)/corpus
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
FUZZ_FLAGS   := -timeout=10 -rss_limit_mb=2048 -max_len=8192 -detect_leaks=1 -dict=tests/fuzz/tilelang.dict \
                -print_final_stats=1 -artifact_prefix=$(FUZZ_BUILD)/
FUZZ_BIN     := $(FUZZ_BUILD)/fuzz_front

.PHONY: fuzz fuzz-build fuzz-promote
fuzz-build:
	$(MAKE) BUILD=$(FUZZ_BUILD) CC=clang OPT="-O1 -fsanitize=fuzzer-no-link $(FUZZ_SAN)" $(FUZZ_BUILD)/libtilescale.a
	clang -std=c11 -O1 -g $(WARN) -D_GNU_SOURCE -Iinclude -I$(CUDA_HOME)/include -fsanitize=fuzzer $(FUZZ_SAN) \
	      tests/fuzz/fuzz_front.c $(FUZZ_BUILD)/libtilescale.a -o $(FUZZ_BIN) $(LDLIBS)

# The seeds are copied (examples/, tests/front/, tests/fuzz/seeds/) so that no folder
# under tests/ is ever libFuzzer's output folder.
fuzz: fuzz-build
	@rm -rf $(FUZZ_BUILD)/seeds
	@mkdir -p $(FUZZ_BUILD)/seeds $(FUZZ_CORPUS)
	cp examples/*.py tests/fuzz/seeds/*.py $(FUZZ_BUILD)/seeds/ && (cp tests/front/*.py $(FUZZ_BUILD)/seeds/ 2>/dev/null || true)
	$(FUZZ_BIN) $(FUZZ_FLAGS) -max_total_time=$(FUZZ_SECONDS) $(FUZZ_CORPUS) tests/fuzz/corpus $(FUZZ_BUILD)/seeds
	@echo "new finds: $$(ls $(FUZZ_CORPUS) | wc -l) files in $(FUZZ_CORPUS) (tests/fuzz/corpus unchanged; \`make fuzz-promote\` adds those with new coverage)"

# Adds to tests/fuzz/corpus the finds of $(FUZZ_CORPUS) that cover edges it does not; files
# already there are never removed or rewritten (names are content hashes).
fuzz-promote: fuzz-build
	@rm -rf $(FUZZ_BUILD)/promote && mkdir -p $(FUZZ_BUILD)/promote $(FUZZ_CORPUS)
	cp tests/fuzz/corpus/* $(FUZZ_BUILD)/promote/
	$(FUZZ_BIN) $(FUZZ_FLAGS) -merge=1 -use_counters=0 $(FUZZ_BUILD)/promote $(FUZZ_CORPUS)
	@n=0; for f in $(FUZZ_BUILD)/promote/*; do b=$$(basename $$f); \
	  if [ ! -e tests/fuzz/corpus/$$b ]; then cp $$f tests/fuzz/corpus/$$b; n=$$((n + 1)); fi; done; \
	  echo "promoted $$n files to tests/fuzz/corpus (now $$(ls tests/fuzz/corpus | wc -l)); review and commit them"

# The fuzz harness as a plain program that replays the committed corpus (the smoke test in `make test`).
$(BUILD)/fuzz_replay: tests/fuzz/fuzz_front.c $(LIB_A)
	$(CC) $(CFLAGS) -DFUZZ_REPLAY $< -o $@ $(LIB_A) $(LDLIBS)

# make install PREFIX=/usr/local [DESTDIR=staging]: the headers, both libraries, the CLI and
# tilescale.pc, so a C program builds with `cc app.c $$(pkg-config --cflags --libs tilescale)`
# (PKG_CONFIG_PATH=$(PREFIX)/lib/pkgconfig when that is not a default folder).  The Python
# packages install with `pip install .` (pyproject.toml).
PREFIX       ?= /usr/local
BINDIR       ?= $(PREFIX)/bin
LIBDIR       ?= $(PREFIX)/lib
INCLUDEDIR   ?= $(PREFIX)/include
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
TS_VERSION   := $(shell sed -n 's/^\#define TS_VERSION_STRING "\(.*\)"/\1/p' include/tilescale.h)
install: $(LIB_A) $(LIB_SO) $(CLI)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 644 include/tilescale.h include/tilescale_dist.h $(DESTDIR)$(INCLUDEDIR)/
	install -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(LIB_SO) $(DESTDIR)$(LIBDIR)/
	install -m 755 $(CLI) $(DESTDIR)$(BINDIR)/
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
	    -e 's|@VERSION@|$(TS_VERSION)|' tools/tilescale.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/tilescale.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/tilescale.pc

uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/tilescale.h $(DESTDIR)$(INCLUDEDIR)/tilescale_dist.h \
	      $(DESTDIR)$(LIBDIR)/libtilescale.a $(DESTDIR)$(LIBDIR)/libtilescale.so $(DESTDIR)$(BINDIR)/tilescale \
	      $(DESTDIR)$(PKGCONFIGDIR)/tilescale.pc

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cuh')

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
