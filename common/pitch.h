/*
 * pitch.h: the layout of a pitched allocation (cudaMallocPitch,
 * cudaMalloc3D): rows of width bytes, each padded to a pitch that is a
 * multiple of the runtime's row alignment, height rows to a slice, depth
 * slices.
 */
#ifndef UMKIT_PITCH_H
#define UMKIT_PITCH_H

#include <stdbool.h>
#include <stddef.h>

/* Sets *pitch (width rounded up to a multiple of align) and *bytes (the
 * allocation: pitch × height × depth). Returns false, setting neither,
 * when a dimension or align is zero or a result overflows. */
bool um_pitched_layout(size_t width, size_t height, size_t depth, size_t align, size_t *pitch, size_t *bytes);

#endif
