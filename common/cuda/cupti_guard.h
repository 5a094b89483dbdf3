/*
 * cupti_guard.h: keep the program's own CUPTI users (torch.profiler, Nsight)
 * from taking umkit's subscription away mid-run.
 *
 * CUPTI allows one subscriber and one set of activity-buffer callbacks per
 * process. The injected library defines the CUPTI entry points that would
 * replace or tear down umkit's (cuptiSubscribe, cuptiActivityRegisterCallbacks,
 * cuptiActivityEnable/Disable, cuptiFinalize, ...) or change the settings
 * its records depend on (the kinds per context, the Unified Memory
 * counters, the flush period, the timestamps' source, hardware tracing);
 * calls that only add records umkit passes over (the driver and runtime
 * API kinds, latency timestamps) or size its buffers are let through.
 * Once umkit holds CUPTI, a call from the program fails with
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and one clear warning,
 * and the program goes on without its profiler data.
 * umkit's own calls go to the real functions through cupti_real().
 */
#ifndef UMKIT_CUPTI_GUARD_H
#define UMKIT_CUPTI_GUARD_H

#include <cupti.h>

struct cupti_real {
	CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
						 CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
	CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
	CUptiResult (*ActivityEnableContext)(CUcontext, CUpti_ActivityKind);
	CUptiResult (*ActivityDisableContext)(CUcontext, CUpti_ActivityKind);
	CUptiResult (*ActivityConfigureUnifiedMemoryCounter)(CUpti_ActivityUnifiedMemoryCounterConfig *, uint32_t);
	CUptiResult (*ActivityFlushPeriod)(uint32_t);
	CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
	CUptiResult (*ActivityEnableHWTrace)(uint8_t);
	CUptiResult (*Finalize)(void);
};

/* The real CUPTI functions (resolved once). */
const struct cupti_real *cupti_real(void);

/* From now on, calls from the program are refused; tool names the tool in
 * the warning ("umrec"). */
void cupti_guard_hold(const char *tool);

#endif
