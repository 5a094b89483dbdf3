/*
 * launch_info.c: decode kernel launches (see launch_info.h).
 *
 * Every parameter's bytes are scanned in 8-byte words, so pointers inside
 * struct parameters count too (PyTorch passes its tensors' data pointers in
 * an array inside a struct). A parameter layout is asked of the driver once
 * per function and cached: cuFuncGetParamInfo costs more than the scan.
 */
#include "launch_info.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>


#include "execid.h"

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
	for (int i = 0; i < launch_ncbids; i++)
		if (launch_cbids[i] == cbid)
			return true;
	return false;
}

/* Parameter layout of one function: sizes and offsets in order. */
struct layout {
	CUfunction f;
	uint32_t nparams;
	struct { uint32_t offset, size; } *params;
	struct layout *next;
};

#define LAYOUT_BUCKETS 4096
static struct layout *layouts[LAYOUT_BUCKETS];
static pthread_mutex_t layouts_lock = PTHREAD_MUTEX_INITIALIZER;

static const struct layout *layout_of(CUfunction f)
{
	size_t h = ((uintptr_t)f >> 4) % LAYOUT_BUCKETS;
	pthread_mutex_lock(&layouts_lock);
	struct layout *l;
	for (l = layouts[h]; l && l->f != f; l = l->next)
		;
	if (!l && (l = calloc(1, sizeof *l))) {
		size_t off, size, cap = 0;
		l->f = f;
		/* The runtime may launch a CUkernel where a CUfunction is expected;
		 * ask with the other handle type if the first refuses. */
		for (uint32_t i = 0;; i++) {
			if (cuFuncGetParamInfo(f, i, &off, &size) != CUDA_SUCCESS &&
			    cuKernelGetParamInfo((CUkernel)f, i, &off, &size) != CUDA_SUCCESS)
				break;
			if (i == cap) {
				cap = cap ? 2 * cap : 8;
				void *p = realloc(l->params, cap * sizeof *l->params);
				if (!p)
					break;
				l->params = p;
			}
			l->params[i].offset = (uint32_t)off;
			l->params[i].size = (uint32_t)size;
			l->nparams = i + 1;
		}
		l->next = layouts[h];
		layouts[h] = l;
	}
	pthread_mutex_unlock(&layouts_lock);
	return l;
}

static void scan_word(struct launch_info *out, arena *a, uint32_t param_offset, uint64_t word)
{
	struct arena_alloc alloc;
	/* Cheap rejections first: most words are small integers or floats. */
	if (word < 4096 || !arena_lookup(a, word, &alloc))
		return;
	if (out->nargs == LAUNCH_MAX_ARGS) {
		out->args_truncated = true;
		return;
	}
	struct launch_arg *arg = &out->args[out->nargs++];
	arg->param_offset = param_offset;
	arg->alloc = alloc;
	arg->offset = word - alloc.address;
}

static void scan_bytes(struct launch_info *out, arena *a, uint32_t base, const unsigned char *p, size_t len)
{
	for (size_t o = 0; o + 8 <= len; o += 8) {
		uint64_t word;
		memcpy(&word, p + o, 8);
		scan_word(out, a, base + (uint32_t)o, word);
	}
}

static void scan_params(struct launch_info *out, arena *a, CUfunction f, void **params, void **extra)
{
	if (params) {
		const struct layout *l = layout_of(f);
		for (uint32_t i = 0; l && i < l->nparams; i++)
			scan_bytes(out, a, l->params[i].offset, params[i], l->params[i].size);
		return;
	}
	/* The packed form: CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE pairs. */
	const unsigned char *buf = NULL;
	size_t len = 0;
	for (int i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			buf = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			len = *(size_t *)extra[i + 1];
	}
	if (buf)
		scan_bytes(out, a, 0, buf, len);
}

static void set_shape(struct launch_info *out, unsigned gx, unsigned gy, unsigned gz,
		      unsigned bx, unsigned by, unsigned bz, unsigned smem, CUstream s)
{
	out->grid[0] = gx, out->grid[1] = gy, out->grid[2] = gz;
	out->block[0] = bx, out->block[1] = by, out->block[2] = bz;
	out->shared_mem = smem;
	out->stream = s;
}

bool launch_decode(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, arena *a,
		   struct launch_info *out)
{
	CUfunction f;
	void **params, **extra = NULL;

	out->nargs = 0;
	out->args_truncated = false;
	switch (cbid) {
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz: {
		const cuLaunchKernel_params *p = cb->functionParams;
		set_shape(out, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
			  p->blockDimZ, p->sharedMemBytes, p->hStream);
		f = p->f, params = p->kernelParams, extra = p->extra;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
		const cuLaunchKernelEx_params *p = cb->functionParams;
		const CUlaunchConfig *c = p->config;
		set_shape(out, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
			  c->blockDimZ, c->sharedMemBytes, c->hStream);
		f = p->f, params = p->kernelParams, extra = p->extra;
		break;
	}
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
	case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz: {
		const cuLaunchCooperativeKernel_params *p = cb->functionParams;
		set_shape(out, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX, p->blockDimY,
			  p->blockDimZ, p->sharedMemBytes, p->hStream);
		f = p->f, params = p->kernelParams;
		break;
	}
	default:
		return false;
	}
	/* A _ptsz launch on stream 0 goes to the thread's own default stream. */
	if (!out->stream && (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz ||
			     cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz ||
			     cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz))
		out->stream = CU_STREAM_PER_THREAD;
	out->name = cb->symbolName ? cb->symbolName : "<unknown>";
	if (a)
		scan_params(out, a, f, params, extra);

	struct execid_arg ids[LAUNCH_MAX_ARGS];
	for (uint32_t i = 0; i < out->nargs; i++) {
		ids[i].param_offset = out->args[i].param_offset;
		ids[i].alloc_size = out->args[i].alloc.size;
		ids[i].offset = out->args[i].offset;
	}
	struct execid_launch l = { out->name, { out->grid[0], out->grid[1], out->grid[2] },
				   { out->block[0], out->block[1], out->block[2] },
				   out->shared_mem, ids, out->nargs };
	out->exec_id = execid_of(&l);
	return true;
}
