/*
 * launch_find.c: finding the injected library and libcupti, and the
 * driver check (see launch_find.h).
 */
#include "launch_find.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "errmsg.h"

/* Appends an item to a running list of what was searched; items that no
 * longer fit are left out, marked once with "...". */
static void append(char *buf, size_t len, const char *text)
{
	size_t used = strlen(buf), tlen = strlen(text);
	if (used >= 3 && strcmp(buf + used - 3, "...") == 0)
		return;
	if (used + 2 + tlen + 6 >= len) { /* keep room for ", ..." */
		text = "...";
		tlen = 3;
	}
	if (used) {
		memcpy(buf + used, ", ", 2);
		used += 2;
	}
	memcpy(buf + used, text, tlen + 1);
}

static int is_readable_file(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, R_OK) == 0;
}

/* ---- the injected library ---- */

/* path made absolute against the current folder, its links kept. Returns
 * whether it fits into out. */
static bool absolute_path(const char *path, char *out, size_t outlen)
{
	char cwd[PATH_MAX];
	if (path[0] == '/')
		return (size_t)snprintf(out, outlen, "%s", path) < outlen;
	return getcwd(cwd, sizeof cwd) && (size_t)snprintf(out, outlen, "%s/%s", cwd, path) < outlen;
}

/* Looks for dir/name; on success writes its path into out: canonical
 * with resolve, else absolute with its links kept. */
static int try_file(const char *dir, const char *name, bool resolve, char *out, size_t outlen, char *tried,
		    size_t triedlen)
{
	char path[PATH_MAX], found[PATH_MAX];
	if (snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
		return 0;
	append(tried, triedlen, path);
	if (!is_readable_file(path))
		return 0;
	bool named = resolve ? realpath(path, found) != NULL : absolute_path(path, found, sizeof found);
	if (!named || strlen(found) >= outlen)
		return 0;
	strcpy(out, found);
	return 1;
}

int launch_find_library(const char *name, char *out, size_t outlen, char *err, size_t errlen)
{
	char tried[1024] = "";
	const char *libdir = getenv("UMKIT_LIBDIR");
	if (libdir && *libdir) {
		/* Not resolved: a link whose path LD_PRELOAD can express (no space
		 * or colon) may stand for a folder whose own path it cannot. */
		if (try_file(libdir, name, false, out, outlen, tried, sizeof tried))
			return 0;
		um_errmsg(err, errlen, "cannot find %s in UMKIT_LIBDIR=%s: %s is missing or unreadable", name, libdir,
			tried);
		return -1;
	}

	char exe[PATH_MAX], prefix[PATH_MAX + 4];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n < 0) {
		um_errmsg(err, errlen, "cannot find %s: /proc/self/exe: %s (set UMKIT_LIBDIR to the folder holding it)",
			name, strerror(errno));
		return -1;
	}
	exe[n] = '\0';
	/* bin/umrec -> the prefix above bin/, shown resolved so the message
	 * names real folders. */
	char *slash = strrchr(exe, '/');
	if (slash)
		*slash = '\0';
	char up[PATH_MAX + 4];
	snprintf(up, sizeof up, "%s/..", exe);
	if (!realpath(up, prefix))
		snprintf(prefix, sizeof prefix, "%s", up);

	static const char *const subdirs[] = { "lib", "lib/umkit" };
	for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0]; i++) {
		char dir[PATH_MAX + 32];
		snprintf(dir, sizeof dir, "%s/%s", prefix, subdirs[i]);
		if (try_file(dir, name, true, out, outlen, tried, sizeof tried))
			return 0;
	}
	um_errmsg(err, errlen, "cannot find %s: looked for %s (set UMKIT_LIBDIR to the folder holding it)",
		name, tried);
	return -1;
}

/* ---- libcupti ---- */

/* What the injected library's dynamic section says about loading libcupti. */
struct elf_deps {
	char cupti[NAME_MAX + 1]; /* the DT_NEEDED libcupti soname, or "" */
	char *rpath, *runpath;    /* malloc'd, or NULL */
};

static void *read_at(int fd, uint64_t off, uint64_t size, uint64_t max)
{
	if (size == 0 || size > max)
		return NULL;
	char *buf = malloc(size + 1);
	if (!buf)
		return NULL;
	if (pread(fd, buf, size, (off_t)off) != (ssize_t)size) {
		free(buf);
		return NULL;
	}
	buf[size] = '\0'; /* a string table then always ends in NUL */
	return buf;
}

/*
 * Reads DT_NEEDED (libcupti's soname), DT_RPATH and DT_RUNPATH from a
 * 64-bit native-endian ELF file through its section headers. Best effort:
 * leaves d empty for anything else (the caller falls back to fixed names
 * and folders), never failing the launch on its own.
 */
static void read_elf_deps(const char *path, struct elf_deps *d)
{
	memset(d, 0, sizeof *d);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf64_Shdr *sh = NULL;
	Elf64_Dyn *dyn = NULL;
	char *str = NULL;
	Elf64_Ehdr eh;
	if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB) ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0)
		goto out;
	sh = read_at(fd, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof *sh, 1 << 24);
	if (!sh)
		goto out;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_type != SHT_DYNAMIC || sh[i].sh_link >= eh.e_shnum)
			continue;
		const Elf64_Shdr *strsh = &sh[sh[i].sh_link];
		dyn = read_at(fd, sh[i].sh_offset, sh[i].sh_size, 1 << 20);
		str = read_at(fd, strsh->sh_offset, strsh->sh_size, 1 << 26);
		if (!dyn || !str)
			goto out;
		size_t ndyn = sh[i].sh_size / sizeof *dyn;
		for (size_t k = 0; k < ndyn && dyn[k].d_tag != DT_NULL; k++) {
			if (dyn[k].d_un.d_val >= strsh->sh_size)
				continue;
			const char *s = str + dyn[k].d_un.d_val;
			if (dyn[k].d_tag == DT_NEEDED && strncmp(s, "libcupti.so", 11) == 0 &&
			    strlen(s) < sizeof d->cupti)
				strcpy(d->cupti, s);
			else if (dyn[k].d_tag == DT_RPATH && !d->rpath)
				d->rpath = strdup(s);
			else if (dyn[k].d_tag == DT_RUNPATH && !d->runpath)
				d->runpath = strdup(s);
		}
		break;
	}
out:
	free(sh);
	free(dyn);
	free(str);
	close(fd);
}

/* Looks for one of names in dir (relative folders and $ORIGIN resolved the
 * way the loader does); on success writes dir's canonical path + name. */
static int try_names(const char *dir, const char *origin, const char *const *names, size_t nnames, char *out,
		     size_t outlen, char *tried, size_t triedlen)
{
	char expanded[PATH_MAX], real[PATH_MAX];
	const char *tail = NULL;
	if (strncmp(dir, "$ORIGIN", 7) == 0)
		tail = dir + 7;
	else if (strncmp(dir, "${ORIGIN}", 9) == 0)
		tail = dir + 9;
	if (tail) {
		if (snprintf(expanded, sizeof expanded, "%s%s", origin, tail) >= (int)sizeof expanded)
			return 0;
		dir = expanded;
	}
	if (!*dir)
		return 0;
	append(tried, triedlen, dir);
	if (!realpath(dir, real))
		return 0;
	for (size_t i = 0; i < nnames; i++) {
		char path[PATH_MAX];
		if (snprintf(path, sizeof path, "%s/%s", real, names[i]) >= (int)sizeof path ||
		    !is_readable_file(path) || strlen(path) >= outlen)
			continue;
		strcpy(out, path);
		return 1;
	}
	return 0;
}

/* try_names over a colon-separated search path. */
static int try_path_list(const char *list, const char *origin, const char *const *names, size_t nnames, char *out,
			 size_t outlen, char *tried, size_t triedlen)
{
	if (!list)
		return 0;
	char *copy = strdup(list);
	if (!copy)
		return 0;
	int found = 0;
	char *save = NULL;
	for (char *dir = strtok_r(copy, ":;", &save); dir && !found; dir = strtok_r(NULL, ":;", &save))
		found = try_names(dir, origin, names, nnames, out, outlen, tried, triedlen);
	free(copy);
	return found;
}

int launch_find_cupti(const char *library, char *out, size_t outlen, char *err, size_t errlen)
{
	/* Past this the list ends in "...": with the rest of the message it
	 * fits the callers' err (4096 bytes) and one line of common/log.c. */
	char tried[2048] = "";
	struct elf_deps deps;
	read_elf_deps(library, &deps); /* on failure deps stays empty */
	/* Without the library's own DT_NEEDED: CUDA 13's soname, then the
	 * toolkit's development link. */
	const char *fallback[] = { "libcupti.so.13", "libcupti.so" };
	const char *needed[] = { deps.cupti };
	const char *const *names = deps.cupti[0] ? needed : fallback;
	size_t nnames = names == needed ? 1 : 2;

	const char *user = getenv("UMKIT_CUPTI");
	if (user && *user) {
		char real[PATH_MAX];
		struct stat st;
		int found = 0;
		if (stat(user, &st) == 0 && S_ISDIR(st.st_mode))
			found = try_names(user, "", names, nnames, out, outlen, tried, sizeof tried);
		else if (is_readable_file(user) && realpath(user, real) && strlen(real) < outlen) {
			strcpy(out, real);
			found = 1;
		}
		if (!found)
			um_errmsg(err, errlen, "UMKIT_CUPTI=%s is neither a readable file nor a folder holding %s", user,
				names[0]);
		free(deps.rpath);
		free(deps.runpath);
		return found ? 0 : -1;
	}

	char origin[PATH_MAX];
	snprintf(origin, sizeof origin, "%s", library);
	char *slash = strrchr(origin, '/');
	if (slash)
		*slash = '\0';

	/* The loader's order for a library's DT_NEEDED: DT_RPATH (ignored
	 * when DT_RUNPATH exists), LD_LIBRARY_PATH, DT_RUNPATH. */
	const char *rpath = deps.runpath ? NULL : deps.rpath;
	int found = try_path_list(rpath, origin, names, nnames, out, outlen, tried, sizeof tried) ||
		    try_path_list(getenv("LD_LIBRARY_PATH"), origin, names, nnames, out, outlen, tried,
				  sizeof tried) ||
		    try_path_list(deps.runpath, origin, names, nnames, out, outlen, tried, sizeof tried);

	/* Then where CUDA toolkits put CUPTI, and the system folder. */
	const char *homes[] = { getenv("CUDA_HOME"), "/usr/local/cuda" };
	static const char *const subdirs[] = { "extras/CUPTI/lib64", "lib64", "targets/x86_64-linux/lib" };
	for (size_t h = 0; h < 2 && !found; h++) {
		if (!homes[h] || !*homes[h])
			continue;
		for (size_t i = 0; i < sizeof subdirs / sizeof subdirs[0] && !found; i++) {
			char dir[PATH_MAX];
			snprintf(dir, sizeof dir, "%s/%s", homes[h], subdirs[i]);
			found = try_names(dir, origin, names, nnames, out, outlen, tried, sizeof tried);
		}
	}
	if (!found)
		found = try_names("/usr/lib/x86_64-linux-gnu", origin, names, nnames, out, outlen, tried,
				  sizeof tried);
	if (!found)
		um_errmsg(err, errlen, "cannot find %s (looked in %s): set UMKIT_CUPTI to its path", names[0], tried);
	free(deps.rpath);
	free(deps.runpath);
	return found ? 0 : -1;
}

/* ---- the driver ---- */

int launch_check_driver(const char *tool, char *err, size_t errlen)
{
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (h) {
		dlclose(h);
		return 0;
	}
	const char *why = dlerror();
	/* "Not found" is the common case (a machine without the driver) and
	 * gets the plain message; anything else (a broken install) is shown. */
	if (!why || strstr(why, "No such file"))
		um_errmsg(err, errlen, "no NVIDIA driver (libcuda.so.1 not found): %s needs a GPU", tool);
	else
		um_errmsg(err, errlen, "cannot load the NVIDIA driver: %s", why);
	return -1;
}
