/* log.c: prefixed, levelled messages on stderr (see log.h). */
#include "log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char log_component[32] = "umkit";
static int log_level = -1; /* -1: not yet read from UMKIT_LOG */

void um_log_init(const char *component)
{
	snprintf(log_component, sizeof log_component, "%s", component);
}

void um_log_set_level(enum um_log_level level)
{
	log_level = level;
}

static enum um_log_level um_log_level(void)
{
	if (log_level < 0) {
		const char *env = getenv("UMKIT_LOG");
		log_level = UM_LOG_INFO;
		if (env && strcmp(env, "quiet") == 0)
			log_level = UM_LOG_WARN;
		else if (env && strcmp(env, "debug") == 0)
			log_level = UM_LOG_DEBUG;
	}
	return (enum um_log_level)log_level;
}

static void vlog(enum um_log_level level, const char *tag, const char *fmt, va_list ap)
{
	/* Room for the longest message the tools build (their error buffers
	 * hold PATH_MAX and more), so that none loses its end, where the
	 * reason and the way out are. */
	char line[8192];
	if (level > um_log_level())
		return;
	/* One write per message so lines from several threads do not interleave. */
	int n = snprintf(line, sizeof line, "%s: %s", log_component, tag);
	if (n < 0 || (size_t)n >= sizeof line)
		n = 0;
	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	fprintf(stderr, "%s\n", line);
}

#define DEFINE_LOG(fn, level, tag)                \
	void fn(const char *fmt, ...)             \
	{                                         \
		va_list ap;                       \
		va_start(ap, fmt);                \
		vlog(level, tag, fmt, ap);        \
		va_end(ap);                       \
	}

DEFINE_LOG(um_error, UM_LOG_ERROR, "error: ")
DEFINE_LOG(um_warn, UM_LOG_WARN, "warning: ")
DEFINE_LOG(um_info, UM_LOG_INFO, "")
DEFINE_LOG(um_debug, UM_LOG_DEBUG, "debug: ")

bool um_stdout_flushed(void)
{
	if (fflush(stdout) == 0 && !ferror(stdout))
		return true;
	um_error("writing to standard output failed: %s", strerror(errno));
	return false;
}
