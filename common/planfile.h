/*
 * planfile.h: the plan.bin container (docs/plan-format.md).
 *
 * A plan file is a fixed header (magic, format version, section count,
 * payload length, checksum of the whole file but the checksum field), a
 * section table and zstd-compressed sections, each with its own checksum.
 * This module knows nothing of what the sections mean (common/plan.h
 * does); it guarantees that a reader either gets every section back exactly
 * as written or a clear error naming the file and the problem: a truncated,
 * corrupt, foreign or newer file never crashes the reader.
 */
#ifndef UMKIT_PLANFILE_H
#define UMKIT_PLANFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The version written; the reader takes every version from 1 to this one
 * (docs/plan-format.md, "Compatibility"). */
#define PLANFILE_VERSION 3

typedef struct planfile_writer planfile_writer;
typedef struct planfile planfile;

planfile_writer *planfile_writer_create(void);
void planfile_writer_destroy(planfile_writer *w);

/* Adds a section (data is copied). Ids are unique; returns 0, or -1 if id
 * was already added or memory ran out. */
int planfile_writer_add(planfile_writer *w, uint32_t id, const void *data, size_t len);

/* Writes the file atomically (temporary file, then rename): a crash never
 * leaves a half-written plan under path. Output depends only on the
 * sections added, so equal inputs give byte-identical files. Sections a
 * reader would refuse (more than it takes, in number or in bytes) are not
 * written. Returns 0, or -1 with err naming path and the problem. */
int planfile_writer_save(planfile_writer *w, const char *path, char *err, size_t errlen);

/* The bytes planfile_writer_save would write, in a malloc'ed buffer the
 * caller frees (for writing elsewhere than a file, and for tests). Returns
 * 0, or -1 when out of memory or when planfile_writer_save would refuse
 * the sections. */
int planfile_writer_encode(planfile_writer *w, void **data, size_t *len);

/* Whether the file f (open for reading at its start) begins as a plan
 * does: what may be replaced by a new plan. */
bool planfile_is_plan(FILE *f);

/* Reads and verifies a whole plan file. Returns NULL with err set (naming
 * path) on any problem: missing, unreadable, not a plan, newer version,
 * truncated, checksum mismatch, bad section table, decompression failure. */
planfile *planfile_open(const char *path, char *err, size_t errlen);

/* The same over a buffer; name is used in messages. */
planfile *planfile_open_mem(const void *data, size_t len, const char *name,
			    char *err, size_t errlen);
void planfile_close(planfile *p);

/* The decompressed bytes of section id, or NULL if the file has none. The
 * memory belongs to p. */
const void *planfile_section(const planfile *p, uint32_t id, size_t *len);

/* The format version in the file's header (1 to PLANFILE_VERSION). */
uint32_t planfile_version(const planfile *p);

/* Section ids present, in file order (for --dump). */
size_t planfile_section_count(const planfile *p);
uint32_t planfile_section_id(const planfile *p, size_t index);

#endif
