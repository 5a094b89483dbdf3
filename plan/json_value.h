/*
 * json_value.h: the values umplan's JSON documents (--json's report,
 * --dump's plan) take from outside what JSON holds as it stands: a 64-bit
 * count, which a JSON number (a double) keeps exactly only up to 2^53, and
 * text from a trace or a command line, which may be any bytes.
 */
#ifndef UMKIT_JSON_VALUE_H
#define UMKIT_JSON_VALUE_H

#include <stdbool.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* v as a number, or above 2^53 as a decimal string; NULL when out of
 * memory. From 10^15 the number is a raw item (cJSON_Raw) of its decimal
 * digits, which cJSON prints as they are: it would print a cJSON number
 * there rounded to 15 significant digits. */
cJSON *json_u64(uint64_t v);

/* s (NULL reads as "") as a string of valid UTF-8 (utf8.h); NULL when out
 * of memory. */
cJSON *json_text(const char *s);

/* Adds item to o as key: false, the item freed, when it is NULL (out of
 * memory) or o cannot take it (a document short of memory loses keys,
 * not memory). */
bool json_add(cJSON *o, const char *key, cJSON *item);

/* json_add of json_u64(v). */
bool json_add_u64(cJSON *o, const char *key, uint64_t v);

#endif
