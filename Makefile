# umkit build. `make` builds everything into build/; `make test` runs the
# CI suite (no GPU needed); `make demo` records, plans and replays examples/
# on a GPU, or works on the bundled real trace without one.
#
# Layout convention (so adding a file never means editing this Makefile):
#   <dir>/*.c        portable C, no CUDA: goes into build/lib/libumkit_<dir>.a
#                    and is what unit tests link against;
#   <dir>/cuda/*.c   needs CUDA/CUPTI headers and libraries: linked only into
#                    the injected libraries (libumrec.so, libumreplay.so);
#   record/umrec.c, plan/umplan.c, replay/umreplay.c are the command mains.

CUDA_HOME ?= /usr/local/cuda
CUPTI_HOME ?= $(firstword $(wildcard $(CUDA_HOME)/extras/CUPTI) $(CUDA_HOME))
# The folder libcupti.so is in: the first of these that holds it, else
# CUPTI_HOME/lib64, so that the link says libcupti is not found (an empty
# one made -L take the next word). Given, it is used as it is.
CUPTI_LIBDIR ?= $(patsubst %/libcupti.so,%,$(firstword $(wildcard $(CUPTI_HOME)/lib64/libcupti.so \
	$(CUDA_HOME)/targets/x86_64-linux/lib/libcupti.so) $(CUPTI_HOME)/lib64/libcupti.so))
CUDA_LIBDIR ?= $(CUDA_HOME)/lib64
CUDA_STUBS ?= $(CUDA_LIBDIR)/stubs
PREFIX ?= /usr/local
BUILD ?= build
VERSION := $(shell cat VERSION)

CC ?= cc
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter
ifeq ($(WERROR),1)
WARN += -Werror
endif
OPT ?= -O2 -g
SAN ?=
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE $(OPT) $(WARN) -fPIC -pthread -Icommon -I. \
	-DUMKIT_VERSION='"$(VERSION)"' $(SAN) $(CFLAGS)
CUDA_CFLAGS := -I$(CUDA_HOME)/include -I$(CUPTI_HOME)/include
LDLIBS_PORTABLE := -lsqlite3 -lzstd -lm -ldl -pthread
# Injected libraries: libcuda comes from the driver at run time (the stub
# only satisfies the link); libcupti is found through the rpath.
# The rpath names both the toolkit's path here and its real location, so the
# library finds libcupti on a machine whose /usr/local/cuda link differs.
CUPTI_RPATH := $(CUPTI_LIBDIR):$(realpath $(CUPTI_LIBDIR)):$(CUDA_HOME)/targets/x86_64-linux/lib
LDLIBS_CUDA := -L$(CUDA_STUBS) -lcuda -L$(CUPTI_LIBDIR) -Wl,-rpath,$(CUPTI_RPATH) -lcupti

# The flags objects are compiled and linked with, kept in BUILD/FLAGS: a
# build with other ones (`make test`'s WERROR=1, another OPT or SAN, other
# CUDA or CUPTI folders) compiles every object again, as make would not
# for flags alone. Written by a rule, only when a target that compiles
# needs it: written as the makefile was read, any make (`make test`'s own,
# without WERROR, ahead of its WERROR=1 sub-make; make -n) set it to its
# own flags, and the next build compiled everything.
FLAGS_STAMP := $(BUILD)/FLAGS
FLAGS_NOW := $(CC) $(CFLAGS_ALL) $(CUDA_CFLAGS) $(LDLIBS_CUDA) -L$(CUDA_LIBDIR)
# The rule is there for the same flags too, for a stamp that goes after
# the makefile was read (make clean all).
ifneq ($(file < $(FLAGS_STAMP)),$(FLAGS_NOW))
$(FLAGS_STAMP): FORCE
endif
$(FLAGS_STAMP):
	@mkdir -p $(@D)
	@printf '%s\n' '$(subst ','\'',$(FLAGS_NOW))' > $@

MODULES := common record plan replay
MAINS := record/umrec.c plan/umplan.c replay/umreplay.c

# Generated: the trace schema embedded as a C string.
SCHEMA_C := $(BUILD)/gen/schema_sql.c

src_portable = $(filter-out $(MAINS),$(wildcard $(1)/*.c))
src_cuda = $(wildcard $(1)/cuda/*.c)
obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

PORTABLE_LIBS := $(foreach m,$(MODULES),$(BUILD)/lib/libumkit_$(m).a)
# A tool or injected library is built once its sources exist.
TOOLS := $(patsubst %.c,$(BUILD)/bin/%,$(notdir $(wildcard $(MAINS))))
INJECTED := $(if $(wildcard record/cuda/*.c),$(BUILD)/lib/libumrec.so) \
	$(if $(wildcard replay/cuda/*.c),$(BUILD)/lib/libumreplay.so)
UNIT_TESTS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))

.PHONY: FORCE all tools injected examples bench gpu-probes fixtures fuzz test unit-tests deps demo install clean
all: tools injected examples bench gpu-probes $(BUILD)/COMMIT

# The source the build came from, for benchmark rows (bench/measure.py's
# build column): the commit, "-dirty" with uncommitted changes. Rewritten
# only when it changes.
$(BUILD)/COMMIT: FORCE
	@mkdir -p $(BUILD)
	@id=$$(git describe --always --dirty --abbrev=7 2>/dev/null || echo unknown); \
	[ "$$(cat $@ 2>/dev/null)" = "$$id" ] || echo "$$id" > $@
FORCE:

tools: $(TOOLS)
injected: $(INJECTED)

# The real traces the tests, the demo and the fuzzers plan (tests/fixtures,
# its README) are kept compressed, a quarter of their size, so the tree
# stays small enough to copy to the GPU machine; unpacked here.
FIXTURES := $(patsubst tests/fixtures/%.zst,$(BUILD)/fixtures/%,$(wildcard tests/fixtures/*.db.zst))
fixtures: $(FIXTURES)
$(BUILD)/fixtures/%.db: tests/fixtures/%.db.zst
	@mkdir -p $(@D)
	zstd -d -q -f $< -o $@

$(BUILD)/obj/%.o: %.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(if $(findstring /cuda/,$<),$(CUDA_CFLAGS)) -MMD -MP -c $< -o $@

# Through a temporary file: a failed xxd (none installed) must leave no
# half-made source that looks up to date.
$(SCHEMA_C): schema/trace.sql
	@mkdir -p $(dir $@)
	{ echo '/* Generated from schema/trace.sql by the Makefile. */'; \
	  echo 'const char trace_schema_sql[] = {'; xxd -i < $< || exit 1; echo ', 0x00};'; } > $@.tmp
	mv $@.tmp $@

$(BUILD)/obj/gen/schema_sql.o: $(SCHEMA_C) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

# The common library carries the embedded schema so every tool can create or
# validate traces.
$(BUILD)/lib/libumkit_common.a: $(call obj,$(call src_portable,common)) $(BUILD)/obj/gen/schema_sql.o
$(BUILD)/lib/libumkit_record.a: $(call obj,$(call src_portable,record))
$(BUILD)/lib/libumkit_plan.a: $(call obj,$(call src_portable,plan))
$(BUILD)/lib/libumkit_replay.a: $(call obj,$(call src_portable,replay))
$(PORTABLE_LIBS):
	@mkdir -p $(dir $@)
	rm -f $@ && ar rcs $@ $^

# Link order: the tool's own module first, common last.
$(BUILD)/bin/umrec: $(call obj,record/umrec.c) $(BUILD)/lib/libumkit_record.a $(BUILD)/lib/libumkit_common.a
$(BUILD)/bin/umplan: $(call obj,plan/umplan.c) $(BUILD)/lib/libumkit_plan.a $(BUILD)/lib/libumkit_common.a
# umreplay's --dry-run reads traces: the plan library's loader.
$(BUILD)/bin/umreplay: $(call obj,replay/umreplay.c) $(BUILD)/lib/libumkit_replay.a $(BUILD)/lib/libumkit_plan.a \
		$(BUILD)/lib/libumkit_common.a
$(TOOLS):
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $^ -Wl,--as-needed -lcjson $(LDLIBS_PORTABLE) -Wl,-rpath,'$$ORIGIN/../lib'

$(BUILD)/lib/libumrec.so: $(call obj,$(call src_cuda,common) $(call src_cuda,record)) \
		$(BUILD)/lib/libumkit_record.a $(BUILD)/lib/libumkit_common.a
$(BUILD)/lib/libumreplay.so: $(call obj,$(call src_cuda,common) $(call src_cuda,replay)) \
		$(BUILD)/lib/libumkit_replay.a $(BUILD)/lib/libumkit_common.a
$(INJECTED): common/cuda/exports.map
	@mkdir -p $(dir $@)
	$(CC) -shared $(CFLAGS_ALL) -o $@ -Wl,--whole-archive $(filter %.o,$^) -Wl,--no-whole-archive \
		$(filter %.a,$^) -Wl,--as-needed $(LDLIBS_CUDA) $(LDLIBS_PORTABLE) -Wl,--no-undefined \
		-Wl,--version-script=common/cuda/exports.map

# Benchmark programs (bench/*.c): portable, linked like the tools. Their
# objects are kept: made by a pattern, make deleted them as intermediates,
# and the next make, finding them named in their .d files, built them and
# the programs again.
bench: $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))
.SECONDARY: $(patsubst bench/%.c,$(BUILD)/obj/bench/%.o,$(wildcard bench/*.c))
$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(PORTABLE_LIBS)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(PORTABLE_LIBS) $(PORTABLE_LIBS) -Wl,--as-needed -lcjson $(LDLIBS_PORTABLE) -Wl,-rpath,'$$ORIGIN/../lib'

# Unit tests link every portable library and cmocka; no GPU, no driver. A
# test of CUDA-side code links that code's object, named below, and fakes
# the driver and runtime calls it makes (the CUDA headers suffice). The
# headers a test includes are listed in BUILD/tests/test_*.d, as an
# object's are: a change to one builds the test again.
$(BUILD)/tests/%: tests/unit/%.c $(PORTABLE_LIBS) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(CUDA_CFLAGS) -Itests/unit -MMD -MP -o $@ $< $(filter %.o,$^) $(PORTABLE_LIBS) $(PORTABLE_LIBS) \
		-lcmocka -lcjson $(LDLIBS_PORTABLE) $(TEST_LDFLAGS)
$(BUILD)/tests/test_um_backend: $(call obj,common/cuda/um_backend.c common/cuda/fence_order.c)
$(BUILD)/tests/test_cupti_um: $(call obj,common/cuda/cupti_um.c)
$(BUILD)/tests/test_cupti_guard: $(call obj,common/cuda/cupti_guard.c)
$(BUILD)/tests/test_capture: $(call obj,common/cuda/capture.c)
$(BUILD)/tests/test_rec_activity: $(call obj,record/cuda/rec_activity.c)
$(BUILD)/tests/test_rec_callbacks: $(call obj,record/cuda/rec_callbacks.c common/cuda/write_calls.c)
# Its wrappers of nvtx_open_create and _destroy count the NVTX tables
# rec_callbacks_start makes and frees.
$(BUILD)/tests/test_rec_callbacks: TEST_LDFLAGS := -Wl,--wrap=nvtx_open_create,--wrap=nvtx_open_destroy
# Its wrapper of link_reserve checks that no transfer the scheduler
# reserves overlaps another on the link (link.h).
$(BUILD)/tests/test_plan_sched: TEST_LDFLAGS := -Wl,--wrap=link_reserve
# Its wrapper of sqlite3_busy_timeout cuts the writer's wait for a reader
# at close (tests/unit/test_trace_writer.c, reader_at_close_keeps_wal).
$(BUILD)/tests/test_trace_writer: TEST_LDFLAGS := -Wl,--wrap=sqlite3_busy_timeout
# Their wrappers of malloc, calloc and realloc fail on demand
# (tests/unit/failing_alloc.h).
ALLOC_FAILING_TESTS := $(addprefix $(BUILD)/tests/,test_replay_parts test_replay_match test_rp_exec \
	test_replay_engine test_arena test_evicting)
$(ALLOC_FAILING_TESTS): TEST_LDFLAGS := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
$(BUILD)/tests/test_driver_allocs: $(call obj,common/cuda/driver_allocs.c)
$(BUILD)/tests/test_launch_info: $(call obj,common/cuda/launch_info.c)
$(BUILD)/tests/test_rp_exec: $(call obj,replay/cuda/rp_exec.c)
$(BUILD)/tests/test_rp_callbacks: $(call obj,replay/cuda/rp_callbacks.c common/cuda/write_calls.c)
$(BUILD)/tests/test_rp_activity: $(call obj,replay/cuda/rp_activity.c)
$(BUILD)/tests/test_rp_residency: $(call obj,replay/cuda/rp_residency.c)
$(BUILD)/tests/test_rp_inject: $(call obj,replay/cuda/rp_inject.c)
# Its wrapper of strdup fails on demand.
$(BUILD)/tests/test_rp_inject: TEST_LDFLAGS := -Wl,--wrap=strdup
# Its wrapper of pthread_join counts the joins of the sampler thread.
$(BUILD)/tests/test_rp_residency: TEST_LDFLAGS := -Wl,--wrap=pthread_join
$(BUILD)/tests/test_stream_calls: $(call obj,common/cuda/stream_calls.c common/cuda/launch_info.c)
$(BUILD)/tests/test_cudart: $(call obj,common/cuda/cudart.c) $(BUILD)/tests/libcudart-0a1b2c3d.so.12
# A runtime named as a wheel names its copy (tests/unit/fake_cudart.c).
$(BUILD)/tests/libcudart-0a1b2c3d.so.12: tests/unit/fake_cudart.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -shared -o $@ $< -Wl,-soname,$(notdir $@)

unit-tests: $(UNIT_TESTS)

# CUDA C programs (the example workload, bench/*.cu, the GPU checks'
# probes tests/gpu/*.cu) need nvcc; each is
# skipped with a note if it is absent. Shared cudart, so that the injected
# library can interpose cudaMalloc.
NVCC ?= $(CUDA_HOME)/bin/nvcc
examples: $(if $(wildcard examples/train_sim.cu),$(BUILD)/examples/train_sim) \
	$(if $(wildcard $(CUDA_LIBDIR)/libcudart.so),$(BUILD)/examples/libmanaged_alloc.so)
bench: $(patsubst bench/%.cu,$(BUILD)/bench/%,$(wildcard bench/*.cu))
gpu-probes: $(patsubst tests/gpu/%.cu,$(BUILD)/gpu-probes/%,$(wildcard tests/gpu/*.cu))
# Their host code is held to the C code's warnings (those C++ has), and to
# -Werror under WERROR=1; a change of WERROR, in the flags stamp, builds
# them again.
comma := ,
NVCC_WARN := -Xcompiler -Wall,-Wextra,-Wshadow,-Wno-unused-parameter$(if $(filter 1,$(WERROR)),$(comma)-Werror)
define nvcc_program
	@mkdir -p $(dir $@)
	@if [ -x "$(NVCC)" ]; then $(NVCC) -O2 $(NVCC_WARN) -cudart shared -arch=sm_90 -o $@ $< $(NVCC_LDLIBS); \
	 else echo "note: $(NVCC) not found, $@ not built"; fi
endef
$(BUILD)/examples/%: examples/%.cu $(FLAGS_STAMP)
	$(nvcc_program)
# PyTorch's allocator on Unified Memory (examples/pytorch/common.py
# --managed-allocator): plain C over the shared runtime, which the
# injected libraries interpose. It needs PyTorch's CUDA major version
# (libcudart.so.13 here): the runtime PyTorch loaded is then the one it
# binds to. Compiled with CFLAGS_ALL, so the flags stamp's too.
$(BUILD)/examples/libmanaged_alloc.so: examples/pytorch/managed_alloc.c $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) -shared $(CFLAGS_ALL) $(CUDA_CFLAGS) -o $@ $< -L$(CUDA_LIBDIR) -Wl,-rpath,$(CUDA_LIBDIR) -lcudart
$(BUILD)/bench/%: bench/%.cu bench/trials.h $(FLAGS_STAMP)
	$(nvcc_program)
# Probes may call the driver API as well.
$(BUILD)/gpu-probes/%: NVCC_LDLIBS = -L$(CUDA_STUBS) -lcuda
$(BUILD)/gpu-probes/%: tests/gpu/%.cu $(wildcard tests/gpu/*.h) $(FLAGS_STAMP)
	$(nvcc_program)

# The fuzzers (tests/fuzz/README.md): libFuzzer, so clang; not part of
# `make test`, which replays their corpora (tests/unit/test_fuzz_corpus.c,
# built on the fuzzers' harnesses).
FUZZ_CC ?= clang
FUZZ_SAN := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
FUZZ_SRC := $(foreach m,common plan replay,$(call src_portable,$(m))) $(SCHEMA_C)
fuzz: $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c)) $(BUILD)/fuzz/plan_sections fixtures
$(BUILD)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/%_input.h $(FUZZ_SRC) \
		$(wildcard $(foreach m,common plan replay,$(m)/*.h))
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -std=c11 -D_GNU_SOURCE -O1 -g $(FUZZ_SAN) -Icommon -I. -DUMKIT_VERSION='"$(VERSION)"' \
		-o $@ $< $(FUZZ_SRC) -lcjson $(LDLIBS_PORTABLE)
$(BUILD)/fuzz/plan_sections: $(call obj,tests/fuzz/plan_sections.c) $(BUILD)/lib/libumkit_common.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $^ $(LDLIBS_PORTABLE)

# The README's commands. Both install what they need first.
deps:
	@scripts/install-deps.sh

# The unit tests run twice: as built, and under AddressSanitizer and UBSan
# (the plan reader's truncation and bit-flip sweeps are meant for that).
# The two builds run a job per core unless make was given a -j of its own
# (whose jobs the sub-makes then share): CI runs a plain `make test`
# (.ci/run), which built one file at a time on its 2 cores. Expanded in
# the recipe, where MAKEFLAGS holds the -j.
ASAN_BUILD := $(BUILD)/asan
TEST_JOBS = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(shell nproc 2>/dev/null || echo 1))
test: deps
	@$(MAKE) --no-print-directory $(TEST_JOBS) WERROR=1 all unit-tests fixtures
	@$(MAKE) --no-print-directory $(TEST_JOBS) WERROR=1 BUILD=$(ASAN_BUILD) \
		SAN='-fsanitize=address,undefined,float-cast-overflow -fno-sanitize-recover=all' unit-tests
	@tests/run.sh $(BUILD) $(ASAN_BUILD)

demo: deps
	@$(MAKE) --no-print-directory all fixtures
	@scripts/demo.sh $(BUILD)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/umkit $(DESTDIR)$(PREFIX)/share/doc/umkit
	install -m 755 $(TOOLS) $(DESTDIR)$(PREFIX)/bin/
	install -m 755 $(INJECTED) $(DESTDIR)$(PREFIX)/lib/umkit/
	install -m 644 README.md docs/*.md $(DESTDIR)$(PREFIX)/share/doc/umkit/

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null) $(wildcard $(BUILD)/tests/*.d)
