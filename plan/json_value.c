/* json_value.c: counts and outside text as JSON values (see json_value.h). */
#include "json_value.h"

#include <stdio.h>
#include <stdlib.h>

#include "utf8.h"

cJSON *json_u64(uint64_t v)
{
	char buf[24];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
	if (v > ((uint64_t)1 << 53))
		return cJSON_CreateString(buf);
	/* cJSON prints a number in 15 significant digits wherever they read
	 * back within a relative DBL_EPSILON of it, so a count of 16 digits
	 * could print rounded (2^53 - 1 as 9.00719925474099e+15): those go
	 * as their decimal digits, raw. */
	if (v >= 1000000000000000ull)
		return cJSON_CreateRaw(buf);
	return cJSON_CreateNumber((double)v);
}

cJSON *json_text(const char *s)
{
	char *valid = utf8_valid_copy(s ? s : "");
	cJSON *item = valid ? cJSON_CreateString(valid) : NULL;
	free(valid);
	return item;
}

bool json_add(cJSON *o, const char *key, cJSON *item)
{
	if (item && cJSON_AddItemToObject(o, key, item))
		return true;
	cJSON_Delete(item);
	return false;
}

bool json_add_u64(cJSON *o, const char *key, uint64_t v)
{
	return json_add(o, key, json_u64(v));
}
