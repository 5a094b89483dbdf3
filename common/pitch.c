/* pitch.c: the layout of a pitched allocation (see pitch.h). */
#include "pitch.h"

bool um_pitched_layout(size_t width, size_t height, size_t depth, size_t align, size_t *pitch, size_t *bytes)
{
	size_t padded, slice, total;
	if (!width || !height || !depth || !align)
		return false;
	if (__builtin_add_overflow(width, align - 1, &padded))
		return false;
	padded -= padded % align;
	if (__builtin_mul_overflow(padded, height, &slice) || __builtin_mul_overflow(slice, depth, &total))
		return false;
	*pitch = padded;
	*bytes = total;
	return true;
}
