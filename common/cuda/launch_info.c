/*
 * launch_info.c: decode kernel launches (see launch_info.h).
 *
 * The parameter words that point into the arena are found by param_scan.c.
 * What is fixed per function in a context (the parameter layout, the hash
 * of the long mangled name, the words ruled out as pointers) is computed
 * once and cached: this runs on every launch of the program.
 */
#include "launch_info.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cbids.h"
#include "execid.h"
#include "grow.h"

const CUpti_CallbackId launch_cbids[] = {
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
};
const int launch_ncbids = sizeof launch_cbids / sizeof launch_cbids[0];

bool launch_is_kernel_cbid(CUpti_CallbackId cbid)
{
	return cbid_index(launch_cbids, (size_t)launch_ncbids, cbid) >= 0;
}

/* What is fixed for one function in one context: its parameter layout
 * (sizes and offsets in order), the execution-ID hash state after its name
 * and the words ruled out as pointers. A handle may name another function
 * once its module is unloaded, so an entry holds its name too: the pointer
 * the launches pass (compared first, cheaply) and a copy.
 *
 * The context is part of the key because the runtime launches one
 * context-independent CUkernel on every device: what its words held on
 * another GPU (memory no arena serves) must not rule them out, or leave
 * them unsteady, on the arena's. The replayer decodes no other context's
 * launch, so a shared entry would give the same launch one ID in the
 * recording and another in the replay. The context is the one current
 * at the launch (CUPTI's), which costs no driver call: a CUkernel the
 * driver API launches on a stream of another context than the current
 * one runs in the stream's, yet is keyed as the current one's, alike in
 * the recording and the replay. */
struct kernel_info {
	CUfunction f;
	CUcontext context;
	_Atomic(const char *) name_seen;
	char *name;
	uint64_t name_state;
	uint32_t nparams;
	struct { uint32_t offset, size; } *params;
	param_slots *slots;
	struct kernel_info *next;
};

/* Readers walk the buckets without the lock: entries are only ever added
 * (a reused handle gets a new one, in front of the old), each published
 * whole with a release store. */
#define INFO_BUCKETS 4096
static _Atomic(struct kernel_info *) infos[INFO_BUCKETS];
static pthread_mutex_t infos_lock = PTHREAD_MUTEX_INITIALIZER;

/* The entry of f in context named name: the newest for them, if its name
 * is that. */
static struct kernel_info *find_info(CUfunction f, CUcontext context, const char *name, size_t h)
{
	struct kernel_info *k = atomic_load_explicit(&infos[h], memory_order_acquire);
	while (k && (k->f != f || k->context != context))
		k = k->next;
	if (!k || atomic_load_explicit(&k->name_seen, memory_order_relaxed) == name)
		return k;
	if (strcmp(k->name, name) != 0)
		return NULL;
	atomic_store_explicit(&k->name_seen, name, memory_order_relaxed);
	return k;
}

static struct kernel_info *create_info(CUfunction f, CUcontext context, const char *name)
{
	struct kernel_info *k = calloc(1, sizeof *k);
	if (!k || !(k->name = strdup(name))) {
		free(k);
		return NULL;
	}
	size_t off, size, cap = 0;
	k->f = f;
	k->context = context;
	atomic_init(&k->name_seen, name);
	k->name_state = execid_name_state(name);
	/* The runtime may launch a CUkernel where a CUfunction is expected;
	 * ask with the other handle type if the first refuses. */
	for (uint32_t i = 0;; i++) {
		if (cuFuncGetParamInfo(f, i, &off, &size) != CUDA_SUCCESS &&
		    cuKernelGetParamInfo((CUkernel)f, i, &off, &size) != CUDA_SUCCESS)
			break;
		void *p = room_for_one(k->params, i, &cap, sizeof *k->params, 8);
		if (!p)
			break;
		k->params = p;
		k->params[i].offset = (uint32_t)off;
		k->params[i].size = (uint32_t)size;
		k->nparams = i + 1;
	}
	if (k->nparams)
		k->slots = param_slots_create(k->params[k->nparams - 1].offset +
					      k->params[k->nparams - 1].size);
	return k;
}

static const struct kernel_info *info_of(CUfunction f, CUcontext context, const char *name)
{
	size_t h = (((uintptr_t)f >> 4) ^ ((uintptr_t)context >> 4)) % INFO_BUCKETS;
	struct kernel_info *k = find_info(f, context, name, h);
	if (k)
		return k;
	pthread_mutex_lock(&infos_lock);
	k = find_info(f, context, name, h);
	if (!k && (k = create_info(f, context, name))) {
		k->next = atomic_load_explicit(&infos[h], memory_order_relaxed);
		atomic_store_explicit(&infos[h], k, memory_order_release);
	}
	pthread_mutex_unlock(&infos_lock);
	return k;
}

/* The packed form of the parameters: CU_LAUNCH_PARAM_BUFFER_POINTER and
 * _SIZE pairs in extra. The callback comes before the driver checks its
 * arguments: a size given through a NULL pointer is taken as none (the
 * buffer is then not scanned), not read through. (The driver itself
 * crashed on that launch, plain, on the H200 in session 79; only after
 * the callback, then.) */
static const unsigned char *packed_params(void **extra, size_t *len)
{
	const unsigned char *buf = NULL;
	*len = 0;
	for (int i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE && extra[i + 1])
			*len = *(size_t *)extra[i + 1];
	}
	return buf;
}

static void scan_params(struct launch_info *out, arena *a, struct addr_set *foreign,
			const struct kernel_info *k, void **params, void **extra)
{
	struct param_args found = { out->args, 0, PARAM_MAX_POINTERS, false };
	size_t len;
	const unsigned char *buf;
	if (params) {
		for (uint32_t i = 0; k && i < k->nparams; i++)
			param_scan(k->slots, a, foreign, k->params[i].offset, params[i], k->params[i].size,
				   &found);
	} else if ((buf = packed_params(extra, &len)) && k && k->nparams) {
		/* Each parameter at its offset in the buffer, as kernelParams
		 * give them: not the padding between them, which holds whatever
		 * the program's memory did (often half of an earlier pointer),
		 * nor past the layout, which is no parameter of the kernel (a
		 * size the program gave larger than its buffer would be read
		 * past the buffer's end), nor a parameter the size cuts. */
		for (uint32_t i = 0; i < k->nparams; i++)
			if (k->params[i].offset + (size_t)k->params[i].size <= len)
				param_scan(k->slots, a, foreign, k->params[i].offset, buf + k->params[i].offset,
					   k->params[i].size, &found);
	} else if (buf) {
		/* No layout known (the driver gave none): word by word, as the
		 * program sized the buffer, every word steady. */
		param_scan(NULL, a, NULL, 0, buf, len, &found);
	}
	out->nargs = found.n;
	out->args_truncated = found.truncated;
}

static void set_shape(struct launch_info *out, unsigned gx, unsigned gy, unsigned gz,
		      unsigned bx, unsigned by, unsigned bz, unsigned smem)
{
	out->grid[0] = gx, out->grid[1] = gy, out->grid[2] = gz;
	out->block[0] = bx, out->block[1] = by, out->block[2] = bz;
	out->shared_mem = smem;
}

bool launch_stream(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, CUstream *out)
{
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
		*out = ((const cuLaunchKernel_params *)cb->functionParams)->hStream;
		break;
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		/* The callback comes before the driver checks its arguments: a
		 * launch without its config is one the driver refuses. */
		const CUlaunchConfig *c = ((const cuLaunchKernelEx_params *)cb->functionParams)->config;
		if (!c)
			return false;
		*out = c->hStream;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
		*out = ((const cuLaunchCooperativeKernel_params *)cb->functionParams)->hStream;
		break;
	default:
		return false;
	}
	*out = named_stream(*out, cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
					  cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
					  cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz);
	return true;
}

/* Sets the launch's execution ID, which names it by its steady words only
 * (param_scan.h), and its shape ID. Hashed from out->args one at a time:
 * a copy of them as an execid_arg array would take 12 KiB of the
 * launching thread's stack. */
static void set_ids(struct launch_info *out, uint64_t name_state)
{
	struct execid_launch l = { out->name, name_state,
				   { out->grid[0], out->grid[1], out->grid[2] },
				   { out->block[0], out->block[1], out->block[2] },
				   out->shared_mem, NULL, 0 };
	uint64_t h = execid_begin(&l, &out->shape_id);
	for (uint32_t i = 0; i < out->nargs; i++) {
		const struct param_arg *a = &out->args[i];
		if (a->steady)
			h = execid_add_arg(h, &(struct execid_arg){ a->param_offset, a->alloc.size, a->offset });
	}
	out->exec_id = execid_end(h);
}

bool launch_decode(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, arena *a,
		   struct addr_set *foreign, struct launch_info *out)
{
	CUfunction f;
	void **params, **extra = NULL;

	if (!launch_stream(cbid, cb, &out->stream))
		return false;
	out->nargs = 0;
	out->args_truncated = false;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *p = cb->functionParams;
		set_shape(out, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
			  p->blockDimZ, p->sharedMemBytes);
		f = p->f, params = p->kernelParams, extra = p->extra;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *p = cb->functionParams;
		const CUlaunchConfig *c = p->config;
		set_shape(out, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
			  c->blockDimZ, c->sharedMemBytes);
		f = p->f, params = p->kernelParams, extra = p->extra;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *p = cb->functionParams;
		set_shape(out, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
			  p->blockDimZ, p->sharedMemBytes);
		f = p->f, params = p->kernelParams;
		break;
	}
	default:
		return false;
	}
	out->name = cb->symbolName ? cb->symbolName : "<unknown>";
	out->function = f;
	const struct kernel_info *k = info_of(f, cb->context, out->name);
	if (a)
		scan_params(out, a, foreign, k, params, extra);

	set_ids(out, k ? k->name_state : 0);
	return true;
}
