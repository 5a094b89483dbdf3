/*
 * launch_env.h: the environment a launcher gives the program, the one
 * channel through which the child learns that it is traced (its argv is
 * the user's): the injection (CUDA_INJECTION64_PATH, LD_PRELOAD,
 * NVTX_INJECTION64_PATH), PyTorch's allocator settings, and the tool's
 * UMKIT_* variables. Errors come back as text in err, never printed here.
 */
#ifndef UMKIT_LAUNCH_ENV_H
#define UMKIT_LAUNCH_ENV_H

#include <stdbool.h>
#include <stddef.h>

/* The child's environment: a private copy of a base environment, edited
 * by name. Not thread-safe; the base is not modified. */
typedef struct launch_env launch_env;

/* Copies base (NULL-terminated NAME=VALUE strings, usually environ).
 * Returns NULL when out of memory. */
launch_env *launch_env_create(char *const *base);
void launch_env_destroy(launch_env *e);

/* Sets name=value, replacing every earlier value. Returns 0, or -1 when
 * out of memory (name then keeps its old value, or is unset). */
int launch_env_set(launch_env *e, const char *name, const char *value);
/* Removes name, every copy of it, if present. */
void launch_env_unset(launch_env *e, const char *name);
/* The value of name, or NULL; valid until e is next modified. */
const char *launch_env_get(const launch_env *e, const char *name);
/* The NULL-terminated NAME=VALUE array for execve; valid until e is next
 * modified or destroyed. */
char *const *launch_env_array(const launch_env *e);

struct launch_inject {
	const char *library;  /* absolute path of the injected library */
	const char *cupti;    /* absolute path of libcupti, for NVTX; NULL:
				 leave NVTX_INJECTION64_PATH as it is */
	int framework_cache;  /* 1: keep PyTorch's caching allocator on */
};

/*
 * Removes every UMKIT_* variable but those that configure the launchers
 * and logging (UMKIT_LOG, UMKIT_LIBDIR, UMKIT_CUPTI), so that a value left
 * exported in the user's shell (UMKIT_NO_MANAGED from an umrec session, an
 * old UMKIT_PLAN) cannot configure this run: the launcher sets its own.
 */
void launch_env_unset_stale(launch_env *e);

/*
 * Points the environment at the injected library: CUDA_INJECTION64_PATH and
 * (unless inj->cupti is NULL) NVTX_INJECTION64_PATH are set (replacing
 * earlier values), the library is
 * put first in LD_PRELOAD (keeping what was there: given twice, its last
 * copy, which the loader reads), and
 * PYTORCH_NO_CUDA_MEMORY_CACHING=1 is set unless already present, so the
 * library sees every tensor. A value the user set is kept, with a warning
 * unless it is 1: PyTorch 2.11 turns its cache off for 1 only (0 keeps it,
 * anything else is ignored with a warning of PyTorch's). With
 * framework_cache the variable is removed instead. Where the cache stays
 * on, PyTorch's expandable segments are turned off, with a warning, in
 * each allocator-settings variable that turns them on (common/pytorch_conf.h:
 * the library would not see that memory). Returns 0, or -1 with
 * err (out of memory, or a library path that LD_PRELOAD cannot express
 * because it holds a space or a colon).
 */
int launch_env_inject(launch_env *e, const struct launch_inject *inj, char *err, size_t errlen);

/* Whether a value of PYTORCH_NO_CUDA_MEMORY_CACHING (NULL: unset) turns
 * PyTorch's caching allocator off: only "1" does (PyTorch 2.11, checked on
 * the H100). */
bool launch_pytorch_cache_off(const char *value);

#endif
