/*
 * sim_io.c: the simulator's files: measured link constants in (--constants,
 * calibrate.py's JSON) and CSV out (--sim-csv, for scripts/sim_plots.py).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "sim.h"

/* The whole file as a string, or NULL (errno set). */
static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	while (buf) {
		len += fread(buf + len, 1, cap - 1 - len, f);
		if (len < cap - 1)
			break;
		char *nb = realloc(buf, cap * 2);
		if (!nb) {
			free(buf);
			buf = NULL;
			errno = ENOMEM;
			break;
		}
		buf = nb;
		cap *= 2;
	}
	if (buf && ferror(f)) {
		free(buf);
		buf = NULL;
		errno = EIO;
	}
	fclose(f);
	if (buf)
		buf[len] = 0;
	return buf;
}

/* *out = the positive number under key times scale, when present. Returns
 * 1 when set, 0 when absent, -1 when not a positive finite number. */
/* The number under key times scale into *out: 1 if there, 0 if absent, -1
 * if not a number from min to 1e18 / scale. */
static int get_scaled(const cJSON *j, const char *key, double scale, double min, uint64_t *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < min ||
	    v->valuedouble <= 0 || v->valuedouble * scale > 1e18)
		return -1;
	*out = (uint64_t)(v->valuedouble * scale);
	return 1;
}

int sim_constants_load(const char *path, struct sim_options *o, char *err, size_t errlen)
{
	char *text = read_all(path);
	if (!text) {
		um_errmsg(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	cJSON *j = cJSON_Parse(text);
	free(text);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		um_errmsg(err, errlen, "%s: not a JSON object", path);
		return -1;
	}
	static const struct {
		const char *key;
		double scale, min; /* min: bandwidths from 0.001 GB/s, as umplan's */
		size_t field;      /* offset in struct sim_options */
	} keys[] = {
		{ "htod_gbps", 1e9, 1e-3, offsetof(struct sim_options, htod_bytes_per_s) },
		{ "dtoh_gbps", 1e9, 1e-3, offsetof(struct sim_options, dtoh_bytes_per_s) },
		{ "fault_gbps", 1e9, 1e-3, offsetof(struct sim_options, fault_bytes_per_s) },
		{ "call_cost_us", 1e3, 0, offsetof(struct sim_options, call_cost_ns) },
		{ "fault_batch_us", 1e3, 0, offsetof(struct sim_options, fault_batch_ns) },
	};
	/* Into a copy, so a bad file leaves o as it was. */
	struct sim_options n = *o;
	int links = 0;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		int r = get_scaled(j, keys[i].key, keys[i].scale, keys[i].min,
				   (uint64_t *)((char *)&n + keys[i].field));
		if (r < 0) {
			cJSON_Delete(j);
			um_errmsg(err, errlen, "%s: %s is not a positive number%s", path, keys[i].key,
				  keys[i].min ? " from 0.001" : "");
			return -1;
		}
		links += r && i < 2;
	}
	cJSON_Delete(j);
	if (!links) {
		um_errmsg(err, errlen, "%s: has neither htod_gbps nor dtoh_gbps", path);
		return -1;
	}
	*o = n;
	return 0;
}

static FILE *open_in(const char *dir, const char *name, char *path, size_t len, char *err,
		     size_t errlen)
{
	snprintf(path, len, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	if (!f)
		um_errmsg(err, errlen, "%s: %s", path, strerror(errno));
	return f;
}

static int close_checked(FILE *f, const char *path, char *err, size_t errlen)
{
	int bad = ferror(f);
	if (fclose(f) || bad) {
		um_errmsg(err, errlen, "%s: write failed", path);
		return -1;
	}
	return 0;
}

int sim_write_csv(const struct sim_ctx *c, const struct sim_row *rows, size_t n,
		  const struct sim_options *o, const char *dir, char *err, size_t errlen)
{
	char path[4096];
	FILE *f = open_in(dir, "throughput.csv", path, sizeof path, err, errlen);
	if (!f)
		return -1;
	fprintf(f, "ratio,capacity,policy,time_ns,pct_ideal\n");
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < SIM_N_POLICIES; p++) {
			const struct sim_result *s = &rows[i].res[p];
			fprintf(f, "%g,%llu,%s,%llu,%.3f\n", rows[i].ratio,
				(unsigned long long)s->capacity, sim_policy_name((enum sim_policy)p),
				(unsigned long long)s->time_ns, sim_pct_ideal(s));
		}
	if (close_checked(f, path, err, errlen))
		return -1;

	f = open_in(dir, "pressure.csv", path, sizeof path, err, errlen);
	if (!f)
		return -1;
	fprintf(f, "ratio,position,capacity,before_plan,after_plan\n");
	for (size_t i = 0; i < n; i++) {
		uint64_t cap = rows[i].res[SIM_PLAN].capacity;
		uint64_t *before, *after;
		uint32_t p;
		if (sim_residency(c, cap, o, &before, &after, &p, err, errlen)) {
			fclose(f);
			return -1;
		}
		for (uint32_t k = 0; k < p; k++)
			fprintf(f, "%g,%u,%llu,%llu,%llu\n", rows[i].ratio, k,
				(unsigned long long)cap, (unsigned long long)before[k],
				(unsigned long long)after[k]);
		free(before);
		free(after);
	}
	return close_checked(f, path, err, errlen);
}
