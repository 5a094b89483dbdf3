/* A CUPTI subscriber with trivial callbacks, to time what CUPTI's dispatch
 * costs a launch. LC_MODE: launch (launch cbids on), none (subscribed only),
 * onoff (launch cbids on, then off at the first launch's exit). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <cupti.h>
static CUpti_SubscriberHandle sub;
static atomic_ulong n;
static const CUpti_CallbackId ids[] = { CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx };
static int onoff;
static void CUPTIAPI cb(void *u, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
	const CUpti_CallbackData *c = data;
	atomic_fetch_add_explicit(&n, 1, memory_order_relaxed);
	if (onoff && c->callbackSite == CUPTI_API_EXIT) {
		onoff = 0;
		for (int i = 0; i < 2; i++)
			cuptiEnableCallback(0, sub, CUPTI_CB_DOMAIN_DRIVER_API, ids[i]);
	}
}
int InitializeInjection(void);
int InitializeInjection(void)
{
	const char *m = getenv("LC_MODE");
	if (cuptiSubscribe(&sub, cb, NULL) != CUPTI_SUCCESS)
		return 1;
	onoff = m && !strcmp(m, "onoff");
	if (m && (!strcmp(m, "launch") || onoff))
		for (int i = 0; i < 2; i++)
			cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, ids[i]);
	return 1;
}
