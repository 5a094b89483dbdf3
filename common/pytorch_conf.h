/*
 * pytorch_conf.h: reading and amending PyTorch's allocator settings
 * (PYTORCH_ALLOC_CONF, and the older name PYTORCH_CUDA_ALLOC_CONF that
 * PyTorch 2.11 still reads).
 *
 * The settings are KEY:VALUE pairs separated by commas, where a value may
 * be a bracketed list holding commas and colons of its own
 * ("roundup_power2_divisions:[256:1,>:8]"), and white space around the
 * punctuation (spaces, tabs, line breaks) does not count; PyTorch reads
 * the pairs in order, so a key set twice keeps its last value.
 *
 * Why umkit cares: with PyTorch's cache kept, the cache's segments are
 * the allocations umkit serves, through cudaMalloc. With
 * expandable_segments:True PyTorch maps its segments through the
 * driver's virtual memory calls (cuMemCreate, cuMemMap) instead, which
 * umkit does not serve: the program's memory would be neither managed nor
 * seen (GPU probe, bench/results/2026-11-30/s65/expandable/).
 */
#ifndef UMKIT_PYTORCH_CONF_H
#define UMKIT_PYTORCH_CONF_H

#include <stdbool.h>
#include <stddef.h>

/* The environment variables that hold the settings, newest name first. */
extern const char *const pytorch_conf_variables[2];

/* Copies into out (outlen bytes) the last value conf gives key at its top
 * level; false when conf (may be NULL) gives none, or it does not fit. */
bool pytorch_conf_value(const char *conf, const char *key, char *out, size_t outlen);

/* The first of pytorch_conf_variables in this process's environment whose
 * settings give key the value value (as pytorch_conf_value reads them), or
 * NULL when none does. */
const char *pytorch_conf_env_setting(const char *key, const char *value);

/* Whether conf turns expandable segments on. */
bool pytorch_conf_expandable(const char *conf);

/* conf with every top-level expandable_segments:True made False, all else
 * kept as written: a new string, NULL when out of memory. */
char *pytorch_conf_expandable_off(const char *conf);

#endif
