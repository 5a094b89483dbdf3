#include <stdio.h>
#include <time.h>
int main(void)
{
	struct timespec a, b, t;
	int ids[] = { CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE };
	const char *names[] = { "MONOTONIC", "MONOTONIC_RAW", "MONOTONIC_COARSE" };
	for (int k = 0; k < 3; k++) {
		const int n = 1000000;
		clock_gettime(CLOCK_MONOTONIC, &a);
		for (int i = 0; i < n; i++)
			clock_gettime(ids[k], &t);
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("%s: %.1f ns per call\n", names[k], ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n);
	}
	return 0;
}
