/*
 * plan_input.h: what the plan fuzzer (tests/fuzz/fuzz_plan.c) does with
 * one input, shared with the CI test that replays its corpus
 * (tests/unit/test_fuzz_corpus.c).
 *
 * An input is a list of sections, each a little-endian u32 id, a u32
 * length and that many bytes. They are written into a plan file with
 * correct checksums, so that mutations reach the plan's decoder and
 * validator (past the container's checksums, which the planfile tests
 * already flip bits in) instead of stopping there. A plan that loads is
 * then fed to the replay engine, as umreplay --dry-run does, over one
 * recorded run: under the plan policy and under deepum (which uses the
 * plan's correlation tables), each with a budget of a quarter of the
 * plan's capacity. Input lengths past the end are cut short.
 *
 * plan_input_run returns whether the plan loaded: every input must come
 * back, loaded or refused with an error, never crash.
 */
#ifndef UMKIT_PLAN_INPUT_H
#define UMKIT_PLAN_INPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "plan.h"
#include "planfile.h"
#include "plan/trace_load.h"
#include "replay/dryrun.h"

static bool plan_input_run(const uint8_t *data, size_t n, const struct trace *t)
{
	planfile_writer *w = planfile_writer_create();
	if (!w)
		return false;
	for (struct bytes_reader r = bytes_reader_init(data, n); r.len - r.pos >= 8;) {
		uint32_t id = bytes_get_u32(&r), len = bytes_get_u32(&r);
		if (len > r.len - r.pos)
			len = (uint32_t)(r.len - r.pos);
		/* a repeated id is dropped */
		planfile_writer_add(w, id, bytes_get_raw(&r, len), len);
	}
	void *file;
	size_t file_len;
	struct plan *p = NULL;
	char err[512];
	if (planfile_writer_encode(w, &file, &file_len) == 0) {
		p = plan_load_mem(file, file_len, "fuzz.plan", err, sizeof err);
		free(file);
	}
	planfile_writer_destroy(w);
	if (!p)
		return false;
	static const enum engine_policy policies[] = { ENGINE_PLAN, ENGINE_DEEPUM };
	for (size_t i = 0; t && i < sizeof policies / sizeof policies[0]; i++) {
		struct engine_config cfg = { policies[i], p->assume.capacity_bytes / 4, p,
					     .framework_cache = t->framework_cache };
		struct dryrun_result r;
		if (dryrun_run(t, &cfg, &r, err, sizeof err) == 0)
			dryrun_result_free(&r);
	}
	plan_destroy(p);
	return true;
}

#endif
