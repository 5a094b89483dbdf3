/*
 * sim_sens.c: umplan --simulate --perturb: how much the plan's predicted
 * throughput drops when the kernels of the run take longer or shorter than
 * the recorded ones the plan was made from (G10, section 7.6).
 */
#include <stdlib.h>

#include "errmsg.h"
#include "sim.h"

static int by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The plan's % of ideal at capacity with c's current durations. */
static int plan_pct(const struct sim_ctx *c, uint64_t capacity, const struct sim_options *o,
		    double *pct, char *err, size_t errlen)
{
	struct sim_result r;
	if (sim_run(c, SIM_PLAN, capacity, o, &r, err, errlen))
		return -1;
	*pct = sim_pct_ideal(&r);
	return 0;
}

int sim_sensitivity(struct sim_ctx *c, const double *ratios, size_t n, uint64_t capacity,
		    const struct sim_options *o, double fraction, struct sim_sensitivity *out,
		    char *err, size_t errlen)
{
	uint64_t w = sim_live_peak(c);
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t cap = capacity ? capacity : (uint64_t)((double)w / ratios[i]);
		double pct[SIM_SENS_DRAWS];
		out[i].ratio = capacity ? (double)w / (double)capacity : ratios[i];
		sim_ctx_perturb(c, 0, 0);
		rc = plan_pct(c, cap, o, &out[i].recorded_pct, err, errlen);
		for (int d = 0; d < SIM_SENS_DRAWS && !rc; d++) {
			sim_ctx_perturb(c, fraction, (uint64_t)d + 1);
			rc = plan_pct(c, cap, o, &pct[d], err, errlen);
		}
		if (!rc) {
			qsort(pct, SIM_SENS_DRAWS, sizeof *pct, by_double);
			out[i].min_pct = pct[0];
			out[i].median_pct = pct[SIM_SENS_DRAWS / 2];
			out[i].max_pct = pct[SIM_SENS_DRAWS - 1];
		}
	}
	sim_ctx_perturb(c, 0, 0);
	return rc;
}

int sim_sensitivity_print(const struct sim_sensitivity *s, size_t n, double fraction, FILE *out)
{
	fprintf(out, "\nsensitivity: plan made from the recorded kernel durations, run with each scaled by\n"
		     "a factor in [%.2f, %.2f] (%d draws): plan's %% of ideal\n",
		1 - fraction, 1 + fraction, SIM_SENS_DRAWS);
	fprintf(out, "%6s %10s %8s %8s %8s %19s\n", "W/B", "recorded", "min", "median", "max",
		"worst drop (points)");
	for (size_t i = 0; i < n; i++)
		fprintf(out, "%6.2f %10.1f %8.1f %8.1f %8.1f %19.1f\n", s[i].ratio, s[i].recorded_pct,
			s[i].min_pct, s[i].median_pct, s[i].max_pct,
			s[i].recorded_pct > s[i].min_pct ? s[i].recorded_pct - s[i].min_pct : 0.0);
	return ferror(out) ? -1 : 0;
}

cJSON *sim_sensitivity_json(const struct sim_sensitivity *s, size_t n, double fraction)
{
	cJSON *arr = cJSON_CreateArray();
	bool ok = arr != NULL;
	for (size_t i = 0; ok && i < n; i++) {
		cJSON *e = cJSON_CreateObject();
		if (!e || !cJSON_AddItemToArray(arr, e)) {
			cJSON_Delete(e);
			ok = false;
			break;
		}
		ok = cJSON_AddNumberToObject(e, "ratio", s[i].ratio) &&
		     cJSON_AddNumberToObject(e, "perturbation", fraction) &&
		     cJSON_AddNumberToObject(e, "draws", SIM_SENS_DRAWS) &&
		     cJSON_AddNumberToObject(e, "recorded_pct_ideal", s[i].recorded_pct) &&
		     cJSON_AddNumberToObject(e, "min_pct_ideal", s[i].min_pct) &&
		     cJSON_AddNumberToObject(e, "median_pct_ideal", s[i].median_pct) &&
		     cJSON_AddNumberToObject(e, "max_pct_ideal", s[i].max_pct);
	}
	if (!ok) {
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}
