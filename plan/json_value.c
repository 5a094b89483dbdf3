/* json_value.c: counts and outside text as JSON values (see json_value.h). */
#include "json_value.h"

#include <stdio.h>
#include <stdlib.h>

#include "utf8.h"

cJSON *json_u64(uint64_t v)
{
	if (v <= ((uint64_t)1 << 53))
		return cJSON_CreateNumber((double)v);
	char buf[24];
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)v);
	return cJSON_CreateString(buf);
}

cJSON *json_text(const char *s)
{
	char *valid = utf8_valid_copy(s ? s : "");
	cJSON *item = valid ? cJSON_CreateString(valid) : NULL;
	free(valid);
	return item;
}
