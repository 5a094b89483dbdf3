/*
 * size.h: byte sizes as users write them ("8G", "512MiB", "1.5GB", "4096").
 *
 * Suffixes K, M, G, T (optionally followed by "i", "B" or "iB") are powers
 * of 1024; a bare number is bytes. Case does not matter.
 */
#ifndef UMKIT_SIZE_H
#define UMKIT_SIZE_H

#include <stddef.h>
#include <stdint.h>

/* Parses text into *out. Returns 0, or -1 when text is not a size (empty,
 * negative, unknown suffix, trailing junk, overflow). */
int um_size_parse(const char *text, uint64_t *out);

/* The value of an option that sizes memory (a budget, a cap, a capacity):
 * a size of at least one 2 MiB Unified Memory block and below 2^63 (sums
 * of it stay signed). A bare number is bytes, so a smaller one most
 * likely lost its unit: the message says so. Returns 0, or -1 with err
 * naming option and text. */
int um_memory_size_parse(const char *option, const char *text, uint64_t *out, char *err, size_t errlen);

/* Formats bytes for people ("1.50 GiB") into buf; returns buf. */
const char *um_size_format(uint64_t bytes, char *buf, size_t len);

#endif
