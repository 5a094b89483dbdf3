/*
 * cupti_um.h: turning on CUPTI's Unified Memory counters (migrations both
 * ways and GPU page faults), for the recorder and the replayer alike.
 *
 * CUPTI refuses them until the device is fully set up: at
 * InitializeInjection, and on the H100 machine also in the context-created
 * callback (CUPTI_ERROR_NOT_READY). What works is configuring and enabling
 * once the first kernel is about to launch, so the launch callbacks call
 * cupti_um_enable() every time; after the first success it costs one atomic
 * load. Each attempt configures first (faults and migrations, then
 * migrations alone if faults are refused).
 */
#ifndef UMKIT_CUPTI_UM_H
#define UMKIT_CUPTI_UM_H

enum cupti_um_state {
	CUPTI_UM_TRYING = 0,
	CUPTI_UM_ENABLED_WITH_FAULTS,
	CUPTI_UM_ENABLED_MIGRATIONS_ONLY,
	CUPTI_UM_FAILED,
};

/* Tries (again) unless already enabled or given up, or another thread is
 * trying; returns the state. On the transition to CUPTI_UM_FAILED it warns
 * once, naming CUPTI's error, which *why (if not NULL) then points to, for
 * every caller that gets that state. Thread-safe. */
enum cupti_um_state cupti_um_enable(const char **why);

#endif
