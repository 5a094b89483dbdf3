/* device_fit.c: a plan's room against the GPU's memory (see device_fit.h). */
#include "device_fit.h"

#include <stdio.h>

#include "size.h"

bool device_fit_warning(const char *plan_path, uint64_t capacity, uint64_t budget, const char *device_name,
			uint64_t device_bytes, char *msg, size_t len)
{
	uint64_t limit = budget ? budget : capacity;
	if (!device_bytes || limit <= device_bytes)
		return false;
	char want[32], has[32];
	um_size_format(limit, want, sizeof want);
	um_size_format(device_bytes, has, sizeof has);
	if (budget)
		snprintf(msg, len, "--gpu-budget %s is more than the %s of %s: residency past the GPU's memory is "
			 "evicted by the driver on demand, not by the plan", want, has, device_name);
	else
		snprintf(msg, len, "%s keeps residency under %s, more than the %s of %s it runs on: the room the "
			 "plan counts on is not there, and the GPU will evict and fault on its own; make the plan "
			 "for this GPU (umplan --capacity) or replay with --gpu-budget", plan_path, want, has,
			 device_name);
	return true;
}
