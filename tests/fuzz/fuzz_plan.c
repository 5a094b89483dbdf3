/*
 * fuzz_plan.c: libFuzzer entry for plan files (tests/fuzz/plan_input.h
 * says what an input is and what is done with it). `make fuzz` builds it
 * with clang; tests/fuzz/README.md says how to run it and seed it.
 * UMKIT_FUZZ_TRACE names the recorded run the engine is fed (default:
 * build/fixtures/h100_train_sim.db, which make fuzz unpacks).
 */
#include <stdio.h>

#include "plan_input.h"

static const struct trace *fuzz_trace(void)
{
	static struct trace *t;
	static bool loaded;
	if (!loaded) {
		const char *path = getenv("UMKIT_FUZZ_TRACE");
		char err[512];
		loaded = true;
		t = trace_load(path ? path : "build/fixtures/h100_train_sim.db", err, sizeof err);
		if (!t)
			fprintf(stderr, "fuzz_plan: %s; plans are only loaded\n", err);
	}
	return t;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	plan_input_run(data, n, fuzz_trace());
	return 0;
}
