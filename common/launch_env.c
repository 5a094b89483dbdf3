/*
 * launch_env.c: the child's environment (see launch_env.h).
 */
#include "launch_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "errmsg.h"
#include "grow.h"
#include "log.h"
#include "pytorch_conf.h"

struct launch_env {
	char **vars; /* NAME=VALUE, owned, NULL-terminated */
	size_t n, cap;
};

static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

static bool is_named(const char *entry, const char *name)
{
	size_t len = strlen(name);
	return name_len(entry) == len && strncmp(entry, name, len) == 0;
}

/* An entry's value: what follows its '=' ("" without one). */
static const char *value_of(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? eq + 1 : "";
}

/* Index of name in e, or e->n. */
static size_t env_find(const launch_env *e, const char *name)
{
	for (size_t i = 0; i < e->n; i++)
		if (is_named(e->vars[i], name))
			return i;
	return e->n;
}

static int env_append(launch_env *e, char *entry)
{
	/* Room for the entry and the NULL after it. */
	char **vars = room_for_one(e->vars, e->n + 1, &e->cap, sizeof *vars, 64);
	if (!vars)
		return -1;
	e->vars = vars;
	e->vars[e->n++] = entry;
	e->vars[e->n] = NULL;
	return 0;
}

launch_env *launch_env_create(char *const *base)
{
	launch_env *e = calloc(1, sizeof *e);
	if (!e || !(e->vars = calloc(64, sizeof *e->vars)))
		goto fail;
	e->cap = 64;
	for (size_t i = 0; base && base[i]; i++) {
		char *copy = strdup(base[i]);
		if (!copy || env_append(e, copy) != 0) {
			free(copy);
			goto fail;
		}
	}
	return e;
fail:
	launch_env_destroy(e);
	return NULL;
}

void launch_env_destroy(launch_env *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->n; i++)
		free(e->vars[i]);
	free(e->vars);
	free(e);
}

int launch_env_set(launch_env *e, const char *name, const char *value)
{
	size_t len = strlen(name) + strlen(value) + 2;
	char *entry = malloc(len);
	if (!entry)
		return -1;
	snprintf(entry, len, "%s=%s", name, value);
	launch_env_unset(e, name);
	if (env_append(e, entry) != 0) {
		free(entry);
		return -1;
	}
	return 0;
}

/* Every copy: a parent may pass a name twice (execve allows it), and the
 * child's getenv would read the first. */
void launch_env_unset(launch_env *e, const char *name)
{
	size_t i;
	while ((i = env_find(e, name)) < e->n) {
		free(e->vars[i]);
		memmove(&e->vars[i], &e->vars[i + 1], (e->n - i) * sizeof *e->vars); /* with the NULL */
		e->n--;
	}
}

const char *launch_env_get(const launch_env *e, const char *name)
{
	size_t i = env_find(e, name);
	return i < e->n ? value_of(e->vars[i]) : NULL;
}

/* The value of the last copy of name, or NULL: the dynamic loader reads
 * the last copy of an LD_ variable the parent passed twice, where getenv
 * reads the first. */
static const char *env_get_last(const launch_env *e, const char *name)
{
	for (size_t i = e->n; i-- > 0;)
		if (is_named(e->vars[i], name))
			return value_of(e->vars[i]);
	return NULL;
}

char *const *launch_env_array(const launch_env *e)
{
	return e->vars;
}

void launch_env_unset_stale(launch_env *e)
{
	static const char *const keep[] = { "UMKIT_LOG", "UMKIT_LIBDIR", "UMKIT_CUPTI" };
	char name[256];
	/* Unsetting takes every copy of a name out and moves the later
	 * entries down: i then holds the next one. */
	for (size_t i = 0; i < e->n;) {
		size_t n = name_len(e->vars[i]);
		bool kept = strncmp(e->vars[i], "UMKIT_", 6) != 0 || n >= sizeof name;
		if (!kept) {
			memcpy(name, e->vars[i], n);
			name[n] = '\0';
			for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++)
				kept |= strcmp(name, keep[k]) == 0;
		}
		if (kept)
			i++;
		else
			launch_env_unset(e, name);
	}
}

/* With PyTorch's cache kept, its segments are what the library serves,
 * through cudaMalloc; expandable segments would map them through the
 * driver instead (common/pytorch_conf.h), so they are turned off in each
 * variable that turns them on. Returns 0, or -1 out of memory. */
static int expandable_segments_off(launch_env *e)
{
	for (size_t i = 0; i < sizeof pytorch_conf_variables / sizeof *pytorch_conf_variables; i++) {
		const char *name = pytorch_conf_variables[i], *conf = launch_env_get(e, name);
		if (!conf || !pytorch_conf_expandable(conf))
			continue;
		char *off = pytorch_conf_expandable_off(conf);
		if (!off)
			return -1;
		um_warn("%s=%s: expandable segments turned off for this run (%s=%s): PyTorch maps them through "
			"the driver's virtual memory calls, which umkit does not serve, so its cache's memory would "
			"be neither managed nor seen",
			name, conf, name, off);
		int rc = launch_env_set(e, name, off);
		free(off);
		if (rc != 0)
			return -1;
	}
	return 0;
}

int launch_env_inject(launch_env *e, const struct launch_inject *inj, char *err, size_t errlen)
{
	/* The loader splits LD_PRELOAD at spaces and colons, with no escape. */
	if (strpbrk(inj->library, " :")) {
		const char *slash = strrchr(inj->library, '/');
		int folder_len = slash ? (int)(slash - inj->library) : 0;
		um_errmsg(err, errlen,
			"the library path '%s' holds a space or a colon, which LD_PRELOAD cannot express: install "
			"umkit under a path without them, or reach its folder through a symbolic link whose path has "
			"none (ln -s '%.*s' LINK, then UMKIT_LIBDIR=LINK)",
			inj->library, folder_len, inj->library);
		return -1;
	}
	const char *old = env_get_last(e, "LD_PRELOAD");
	size_t len = strlen(inj->library) + (old ? strlen(old) : 0) + 2;
	char *preload = malloc(len);
	if (!preload)
		goto oom;
	/* First, so our cudaMalloc wins over any other preloaded definition. */
	if (old && *old)
		snprintf(preload, len, "%s:%s", inj->library, old);
	else
		snprintf(preload, len, "%s", inj->library);
	int rc = launch_env_set(e, "LD_PRELOAD", preload);
	free(preload);
	if (rc != 0 || launch_env_set(e, "CUDA_INJECTION64_PATH", inj->library) != 0 ||
	    (inj->cupti && launch_env_set(e, "NVTX_INJECTION64_PATH", inj->cupti) != 0))
		goto oom;
	const char *no_cache = launch_env_get(e, "PYTORCH_NO_CUDA_MEMORY_CACHING");
	bool user_keeps_cache = no_cache && !launch_pytorch_cache_off(no_cache);
	if (inj->framework_cache)
		launch_env_unset(e, "PYTORCH_NO_CUDA_MEMORY_CACHING");
	else if (!no_cache && launch_env_set(e, "PYTORCH_NO_CUDA_MEMORY_CACHING", "1") != 0)
		goto oom;
	else if (user_keeps_cache)
		um_warn("PYTORCH_NO_CUDA_MEMORY_CACHING=%s keeps PyTorch's caching allocator on (only 1 turns it "
			"off): umkit sees the cache's blocks, not each tensor",
			no_cache);
	if ((inj->framework_cache || user_keeps_cache) && expandable_segments_off(e) != 0)
		goto oom;
	return 0;
oom:
	um_errmsg(err, errlen, "out of memory building the environment");
	return -1;
}

bool launch_pytorch_cache_off(const char *value)
{
	return value && strcmp(value, "1") == 0;
}
