/*
 * launcher.c: finding the injected library and libcupti, the driver check,
 * the child's environment and running the command (see launcher.h).
 */
#include "launcher.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "errmsg.h"
#include "grow.h"
#include "log.h"
#include "pytorch_conf.h"

/* Formats into err, tolerating a NULL or empty buffer. */
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

/* ---- the child's environment ---- */

struct launch_env {
	char **vars; /* NAME=VALUE, owned, NULL-terminated */
	size_t n, cap;
};

static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* Index of name in e, or e->n. */
static size_t env_find(const launch_env *e, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < e->n; i++)
		if (name_len(e->vars[i]) == len && strncmp(e->vars[i], name, len) == 0)
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
	if (i == e->n)
		return NULL;
	const char *eq = strchr(e->vars[i], '=');
	return eq ? eq + 1 : "";
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
	const char *old = launch_env_get(e, "LD_PRELOAD");
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
	if (inj->framework_cache)
		launch_env_unset(e, "PYTORCH_NO_CUDA_MEMORY_CACHING");
	else if (!no_cache && launch_env_set(e, "PYTORCH_NO_CUDA_MEMORY_CACHING", "1") != 0)
		goto oom;
	else if (no_cache && !launch_pytorch_cache_off(no_cache))
		um_warn("PYTORCH_NO_CUDA_MEMORY_CACHING=%s keeps PyTorch's caching allocator on (only 1 turns it "
			"off): umkit sees the cache's blocks, not each tensor",
			no_cache);
	if ((inj->framework_cache || (no_cache && !launch_pytorch_cache_off(no_cache))) &&
	    expandable_segments_off(e) != 0)
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

/* ---- the command line as metadata ---- */

/* Appends word to out (which has room), quoted for a shell when needed;
 * returns the bytes written. */
static size_t quote_word(const char *word, char *out)
{
	size_t k = 0;
	int plain = *word != '\0';
	for (const char *c = word; *c && plain; c++)
		plain = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
			strchr("-_./=:,+@%", *c);
	if (plain) {
		memcpy(out, word, strlen(word));
		return strlen(word);
	}
	out[k++] = '\'';
	for (const char *c = word; *c; c++) {
		if (*c == '\'') {
			memcpy(out + k, "'\\''", 4); /* close, escaped quote, reopen */
			k += 4;
		} else {
			out[k++] = *c;
		}
	}
	out[k++] = '\'';
	return k;
}

char *launch_join_args(char *const *argv, size_t n, size_t max_len)
{
	/* Worst case per word: every byte a quote (4 bytes), two quotes, a space. */
	size_t cap = 8;
	for (size_t i = 0; i < n; i++)
		cap += 4 * strlen(argv[i]) + 3;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		size_t start = len;
		if (i)
			out[len++] = ' ';
		len += quote_word(argv[i], out + len);
		if (len > max_len) {
			const char *more = i ? " ..." : "...";
			memcpy(out + start, more, strlen(more));
			len = start + strlen(more);
			break;
		}
	}
	out[len] = '\0';
	return out;
}

/* ---- running the command ---- */

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2 };
#define NFORWARDED (sizeof forwarded / sizeof forwarded[0])

/* The child being waited for; 0 outside launch_run and before fork returns. */
static volatile sig_atomic_t run_child;
/* Whether this process leads its session (launch_run). */
static volatile sig_atomic_t session_leader;

static void forward_signal(int sig, siginfo_t *info, void *ctx)
{
	/* A terminal's ^C and ^\ come from the kernel to the whole foreground
	 * process group, the child included when it is in this one's group:
	 * passing them on would deliver them twice (a second KeyboardInterrupt
	 * in Python). A child in a group of its own (under timeout(1), or one
	 * that called setpgid) got nothing: it gets them from here. The
	 * terminal's hangup goes to the session's leader alone, which this may
	 * be (ssh -t, a terminal window's command). */
	int saved = errno;
	pid_t pid = (pid_t)run_child;
	bool from_terminal = info && info->si_code == SI_KERNEL && !(sig == SIGHUP && session_leader);
	if (pid > 0 && !(from_terminal && getpgid(pid) == getpgrp()))
		kill(pid, sig);
	errno = saved;
}

/* 0, or the status execve would give file itself: 127 missing, 126 not
 * runnable. */
static int file_status(const char *file, int *why)
{
	struct stat st;
	if (stat(file, &st) != 0) {
		*why = errno;
		return errno == ENOENT || errno == ENOTDIR ? 127 : 126;
	}
	*why = EACCES;
	return S_ISREG(st.st_mode) && access(file, X_OK) == 0 ? 0 : 126;
}

/* file_status, and for a script ("#!" first) its interpreter's: execve
 * fails with the interpreter's errno when that is missing or not
 * runnable. */
static int program_status(const char *file, int *why)
{
	int status = file_status(file, why);
	FILE *f = status ? NULL : fopen(file, "r");
	char line[PATH_MAX + 3];
	if (!f)
		return status;
	bool script = fgets(line, sizeof line, f) && strncmp(line, "#!", 2) == 0;
	fclose(f);
	if (!script)
		return 0;
	char *interpreter = line + 2 + strspn(line + 2, " \t");
	interpreter[strcspn(interpreter, " \t\r\n")] = '\0';
	return *interpreter ? file_status(interpreter, why) : 0;
}

int launch_check_program(const char *program, char *err, size_t errlen)
{
	char file[PATH_MAX];
	int status, why;
	if (!*program) {
		status = 127; /* as execvp says of an empty name */
		why = ENOENT;
	} else if (strchr(program, '/')) {
		status = program_status(program, &why);
	} else {
		/* execvp's search: PATH's entries in order (an empty one is the
		 * current folder); a file found but not runnable is remembered
		 * while the search goes on. */
		const char *path = getenv("PATH");
		if (!path)
			path = "/bin:/usr/bin";
		status = 127;
		why = ENOENT;
		for (const char *dir = path;; dir++) {
			size_t n = strcspn(dir, ":");
			int found_why;
			if (n)
				snprintf(file, sizeof file, "%.*s/%s", (int)n, dir, program);
			else
				snprintf(file, sizeof file, "./%s", program);
			int found = program_status(file, &found_why);
			if (found == 0)
				return 0;
			if (found == 126) {
				status = 126;
				why = found_why;
			}
			dir += n;
			if (!*dir)
				break;
		}
	}
	if (status)
		um_errmsg(err, errlen, "cannot run '%s': %s", program, strerror(why));
	return status;
}

void launch_die_like(int sig)
{
	struct sigaction now;
	/* One the launcher ignores (nohup) it does not die of either. */
	if ((sig != SIGINT && sig != SIGTERM && sig != SIGHUP) || sigaction(sig, NULL, &now) != 0 ||
	    now.sa_handler == SIG_IGN)
		return;
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, sig);
	signal(sig, SIG_DFL);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(sig);
}

int launch_run(char *const argv[], char *const envp[], void (*started)(void *ctx), void *ctx, int *killed_by,
	       char *err, size_t errlen)
{
	*killed_by = 0;
	if (!argv || !argv[0]) {
		um_errmsg(err, errlen, "no command to run");
		return -1;
	}
	/* Blocked from before fork until the child's pid is known, so a signal
	 * in between is forwarded rather than lost. */
	sigset_t block, oldmask;
	sigemptyset(&block);
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaddset(&block, forwarded[i]);
	sigprocmask(SIG_BLOCK, &block, &oldmask);

	session_leader = getsid(0) == getpid();
	/* SIGCHLD ignored (a disposition the launcher may inherit) would have
	 * the kernel reap the child, leaving its status to nobody: the
	 * default here, the user's setting back in the child. */
	struct sigaction old_chld, dfl_chld;
	memset(&dfl_chld, 0, sizeof dfl_chld);
	dfl_chld.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &dfl_chld, &old_chld);

	struct sigaction old[NFORWARDED], fwd;
	memset(&fwd, 0, sizeof fwd);
	fwd.sa_sigaction = forward_signal;
	fwd.sa_flags = SA_SIGINFO | SA_RESTART;
	fwd.sa_mask = block;
	for (size_t i = 0; i < NFORWARDED; i++) {
		sigaction(forwarded[i], NULL, &old[i]);
		/* An ignored signal stays ignored, here and (inherited) in the child. */
		if (old[i].sa_handler != SIG_IGN)
			sigaction(forwarded[i], &fwd, NULL);
	}

	int status = -1;
	/* The child reports a failed exec through this pipe; a successful
	 * exec closes it (close-on-exec), so the parent reads end-of-file. */
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) != 0) {
		um_errmsg(err, errlen, "cannot create a pipe: %s", strerror(errno));
		goto restore;
	}
	pid_t pid = fork();
	if (pid < 0) {
		um_errmsg(err, errlen, "cannot fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		goto restore;
	}
	if (pid == 0) {
		for (size_t i = 0; i < NFORWARDED; i++)
			sigaction(forwarded[i], &old[i], NULL);
		sigaction(SIGCHLD, &old_chld, NULL);
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		close(fds[0]);
		execvpe(argv[0], argv, envp);
		int e = errno;
		ssize_t w = write(fds[1], &e, sizeof e);
		(void)w;
		_exit(127);
	}
	run_child = pid;
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	close(fds[1]);

	int exec_errno = 0;
	ssize_t r;
	do
		r = read(fds[0], &exec_errno, sizeof exec_errno);
	while (r < 0 && errno == EINTR);
	close(fds[0]);
	/* Anything but the child's errno (end-of-file) means the exec went
	 * through: the program is running. */
	bool exec_failed = r == (ssize_t)sizeof exec_errno;
	if (!exec_failed && started)
		started(ctx);

	/* Wait without reaping first: until the child is reaped its pid cannot
	 * be reused, so the forwarder never signals a stranger. */
	siginfo_t si;
	int ws = 0;
	pid_t w;
	while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
		;
	run_child = 0;
	do
		w = waitpid(pid, &ws, 0);
	while (w < 0 && errno == EINTR);

	if (exec_failed) {
		/* Shell convention: 127 not found, 126 found but not runnable. */
		status = exec_errno == ENOENT || exec_errno == ENOTDIR ? 127 : 126;
		um_errmsg(err, errlen, "cannot run '%s': %s", argv[0], strerror(exec_errno));
	} else if (w < 0) {
		um_errmsg(err, errlen, "cannot wait for '%s': %s", argv[0], strerror(errno));
	} else if (WIFEXITED(ws)) {
		status = WEXITSTATUS(ws);
	} else if (WIFSIGNALED(ws)) {
		status = 128 + WTERMSIG(ws);
		*killed_by = WTERMSIG(ws);
	}

restore:
	sigprocmask(SIG_BLOCK, &block, NULL);
	run_child = 0; /* for the early failures */
	for (size_t i = 0; i < NFORWARDED; i++)
		sigaction(forwarded[i], &old[i], NULL);
	sigaction(SIGCHLD, &old_chld, NULL);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	return status;
}

/* Whose the file at path is (st its status; f open for reading on it when
 * it is a regular file that is not empty). */
static enum launch_owner output_owner(const char *path, const struct stat *st, FILE *f,
				      enum launch_owner (*is_ours)(const char *path, FILE *f))
{
	if (!S_ISREG(st->st_mode))
		return LAUNCH_OWNER_OTHER;
	if (st->st_size == 0)
		return LAUNCH_OWNER_OURS;
	return is_ours(path, f);
}

int launch_output_path(const char *given, const char *option, const char *noun,
		       enum launch_owner (*is_ours)(const char *path, FILE *f), char *path, size_t len, char *err,
		       size_t errlen)
{
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(given, '/');
	const char *base = slash ? slash + 1 : given;
	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		um_errmsg(err, errlen, "%s %s: not a file name", option, given);
		return -1;
	}
	if (slash)
		snprintf(dir, sizeof dir, "%.*s", (int)(slash - given) + (slash == given), given);
	else
		snprintf(dir, sizeof dir, ".");
	if (!realpath(dir, real)) {
		um_errmsg(err, errlen, "cannot write the %s %s: %s: %s", noun, given, dir, strerror(errno));
		return -1;
	}
	struct stat st;
	errno = stat(real, &st) == 0 && !S_ISDIR(st.st_mode) ? ENOTDIR : 0;
	if (errno || access(real, W_OK | X_OK) != 0) {
		um_errmsg(err, errlen, "cannot write the %s %s: %s: %s", noun, given, real, strerror(errno));
		return -1;
	}
	if (snprintf(path, len, "%s%s%s", real, strcmp(real, "/") ? "/" : "", base) >= (int)len) {
		um_errmsg(err, errlen, "%s %s: path too long", option, given);
		return -1;
	}
	/* A symbolic link names the file to write: that file, and its folder,
	 * are judged and written, never the link (removing the link would
	 * destroy it, and the run would write a file in its place). The
	 * target is resolved whole, so this recurses once. */
	if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		if (!realpath(path, target)) {
			um_errmsg(err, errlen, "%s is a symbolic link to %s: not replacing it (choose another %s)",
				  path, errno == ENOENT ? "nothing" : strerror(errno), option);
			return -1;
		}
		return launch_output_path(target, option, noun, is_ours, path, len, err, errlen);
	}
	if (stat(path, &st) != 0)
		return 0;
	FILE *f = S_ISREG(st.st_mode) && st.st_size > 0 ? fopen(path, "rb") : NULL;
	if (S_ISREG(st.st_mode) && st.st_size > 0 && !f) {
		um_errmsg(err, errlen, "cannot read %s, there already: %s: not replacing it", path, strerror(errno));
		return -1;
	}
	enum launch_owner owner = output_owner(path, &st, f, is_ours);
	if (f)
		fclose(f);
	if (owner == LAUNCH_OWNER_IN_USE) {
		um_errmsg(err, errlen,
			  "%s is in use by another process, which holds it locked: not replacing it (choose another "
			  "%s, or wait until that process has closed it)",
			  path, option);
		return -1;
	}
	if (owner != LAUNCH_OWNER_OURS) {
		um_errmsg(err, errlen, "%s exists and is not a %s file: not replacing it (choose another %s)",
			  path, noun, option);
		return -1;
	}
	return 0;
}

enum launch_word launch_option_word(const char *word, const char *tool, const char *usage, FILE *out)
{
	if (strcmp(word, "--") == 0)
		return LAUNCH_WORD_SEPARATOR;
	if (word[0] != '-' || word[1] == '\0')
		return LAUNCH_WORD_COMMAND;
	if (strcmp(word, "-h") == 0 || strcmp(word, "--help") == 0) {
		fputs(usage, out);
		return LAUNCH_WORD_EXIT;
	}
	if (strcmp(word, "--version") == 0) {
		fprintf(out, "%s (umkit) %s\n", tool, UMKIT_VERSION);
		return LAUNCH_WORD_EXIT;
	}
	return LAUNCH_WORD_OPTION;
}

int launch_option_value(int argc, char **argv, int *i, const char *shrt, const char *lng,
			const char **value)
{
	const char *a = argv[*i];
	size_t n = lng ? strlen(lng) : 0;
	if (lng && strncmp(a, lng, n) == 0 && a[n] == '=') {
		*value = a + n + 1;
		return 1;
	}
	if (shrt && strncmp(a, shrt, 2) == 0 && a[2]) {
		*value = a + 2;
		return 1;
	}
	if (!((shrt && strcmp(a, shrt) == 0) || (lng && strcmp(a, lng) == 0)))
		return 0;
	if (*i + 1 >= argc)
		return -1;
	*value = argv[++*i];
	return 1;
}
