/*
 * sim_io.c: the simulator's files: measured link constants in (--constants,
 * calibrate.py's JSON) and CSV out (--sim-csv, for scripts/sim_plots.py).
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"
#include "read_file.h"
#include "replace_file.h"
#include "sim.h"

/* A constants file is calibrate.py's few lines: anything larger is not
 * one. */
#define CONSTANTS_MAX_BYTES (1 << 20)

/* The whole file as a string (NUL-terminated, its length in *len), or NULL
 * with err set (common/read_file.h: a FIFO or a device is refused before
 * reading). */
static char *read_all(const char *path, size_t *len, char *err, size_t errlen)
{
	struct read_file f;
	const char *why = NULL;
	switch (read_regular_file(path, CONSTANTS_MAX_BYTES, &f)) {
	case READ_OK:
		*len = f.len;
		return (char *)f.data;
	case READ_CANNOT_OPEN:
	case READ_FAILED:
		why = strerror(f.error);
		break;
	case READ_NOT_REGULAR:
		why = S_ISDIR(f.st.st_mode) ? strerror(EISDIR) : "not a regular file";
		break;
	case READ_TOO_LARGE:
		why = "larger than 1 MiB: not a constants file";
		break;
	case READ_NO_MEMORY:
		why = strerror(ENOMEM);
		break;
	}
	um_errmsg(err, errlen, "%s: %s", path, why);
	return NULL;
}

/* The number under key, from min to max, times scale into *out (rounded,
 * as umplan's options take them: 1.005 us is 1005 ns, not 1004): 1 if
 * there, 0 if absent, -1 if not such a number, -2 if given twice (cJSON
 * would read the first). */
static int get_scaled(const cJSON *j, const char *key, double scale, double min, double max, uint64_t *out)
{
	const cJSON *v = NULL;
	for (const cJSON *c = j->child; c; c = c->next) {
		if (c->string && strcmp(c->string, key) == 0) {
			if (v)
				return -2;
			v = c;
		}
	}
	if (!v)
		return 0;
	if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < min || v->valuedouble > max)
		return -1;
	*out = (uint64_t)llround(v->valuedouble * scale);
	return 1;
}

int sim_constants_load(const char *path, struct sim_options *o, char *err, size_t errlen)
{
	size_t len;
	char *text = read_all(path, &len, err, errlen);
	if (!text)
		return -1;
	/* The whole text: junk after the object is an error, not ignored;
	 * so is what follows a NUL byte, where a parser of strings stops. */
	cJSON *j = strlen(text) == len ? cJSON_ParseWithOpts(text, NULL, 1) : NULL;
	free(text);
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		um_errmsg(err, errlen, "%s: not one JSON object", path);
		return -1;
	}
	/* Bandwidths as umplan's options take them; a cost of 0 (calibrate.py
	 * clamps a negative fit to it) up to a second, far enough from the
	 * ns sums' range that no number of calls or faults wraps them. */
	static const struct {
		const char *key;
		double scale, min, max;
		size_t field; /* offset in struct sim_options */
	} keys[] = {
		{ "htod_gbps", 1e9, 1e-3, 1e6, offsetof(struct sim_options, htod_bytes_per_s) },
		{ "dtoh_gbps", 1e9, 1e-3, 1e6, offsetof(struct sim_options, dtoh_bytes_per_s) },
		{ "fault_gbps", 1e9, 1e-3, 1e6, offsetof(struct sim_options, fault_bytes_per_s) },
		{ "call_cost_us", 1e3, 0, 1e6, offsetof(struct sim_options, call_cost_ns) },
		{ "fault_batch_us", 1e3, 0, 1e6, offsetof(struct sim_options, fault_batch_ns) },
	};
	/* Into a copy, so a bad file leaves o as it was. */
	struct sim_options n = *o;
	int links = 0;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		int r = get_scaled(j, keys[i].key, keys[i].scale, keys[i].min, keys[i].max,
				   (uint64_t *)((char *)&n + keys[i].field));
		if (r < 0) {
			cJSON_Delete(j);
			if (r == -2)
				um_errmsg(err, errlen, "%s: %s is given twice", path, keys[i].key);
			else
				um_errmsg(err, errlen, "%s: %s is not one number from %g to %g", path,
					  keys[i].key, keys[i].min, keys[i].max);
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

int sim_csv_dir_check(const char *dir, char *err, size_t errlen)
{
	struct stat st;
	if (stat(dir, &st) != 0) {
		um_errmsg(err, errlen, "--sim-csv %s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK) != 0) {
		um_errmsg(err, errlen, "--sim-csv %s: %s", dir,
			  S_ISDIR(st.st_mode) ? strerror(errno) : "not a folder");
		return -1;
	}
	/* A path too long for a file or its temporary (replace_file.h) is
	 * found only when the files are written, after the simulation. A
	 * folder under either name cannot be renamed over: found at the
	 * second rename, it would leave the first file replaced alone. */
	static const char *const names[] = { "throughput.csv", "pressure.csv" };
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		char path[PATH_MAX];
		size_t len = (size_t)snprintf(path, sizeof path, "%s/%s", dir, names[i]);
		if (len + strlen(REPLACE_FILE_SUFFIX) >= sizeof path) {
			um_errmsg(err, errlen, "--sim-csv %s: %s", dir, strerror(ENAMETOOLONG));
			return -1;
		}
		if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
			um_errmsg(err, errlen, "--sim-csv %s: %s: %s", dir, path, strerror(EISDIR));
			return -1;
		}
	}
	return 0;
}

static void write_throughput(FILE *f, const struct sim_row *rows, size_t n)
{
	fprintf(f, "ratio,capacity,policy,time_ns,pct_ideal\n");
	for (size_t i = 0; i < n; i++)
		for (int p = 0; p < SIM_N_POLICIES; p++) {
			const struct sim_result *s = &rows[i].res[p];
			fprintf(f, "%g,%llu,%s,%llu,%.3f\n", rows[i].ratio,
				(unsigned long long)s->capacity, sim_policy_name((enum sim_policy)p),
				(unsigned long long)s->time_ns, sim_pct_ideal(s));
		}
}

/* 0, or -1 with err set where the residency cannot be modelled. */
static int write_pressure(FILE *f, const struct sim_ctx *c, const struct sim_row *rows, size_t n,
			  const struct sim_options *o, char *err, size_t errlen)
{
	fprintf(f, "ratio,position,capacity,before_plan,after_plan\n");
	for (size_t i = 0; i < n; i++) {
		uint64_t cap = rows[i].res[SIM_PLAN].capacity;
		uint64_t *before, *after;
		uint32_t p;
		if (sim_residency(c, cap, o, &before, &after, &p, err, errlen))
			return -1;
		for (uint32_t k = 0; k < p; k++)
			fprintf(f, "%g,%u,%llu,%llu,%llu\n", rows[i].ratio, k,
				(unsigned long long)cap, (unsigned long long)before[k],
				(unsigned long long)after[k]);
		free(before);
		free(after);
	}
	return 0;
}

/* Begins the replacement of DIR/name. */
static int csv_begin(struct replace_file *r, const char *dir, const char *name, char *err, size_t errlen)
{
	char path[PATH_MAX];
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
		um_errmsg(err, errlen, "%s/%s: path too long", dir, name);
		return -1;
	}
	return replace_file_begin(r, path, err, errlen);
}

/* Both files are written whole before either replaces its earlier one, so
 * that a failed run leaves the earlier pair (sim_plots.py would plot a
 * half-written file, or a pressure.csv of another run). */
int sim_write_csv(const struct sim_ctx *c, const struct sim_row *rows, size_t n,
		  const struct sim_options *o, const char *dir, char *err, size_t errlen)
{
	struct replace_file throughput, pressure;
	if (csv_begin(&throughput, dir, "throughput.csv", err, errlen))
		return -1;
	if (csv_begin(&pressure, dir, "pressure.csv", err, errlen)) {
		replace_file_abandon(&throughput);
		return -1;
	}
	write_throughput(throughput.f, rows, n);
	if (write_pressure(pressure.f, c, rows, n, o, err, errlen)) {
		replace_file_abandon(&throughput);
		replace_file_abandon(&pressure);
		return -1;
	}
	if (replace_file_finish(&throughput, err, errlen)) {
		replace_file_abandon(&pressure);
		return -1;
	}
	if (replace_file_finish(&pressure, err, errlen)) {
		replace_file_abandon(&throughput);
		return -1;
	}
	if (replace_file_commit(&throughput, err, errlen)) {
		replace_file_abandon(&pressure);
		return -1;
	}
	return replace_file_commit(&pressure, err, errlen);
}
