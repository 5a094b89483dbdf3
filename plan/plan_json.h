/*
 * plan_json.h: a plan as JSON, for `umplan --dump plan.bin` (and for people
 * and scripts that inspect plans).
 *
 * Only umplan links cJSON; the replayer never needs this module. Every field
 * of struct plan appears: op kinds and allocation origins by name, positions
 * that do not apply (PLAN_POS_NONE) as null, execution IDs and the signature
 * hash as "0x%016x" strings (they are 64-bit and JSON numbers are doubles),
 * other integers as numbers (above 2^53 as decimal strings, for the same
 * reason). The correlation tables come with a summary (rows used, entries)
 * and their full content. docs/plan-format.md lists the keys.
 */
#ifndef UMKIT_PLAN_JSON_H
#define UMKIT_PLAN_JSON_H

#include <cjson/cJSON.h>

#include "common/plan.h"

/* The plan as a cJSON object the caller owns (cJSON_Delete), or NULL when
 * out of memory. */
cJSON *plan_json(const struct plan *p);

/* The plan as indented JSON text ending in a newline, malloc'ed (free), or
 * NULL when out of memory. */
char *plan_json_text(const struct plan *p);

#endif
