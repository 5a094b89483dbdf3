/*
 * sim_report.c: the --simulate sweep over capacities and its output (a
 * table for people, JSON for scripts).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json_value.h"
#include "sim.h"

int sim_parse_ratios(const char *text, double **out, size_t *n, char *bad, size_t badlen)
{
	size_t cap = 1;
	for (const char *s = text; *s; s++)
		cap += *s == ',';
	double *r = malloc(cap * sizeof *r);
	if (!r) {
		snprintf(bad, badlen, "%s", text);
		return -1;
	}
	size_t k = 0;
	const char *s = text;
	for (;;) {
		const char *comma = strchr(s, ',');
		size_t len = comma ? (size_t)(comma - s) : strlen(s);
		char item[64];
		char *end = NULL;
		double v = NAN;
		if (len > 0 && len < sizeof item) {
			memcpy(item, s, len);
			item[len] = 0;
			errno = 0;
			v = strtod(item, &end);
		}
		if (!end || *end || errno || !isfinite(v) || v < 1 || v > 1e6) {
			snprintf(bad, badlen, "%.*s", (int)len, s);
			free(r);
			return -1;
		}
		r[k++] = v;
		if (!comma)
			break;
		s = comma + 1;
	}
	*out = r;
	*n = k;
	return 0;
}

int sim_sweep(const struct sim_ctx *c, const double *ratios, size_t n, uint64_t capacity,
	      const struct sim_options *o, struct sim_row **rows, char *err, size_t errlen)
{
	struct sim_row *r = calloc(n ? n : 1, sizeof *r);
	if (!r) {
		sim_out_of_memory(sim_trace_path(c), err, errlen);
		return -1;
	}
	uint64_t w = sim_live_peak(c);
	for (size_t i = 0; i < n; i++) {
		uint64_t cap = capacity ? capacity : (uint64_t)((double)w / ratios[i]);
		r[i].ratio = capacity ? (double)w / (double)capacity : ratios[i];
		for (int p = 0; p < SIM_N_POLICIES; p++)
			if (sim_run(c, (enum sim_policy)p, cap, o, &r[i].res[p], err, errlen)) {
				free(r);
				return -1;
			}
		if (sim_floor(c, cap, o, &r[i].floor, err, errlen)) {
			free(r);
			return -1;
		}
	}
	*rows = r;
	return 0;
}

int sim_print(const struct sim_ctx *c, const struct sim_row *rows, size_t n, FILE *out)
{
	fprintf(out, "simulated iteration: W (live peak) %.1f MB, %llu blocks of 2 MB\n",
		(double)sim_live_peak(c) / 1e6, (unsigned long long)sim_blocks(c));
	fprintf(out, "%6s %10s %-9s %12s %10s %10s %10s %10s %8s\n", "W/B", "budget MB", "policy",
		"iteration ms", "% of ideal", "stall ms", "HtoD MB", "DtoH MB", "faults");
	for (size_t i = 0; i < n; i++) {
		for (int p = 0; p < SIM_N_POLICIES; p++) {
			const struct sim_result *s = &rows[i].res[p];
			fprintf(out, "%6.2f %10.1f %-9s %12.3f %10.1f %10.3f %10.1f %10.1f %8llu\n",
				rows[i].ratio, (double)s->capacity / 1e6,
				sim_policy_name((enum sim_policy)p), (double)s->time_ns / 1e6,
				sim_pct_ideal(s), (double)s->stall_ns / 1e6, (double)s->htod_bytes / 1e6,
				(double)s->dtoh_bytes / 1e6, (unsigned long long)s->faults);
		}
		/* What no schedule beats at this capacity: its time alone. */
		const struct sim_result *ideal = &rows[i].res[SIM_IDEAL];
		fprintf(out, "%6.2f %10.1f %-9s %12.3f %10.1f\n", rows[i].ratio, (double)ideal->capacity / 1e6,
			"floor", (double)rows[i].floor.ns / 1e6,
			rows[i].floor.ns ? 100.0 * (double)ideal->time_ns / (double)rows[i].floor.ns : 0.0);
	}
	return ferror(out) ? -1 : 0;
}

cJSON *sim_json(const struct sim_ctx *c, const struct sim_row *rows, size_t n,
		const struct sim_options *o)
{
	cJSON *root = cJSON_CreateObject(), *arr = cJSON_CreateArray(), *cst = cJSON_CreateObject();
	if (!root || !arr || !cst) {
		cJSON_Delete(root);
		cJSON_Delete(arr);
		cJSON_Delete(cst);
		return NULL;
	}
	cJSON_AddItemToObject(root, "constants", cst);
	cJSON_AddItemToObject(root, "rows", arr);
	cJSON *floors = cJSON_AddArrayToObject(root, "floors");
	bool ok = floors && json_add_u64(root, "live_peak", sim_live_peak(c)) &&
		  json_add_u64(root, "blocks", sim_blocks(c)) &&
		  cJSON_AddNumberToObject(cst, "htod_gbps", (double)o->htod_bytes_per_s / 1e9) &&
		  cJSON_AddNumberToObject(cst, "dtoh_gbps", (double)o->dtoh_bytes_per_s / 1e9) &&
		  cJSON_AddNumberToObject(cst, "fault_gbps", (double)o->fault_bytes_per_s / 1e9) &&
		  cJSON_AddNumberToObject(cst, "call_cost_us", (double)o->call_cost_ns / 1e3) &&
		  cJSON_AddNumberToObject(cst, "fault_batch_us", (double)o->fault_batch_ns / 1e3);
	for (size_t i = 0; ok && i < n; i++)
		for (int p = 0; ok && p < SIM_N_POLICIES; p++) {
			const struct sim_result *s = &rows[i].res[p];
			cJSON *e = cJSON_CreateObject();
			if (!e || !cJSON_AddItemToArray(arr, e)) {
				cJSON_Delete(e);
				ok = false;
				break;
			}
			ok = cJSON_AddNumberToObject(e, "ratio", rows[i].ratio) &&
			     json_add_u64(e, "capacity", s->capacity) &&
			     cJSON_AddStringToObject(e, "policy", sim_policy_name((enum sim_policy)p)) &&
			     json_add_u64(e, "time_ns", s->time_ns) &&
			     cJSON_AddNumberToObject(e, "pct_ideal", sim_pct_ideal(s)) &&
			     json_add_u64(e, "stall_ns", s->stall_ns) &&
			     json_add_u64(e, "htod_bytes", s->htod_bytes) &&
			     json_add_u64(e, "dtoh_bytes", s->dtoh_bytes) &&
			     json_add_u64(e, "faults", s->faults) &&
			     json_add_u64(e, "link_busy_ns", s->link_busy_ns) &&
			     json_add_u64(e, "link_idle_kernel_ns", s->link_idle_kernel_ns);
		}
	for (size_t i = 0; ok && i < n; i++) {
		const struct capacity_floor *f = &rows[i].floor;
		cJSON *e = cJSON_CreateObject();
		ok = e && cJSON_AddItemToArray(floors, e);
		if (!ok) {
			cJSON_Delete(e);
			break;
		}
		ok = cJSON_AddNumberToObject(e, "ratio", rows[i].ratio) &&
		     json_add_u64(e, "capacity", rows[i].res[SIM_IDEAL].capacity) && capacity_floor_json(e, f);
	}
	if (!ok) {
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}
