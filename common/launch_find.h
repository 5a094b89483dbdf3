/*
 * launch_find.h: what a launcher needs found before it starts the
 * program: its injected library, the libcupti that library will load, and
 * the GPU driver. Nothing here links CUDA (design.md, mechanism 9): the
 * driver is only dlopen()ed to tell "no GPU" apart from later failures.
 * Errors come back as text in err, never printed here.
 */
#ifndef UMKIT_LAUNCH_FIND_H
#define UMKIT_LAUNCH_FIND_H

#include <stddef.h>

/*
 * Finds the injected library `name` (e.g. "libumrec.so") and writes its
 * absolute path into out. With UMKIT_LIBDIR set, only that folder is
 * searched, and its path is kept as given (made absolute, links not
 * resolved), so that a link can stand for a folder whose path LD_PRELOAD
 * cannot express; otherwise the folders ../lib and ../lib/umkit next to the
 * running binary (the build tree and `make install` layouts), resolved.
 * Returns 0, or -1 with err naming every path looked at.
 */
int launch_find_library(const char *name, char *out, size_t outlen, char *err, size_t errlen);

/*
 * Finds the libcupti that the injected library at `library` will load, for
 * NVTX_INJECTION64_PATH (NVTX must reach the same CUPTI copy the injection
 * subscribed with, not a second one). UMKIT_CUPTI, a file or a folder, wins
 * and is used alone. Otherwise the soname the library links (DT_NEEDED,
 * else libcupti.so.13 or libcupti.so) is looked up the way the dynamic
 * loader would for that library (its DT_RPATH, LD_LIBRARY_PATH, its
 * DT_RUNPATH), then in $CUDA_HOME and /usr/local/cuda (extras/CUPTI/lib64,
 * lib64, targets/x86_64-linux/lib) and the system library folder. Writes
 * the absolute path into out and returns 0, or -1 with err.
 */
int launch_find_cupti(const char *library, char *out, size_t outlen, char *err, size_t errlen);

/*
 * Checks that the NVIDIA driver library (libcuda.so.1) can be loaded, and
 * unloads it again. `tool` names the command in the message. Returns 0, or
 * -1 with err saying that `tool` needs a GPU.
 */
int launch_check_driver(const char *tool, char *err, size_t errlen);

#endif
