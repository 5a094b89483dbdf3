/*
 * pytorch_conf.c: PyTorch's allocator settings (see pytorch_conf.h).
 */
#include "pytorch_conf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const char *const pytorch_conf_variables[2] = { "PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF" };

/* One word of the settings, as PyTorch splits them: a run of characters
 * up to the next punctuation, or one punctuation mark. PyTorch drops every
 * white space character, so a word spans any inside it ("Tr ue" is
 * "True"), not those around it. */
struct word {
	const char *at;
	size_t len;
};

static bool punctuation(char c)
{
	return c == ',' || c == ':' || c == '[' || c == ']';
}

/* The word at or after *p, which moves past it; false at the end. */
static bool next_word(const char **p, struct word *w)
{
	while (isspace((unsigned char)**p))
		(*p)++;
	if (!**p)
		return false;
	w->at = *p;
	const char *end = ++*p;
	if (!punctuation(*w->at))
		for (; **p && !punctuation(**p); (*p)++)
			if (!isspace((unsigned char)**p))
				end = *p + 1;
	w->len = (size_t)(end - w->at);
	return true;
}

/* Copies w without its white space into out (outlen bytes, ended by
 * '\0'); false when it does not fit. */
static bool word_copy(const struct word *w, char *out, size_t outlen)
{
	size_t n = 0;
	for (size_t i = 0; i < w->len; i++) {
		if (isspace((unsigned char)w->at[i]))
			continue;
		if (n + 1 >= outlen)
			return false;
		out[n++] = w->at[i];
	}
	out[n] = '\0';
	return true;
}

static bool word_is(const struct word *w, const char *s)
{
	size_t i = 0;
	for (const char *c = w->at; c < w->at + w->len; c++)
		if (!isspace((unsigned char)*c) && s[i++] != *c)
			return false;
	return !s[i];
}

/* Calls found(value, ctx) for each top-level KEY:VALUE whose KEY is key,
 * in order. A bracketed value is skipped whole (its words are not keys). */
static void each_value(const char *conf, const char *key, void (*found)(const struct word *, void *), void *ctx)
{
	if (!conf)
		return;
	const char *p = conf;
	struct word w, colon, value;
	int depth = 0;
	bool at_key = true; /* the next word begins a pair */
	while (next_word(&p, &w)) {
		if (word_is(&w, "["))
			depth++;
		else if (word_is(&w, "]") && depth > 0)
			depth--;
		if (depth > 0 || punctuation(*w.at)) {
			at_key = depth == 0 && word_is(&w, ",");
			continue;
		}
		if (at_key && word_is(&w, key)) {
			const char *after = p;
			if (next_word(&after, &colon) && word_is(&colon, ":") && next_word(&after, &value) &&
			    !punctuation(*value.at)) {
				found(&value, ctx);
				p = after;
			}
		}
		at_key = false;
	}
}

struct last_value {
	struct word w;
	bool seen;
};

static void keep_last(const struct word *w, void *ctx)
{
	struct last_value *last = ctx;
	last->w = *w;
	last->seen = true;
}

bool pytorch_conf_value(const char *conf, const char *key, char *out, size_t outlen)
{
	struct last_value last = { .seen = false };
	each_value(conf, key, keep_last, &last);
	return last.seen && outlen && word_copy(&last.w, out, outlen);
}

const char *pytorch_conf_env_setting(const char *key, const char *value)
{
	char got[64];
	for (size_t i = 0; i < sizeof pytorch_conf_variables / sizeof *pytorch_conf_variables; i++)
		if (pytorch_conf_value(getenv(pytorch_conf_variables[i]), key, got, sizeof got) &&
		    strcmp(got, value) == 0)
			return pytorch_conf_variables[i];
	return NULL;
}

bool pytorch_conf_expandable(const char *conf)
{
	char value[8];
	return pytorch_conf_value(conf, "expandable_segments", value, sizeof value) && strcmp(value, "True") == 0;
}

/* Each "True" of the settings' copy (whose offset from the original is
 * shift bytes, so far), made "False": the word's whole span, white space
 * inside it included. */
struct amending {
	const char *conf;
	char *copy;
	ptrdiff_t shift;
};

static void make_false(const struct word *w, void *ctx)
{
	struct amending *a = ctx;
	if (!word_is(w, "True"))
		return;
	char *at = a->copy + (w->at - a->conf) + a->shift;
	memmove(at + 5, at + w->len, strlen(at + w->len) + 1);
	memcpy(at, "False", 5);
	a->shift += 5 - (ptrdiff_t)w->len;
}

char *pytorch_conf_expandable_off(const char *conf)
{
	/* One byte more at most per "True" made "False" (its span is 4 bytes
	 * or more), each of which takes the 24 bytes of
	 * "expandable_segments:True" at least. */
	size_t len = strlen(conf);
	char *copy = malloc(len + len / 24 + 1);
	if (!copy)
		return NULL;
	memcpy(copy, conf, len + 1);
	struct amending a = { conf, copy, 0 };
	each_value(conf, "expandable_segments", make_false, &a);
	return copy;
}
