# TileScale-C — one Makefile.  `make demo` builds and runs an example, `make test` runs the
# CPU suite (CI), `make check-gpu` the GPU suite, `make bench` the benchmarks.
CUDA_HOME ?= $(shell d=$$(dirname $$(dirname $$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc))); echo $$d)
CC       ?= gcc
BUILD    ?= build
OPT      ?= -O2
WARN     := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror=implicit-function-declaration
CFLAGS   += -std=c11 $(OPT) -g $(WARN) -D_GNU_SOURCE -fPIC -Iinclude -I$(CUDA_HOME)/include $(EXTRA_CFLAGS)
LDLIBS   += -ldl -lm -lpthread

LIB_SRC  := $(sort $(wildcard src/base/*.c src/front/*.c src/ir/*.c src/layout/*.c src/pass/*.c \
                              src/codegen/*.c src/rt/*.c src/dist/*.c))
GEN_SRC  := $(BUILD)/gen/device_headers.c
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o) $(BUILD)/obj/gen/device_headers.o
DEV_HDRS := $(sort $(wildcard device/tilescale/*.cuh))
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
UNIT_OBJ := $(UNIT_SRC:%.c=$(BUILD)/obj/%.o)
GPU_SRC  := $(sort $(wildcard tests/gpu/*.c))

LIB_A    := $(BUILD)/libtilescale.a
LIB_SO   := $(BUILD)/libtilescale.so
CLI      := $(BUILD)/tilescale

.PHONY: all lib demo test check-gpu bench asan clean format
all: $(LIB_A) $(LIB_SO) $(CLI)
lib: $(LIB_A) $(LIB_SO)

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=c11 -O1 $(WARN) $< -o $@

$(GEN_SRC): $(BUILD)/tools/embed $(DEV_HDRS)
	@mkdir -p $(dir $@)
	$(BUILD)/tools/embed $@ $(DEV_HDRS)

$(BUILD)/obj/gen/device_headers.o: $(GEN_SRC)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(LIB_SO): $(LIB_OBJ)
	$(CC) -shared -o $@ $^ $(LDLIBS)

$(CLI): $(BUILD)/obj/cli/tilescale.o $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/test_unit: $(UNIT_OBJ) $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/test_gpu: $(GPU_SRC:%.c=$(BUILD)/obj/%.o) $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

$(BUILD)/bench: $(BUILD)/obj/bench/bench.o $(LIB_A)
	$(CC) -o $@ $^ $(LDLIBS)

# Builds, compiles an example kernel, and runs it on the GPU when there is one
# (otherwise prints the generated CUDA and says it only compiled).
demo: all
	@./tools/demo.sh $(CLI)

# The CPU suite (CI): unit tests, golden IR, diagnostics, codegen, NVRTC compile of every
# example for sm_80 and sm_90a.  Ends with "N passed, N failed".
test: all $(BUILD)/test_unit
	@./tests/run.sh $(BUILD)

check-gpu: all $(BUILD)/test_gpu
	$(BUILD)/test_gpu

bench: all $(BUILD)/bench
	$(BUILD)/bench

# The whole CPU suite under AddressSanitizer + UndefinedBehaviorSanitizer.
asan:
	$(MAKE) BUILD=build-asan OPT="-O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
	        LDLIBS="-ldl -lm -lpthread -fsanitize=address,undefined" test

format:
	clang-format -i $$(git ls-files '*.c' '*.h' '*.cuh')

clean:
	rm -rf build build-asan

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
