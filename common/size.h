/*
 * size.h: byte sizes as users write them ("8G", "512MiB", "1.5GB", "4096").
 *
 * A size is decimal digits, optionally a '.' and more digits, then a
 * suffix K, M, G or T (optionally followed by "i", "B" or "iB"), each a
 * power of 1024; a bare number is bytes. Case does not matter. No sign,
 * exponent, hexadecimal, inf or nan (docs/cli.md, "Sizes").
 */
#ifndef UMKIT_SIZE_H
#define UMKIT_SIZE_H

#include <stddef.h>
#include <stdint.h>

enum um_size_status {
	UM_SIZE_OK = 0,
	UM_SIZE_NOT_A_SIZE = -1, /* empty, a sign, an unknown suffix, junk */
	UM_SIZE_TOO_LARGE = -2,  /* a size, of 2^64 bytes or more */
};

/* Parses text into *out, which is left alone unless the result is
 * UM_SIZE_OK. A fraction of a byte is dropped. Returns an um_size_status. */
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
