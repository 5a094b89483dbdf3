/*
 * log.h: the one place umkit talks to the user's terminal.
 *
 * Messages go to stderr prefixed with the component ("umrec: ...") so they
 * stand out from the traced program's own output. The injected libraries
 * log through the same functions; UMKIT_LOG=quiet|info|debug sets the level
 * (default info; quiet is UM_LOG_WARN), and um_log_set_level() overrides it
 * (the -q flag sets UM_LOG_WARN).
 */
#ifndef UMKIT_LOG_H
#define UMKIT_LOG_H

#include <stdbool.h>

enum um_log_level { UM_LOG_ERROR = 0, UM_LOG_WARN = 1, UM_LOG_INFO = 2, UM_LOG_DEBUG = 3 };

/* Sets the prefix printed before every message ("umrec", "umplan", ...). */
void um_log_init(const char *component);
void um_log_set_level(enum um_log_level level);

/* Errors and warnings always print; info and debug by level. */
void um_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void um_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void um_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void um_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether everything written to stdout got there, saying why when not: a
 * write that failed inside printf (output past stdio's buffer, a full
 * disk) shows only in the stream's error flag, not at the final flush. */
bool um_stdout_flushed(void);

#endif
