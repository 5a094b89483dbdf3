/* cupti_guard.c: refuse the program's CUPTI calls while umkit holds CUPTI
 * (see cupti_guard.h). */
#include "cupti_guard.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "log.h"

static struct cupti_real real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static atomic_bool held;
static atomic_int warned;
static const char *holder = "umkit";

static void resolve(void)
{
	/* Our definitions shadow libcupti's; RTLD_NEXT finds libcupti's. */
	*(void **)&real.Subscribe = dlsym(RTLD_NEXT, "cuptiSubscribe");
	*(void **)&real.Unsubscribe = dlsym(RTLD_NEXT, "cuptiUnsubscribe");
	*(void **)&real.ActivityRegisterCallbacks = dlsym(RTLD_NEXT, "cuptiActivityRegisterCallbacks");
	*(void **)&real.ActivityEnable = dlsym(RTLD_NEXT, "cuptiActivityEnable");
	*(void **)&real.ActivityDisable = dlsym(RTLD_NEXT, "cuptiActivityDisable");
	*(void **)&real.ActivityEnableContext = dlsym(RTLD_NEXT, "cuptiActivityEnableContext");
	*(void **)&real.ActivityDisableContext = dlsym(RTLD_NEXT, "cuptiActivityDisableContext");
	*(void **)&real.ActivityConfigureUnifiedMemoryCounter =
		dlsym(RTLD_NEXT, "cuptiActivityConfigureUnifiedMemoryCounter");
	*(void **)&real.ActivityFlushPeriod = dlsym(RTLD_NEXT, "cuptiActivityFlushPeriod");
	*(void **)&real.ActivityRegisterTimestampCallback = dlsym(RTLD_NEXT, "cuptiActivityRegisterTimestampCallback");
	*(void **)&real.ActivityEnableHWTrace = dlsym(RTLD_NEXT, "cuptiActivityEnableHWTrace");
	*(void **)&real.Finalize = dlsym(RTLD_NEXT, "cuptiFinalize");
}

const struct cupti_real *cupti_real(void)
{
	pthread_once(&real_once, resolve);
	return &real;
}

void cupti_guard_hold(const char *tool)
{
	holder = tool;
	atomic_store(&held, true);
}

/* True (after warning once) when a call from the program must be refused. */
static bool refuse(const char *fn)
{
	if (!atomic_load(&held))
		return false;
	if (atomic_fetch_add(&warned, 1) == 0)
		um_warn("the program called %s, but %s holds the process's CUPTI subscription; "
			"its profiler (torch.profiler, Nsight) gets no CUDA data in this run", fn, holder);
	return true;
}

#define GUARDED(fn, field, params, args)                                   \
	CUptiResult fn params                                              \
	{                                                                  \
		if (refuse(#fn))                                           \
			return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED; \
		if (!cupti_real()->field)                                  \
			return CUPTI_ERROR_NOT_INITIALIZED;                \
		return cupti_real()->field args;                           \
	}

GUARDED(cuptiSubscribe, Subscribe,
	(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *data), (s, cb, data))
GUARDED(cuptiUnsubscribe, Unsubscribe, (CUpti_SubscriberHandle s), (s))
GUARDED(cuptiActivityRegisterCallbacks, ActivityRegisterCallbacks,
	(CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done), (req, done))
GUARDED(cuptiActivityEnable, ActivityEnable, (CUpti_ActivityKind kind), (kind))
GUARDED(cuptiActivityDisable, ActivityDisable, (CUpti_ActivityKind kind), (kind))
GUARDED(cuptiActivityEnableContext, ActivityEnableContext, (CUcontext c, CUpti_ActivityKind kind), (c, kind))
/* A context's setting overrides the process's: umkit's kinds would stop
 * there. */
GUARDED(cuptiActivityDisableContext, ActivityDisableContext, (CUcontext c, CUpti_ActivityKind kind), (c, kind))
/* The counters are the process's: a new set would drop the fault records. */
GUARDED(cuptiActivityConfigureUnifiedMemoryCounter, ActivityConfigureUnifiedMemoryCounter,
	(CUpti_ActivityUnifiedMemoryCounterConfig *config, uint32_t count), (config, count))
GUARDED(cuptiActivityFlushPeriod, ActivityFlushPeriod, (uint32_t ms), (ms))
/* The records' times must stay on the clock umkit's own times are on. */
GUARDED(cuptiActivityRegisterTimestampCallback, ActivityRegisterTimestampCallback,
	(CUpti_TimestampCallbackFunc fn), (fn))
GUARDED(cuptiActivityEnableHWTrace, ActivityEnableHWTrace, (uint8_t enable), (enable))
GUARDED(cuptiFinalize, Finalize, (void), ())
