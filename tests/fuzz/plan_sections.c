/*
 * plan_sections.c: writes a plan file's sections as one input of the plan
 * fuzzer (tests/fuzz/plan_input.h), to seed its corpus from real plans.
 * Usage: plan_sections PLAN.bin OUT
 */
#include <stdint.h>
#include <stdio.h>

#include "bytes.h"
#include "planfile.h"

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
	struct bytes_buf b = { 0 };
	for (size_t i = 0; i < planfile_section_count(p); i++) {
		uint32_t id = planfile_section_id(p, i);
		size_t len;
		const void *data = planfile_section(p, id, &len);
		bytes_put_u32(&b, id);
		bytes_put_u32(&b, (uint32_t)len);
		bytes_put_raw(&b, data, len);
	}
	planfile_close(p);
	FILE *out = fopen(argv[2], "wb");
	int bad = b.oom || !out || fwrite(b.data, 1, b.len, out) != b.len;
	if ((out && fclose(out) != 0) || bad) {
		fprintf(stderr, "plan_sections: cannot write %s\n", argv[2]);
		bad = 1;
	}
	bytes_buf_free(&b);
	return bad;
}
