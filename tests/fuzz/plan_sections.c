/*
 * plan_sections.c: writes a plan file's sections as one input of the plan
 * fuzzer (tests/fuzz/plan_input.h), to seed its corpus from real plans.
 * Usage: plan_sections PLAN.bin OUT
 */
#include <stdint.h>
#include <stdio.h>

#include "planfile.h"

static int put_u32(FILE *f, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	return fwrite(b, 1, 4, f) == 4 ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: plan_sections PLAN.bin OUT\n");
		return 64;
	}
	char err[512];
	planfile *p = planfile_open(argv[1], err, sizeof err);
	if (!p) {
		fprintf(stderr, "plan_sections: %s\n", err);
		return 1;
	}
	FILE *out = fopen(argv[2], "wb");
	int bad = !out;
	for (size_t i = 0; !bad && i < planfile_section_count(p); i++) {
		uint32_t id = planfile_section_id(p, i);
		size_t len;
		const void *data = planfile_section(p, id, &len);
		bad = put_u32(out, id) || put_u32(out, (uint32_t)len) || fwrite(data, 1, len, out) != len;
	}
	if ((out && fclose(out) != 0) || bad) {
		fprintf(stderr, "plan_sections: cannot write %s\n", argv[2]);
		bad = 1;
	}
	planfile_close(p);
	return bad;
}
