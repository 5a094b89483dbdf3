/*
 * fuzz_trace.c: libFuzzer entry for traces (tests/fuzz/trace_input.h says
 * what an input is and what is done with it). `make fuzz` builds it with
 * clang; tests/fuzz/README.md says how to run it. UMKIT_FUZZ_TRACE names
 * the recorded trace the edits are made to (default:
 * build/fixtures/h100_mlp.db, which make fuzz unpacks); the edited copy is written under TMPDIR
 * (default /tmp).
 */
#include <unistd.h>

#include "trace_input.h"

static void *image;
static size_t image_len;
static char scratch[512];

static void remove_scratch(void)
{
	unlink(scratch);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	const char *path = getenv("UMKIT_FUZZ_TRACE"), *tmp = getenv("TMPDIR");
	FILE *f = fopen(path ? path : "build/fixtures/h100_mlp.db", "rb");
	long len;
	if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    !(image = malloc((size_t)len)) || fread(image, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "fuzz_trace: cannot read the trace (run from the repository root)\n");
		exit(1);
	}
	fclose(f);
	image_len = (size_t)len;
	snprintf(scratch, sizeof scratch, "%s/umkit-fuzz-trace-%d.db", tmp ? tmp : "/tmp", (int)getpid());
	/* Here, not in the first input, where libFuzzer would call the abort
	 * a crash. */
	if (!(f = fopen(scratch, "wb")) || fclose(f) != 0) {
		fprintf(stderr, "fuzz_trace: cannot write %s\n", scratch);
		exit(1);
	}
	atexit(remove_scratch);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	trace_input_run(data, n, image, image_len, scratch);
	return 0;
}
