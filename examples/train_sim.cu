/*
 * train_sim: a CUDA C program shaped like DNN training, for umkit's tests and
 * benchmarks.
 *
 * The model is a stack of fully connected layers (width x width weights plus
 * a bias, ReLU between layers, a linear last layer) trained with SGD and
 * momentum on a synthetic regression task (the target is half the input,
 * reversed; the loss is half the mean squared error). Memory behaves like a
 * framework's:
 *   - weights and biases: cudaMalloc'd once, live for the whole run;
 *   - momentum buffers: allocated lazily at the first optimizer step (as
 *     torch.optim.SGD does), then live for the whole run;
 *   - the input batch, the target and every layer's activation: allocated
 *     during the forward pass of each iteration and freed during its backward
 *     pass, last layer first (LIFO, as autograd frees saved tensors);
 *   - activation gradients: allocated and freed layer by layer in backward;
 *   - weight gradients: allocated in backward and freed after the optimizer
 *     step (zero_grad(set_to_none=True)); --keep-grads keeps them instead.
 * Only cudaMalloc/cudaFree are used: umkit turns them into managed memory.
 *
 * Kernels take pointers both as plain parameters (sgemm, relu_bwd, mse_loss,
 * sgd_update) and inside structs passed by value (make_batch, bias_act,
 * bias_grad and the multi-tensor sgd_foreach, whose struct holds arrays of
 * pointers like PyTorch's multi_tensor_apply).
 *
 * Everything is deterministic: a counter-based RNG, one thread per output
 * element or fixed-order reductions, no atomics. The checksum of the final
 * weights does not depend on --host-init, --nvtx, --keep-grads or
 * --per-layer-update.
 *
 * Build: nvcc -O2 -cudart shared -arch=sm_90 -o train_sim train_sim.cu
 * (shared cudart so that an LD_PRELOAD library can interpose cudaMalloc).
 */
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROG "train_sim"

/* Exit statuses. */
#define EXIT_CUDA 1  /* any CUDA error other than out of memory */
#define EXIT_OOM 2   /* cudaMalloc failed, or the run would not fit */
#define EXIT_USAGE 64

/* ------------------------------------------------------------------------ */
/* Options                                                                  */

struct Options {
    int layers;
    int width;
    int batch;
    int iters;
    uint64_t seed;
    float lr;
    float momentum;
    int host_init;
    int nvtx;
    int keep_grads;
    int per_layer_update;
    int no_mem_check;
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: " PROG " [options]\n"
        "A deep fully connected network trained with SGD on synthetic data, with\n"
        "framework-like memory behaviour (cudaMalloc/cudaFree only).\n"
        "\n"
        "  --layers N          number of layers (default 8)\n"
        "  --width W           features per layer; each weight is W x W floats (default 2048)\n"
        "  --batch B           samples per iteration; each activation is B x W floats (default 1024)\n"
        "  --iters I           training iterations (default 10)\n"
        "  --seed S            seed of weights and data (default 1)\n"
        "  --lr X              learning rate (default 0.1)\n"
        "  --momentum X        SGD momentum, 0 for none (no buffers) (default 0.9)\n"
        "  --host-init         initialise weights and biases with host writes, so that under\n"
        "                      umkit (managed memory) they start on the host and migrate on\n"
        "                      demand; without managed memory they are copied with cudaMemcpy\n"
        "  --nvtx              wrap each iteration in an NVTX range named \"iteration\"\n"
        "  --keep-grads        allocate weight gradients once and keep them (default: allocate\n"
        "                      in backward, free after the optimizer step)\n"
        "  --per-layer-update  one SGD kernel per tensor with plain pointer arguments (default:\n"
        "                      multi-tensor kernels taking a struct of pointer arrays)\n"
        "  --no-mem-check      skip the check that the run fits in free GPU memory\n"
        "  --help              this text\n"
        "\n"
        "Output (stdout): a 'config ...' line, then 'iter N loss X' per iteration\n"
        "(N from 0, X printed with %%.9g), 'peak_alloc_bytes N', 'time_per_iter_ms X'\n"
        "(mean over the iterations after the first; the first's alone with --iters 1,\n"
        "no line with --iters 0) and last 'checksum HEX' (FNV-1a 64 of the final\n"
        "weights and biases). Exit status: 0 ok, 1 CUDA error, 2 out of memory, 64 bad\n"
        "usage.\n");
}

static void die_usage(const char *msg, const char *arg)
{
    fprintf(stderr, PROG ": %s%s%s\n", msg, arg ? ": " : "", arg ? arg : "");
    fprintf(stderr, "try '" PROG " --help'\n");
    exit(EXIT_USAGE);
}

static long long parse_int(const char *name, const char *s, long long lo, long long hi)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, PROG ": %s wants an integer in [%lld, %lld], got '%s'\n", name, lo, hi, s);
        exit(EXIT_USAGE);
    }
    return v;
}

static float parse_float(const char *name, const char *s, double lo, double hi)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, PROG ": %s wants a number in [%g, %g], got '%s'\n", name, lo, hi, s);
        exit(EXIT_USAGE);
    }
    return (float)v;
}

static void parse_options(int argc, char **argv, Options *o)
{
    o->layers = 8;
    o->width = 2048;
    o->batch = 1024;
    o->iters = 10;
    o->seed = 1;
    o->lr = 0.1f;
    o->momentum = 0.9f;
    o->host_init = 0;
    o->nvtx = 0;
    o->keep_grads = 0;
    o->per_layer_update = 0;
    o->no_mem_check = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strncmp(a, "--", 2) != 0 && strcmp(a, "-h") != 0)
            die_usage("unexpected argument", a);
        /* Accept both "--name value" and "--name=value". */
        char name[64];
        const char *val = NULL;
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        if (len >= sizeof name)
            die_usage("unknown option", a);
        memcpy(name, a, len);
        name[len] = '\0';
        if (eq)
            val = eq + 1;

        int is_flag = 1;
        if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
            usage(stdout);
            exit(0);
        } else if (!strcmp(name, "--host-init")) {
            o->host_init = 1;
        } else if (!strcmp(name, "--nvtx")) {
            o->nvtx = 1;
        } else if (!strcmp(name, "--keep-grads")) {
            o->keep_grads = 1;
        } else if (!strcmp(name, "--per-layer-update")) {
            o->per_layer_update = 1;
        } else if (!strcmp(name, "--no-mem-check")) {
            o->no_mem_check = 1;
        } else {
            is_flag = 0;
        }
        if (is_flag) {
            if (val)
                die_usage("option takes no value", a);
            continue;
        }
        static const char *const valued[] = {"--layers", "--width", "--batch", "--iters",
                                             "--seed", "--lr", "--momentum"};
        int known = 0;
        for (size_t j = 0; j < sizeof valued / sizeof valued[0]; j++)
            known |= !strcmp(name, valued[j]);
        if (!known)
            die_usage("unknown option", a);
        if (!val) {
            if (i + 1 >= argc)
                die_usage("option needs a value", a);
            val = argv[++i];
        }
        if (!strcmp(name, "--layers"))
            o->layers = (int)parse_int(name, val, 1, 4096);
        else if (!strcmp(name, "--width"))
            o->width = (int)parse_int(name, val, 1, 65536);
        else if (!strcmp(name, "--batch"))
            o->batch = (int)parse_int(name, val, 1, 1 << 20);
        else if (!strcmp(name, "--iters"))
            o->iters = (int)parse_int(name, val, 0, 1000000000);
        else if (!strcmp(name, "--seed"))
            o->seed = (uint64_t)parse_int(name, val, 0, INT64_MAX);
        else if (!strcmp(name, "--lr"))
            o->lr = parse_float(name, val, 0.0, 1e6);
        else /* --momentum */
            o->momentum = parse_float(name, val, 0.0, 1.0);
    }
}

/* ------------------------------------------------------------------------ */
/* CUDA error handling and allocation accounting                            */

static void cuda_check(cudaError_t e, const char *what, const char *file, int line)
{
    if (e == cudaSuccess)
        return;
    if (e == cudaErrorMemoryAllocation) {
        fprintf(stderr, PROG ": out of memory: %s failed at %s:%d: %s\n", what, file, line,
                cudaGetErrorString(e));
        exit(EXIT_OOM);
    }
    fprintf(stderr, PROG ": CUDA error: %s failed at %s:%d: %s (%s)\n", what, file, line,
            cudaGetErrorName(e), cudaGetErrorString(e));
    exit(EXIT_CUDA);
}
#define CK(call) cuda_check((call), #call, __FILE__, __LINE__)
/* After every kernel launch: a bad launch configuration shows up here. */
#define LAUNCH_CHECK(name) cuda_check(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)

static size_t g_alloc_bytes;  /* bytes currently allocated through dev_alloc */
static size_t g_alloc_peak;   /* highest g_alloc_bytes seen */

static float *dev_alloc(size_t count, const char *what)
{
    size_t bytes = count * sizeof(float);
    void *p = NULL;
    cudaError_t e = cudaMalloc(&p, bytes);
    if (e == cudaErrorMemoryAllocation) {
        fprintf(stderr,
                PROG ": out of memory: cudaMalloc of %zu bytes for %s failed "
                "(%zu bytes already allocated by this program)\n",
                bytes, what, g_alloc_bytes);
        exit(EXIT_OOM);
    }
    cuda_check(e, "cudaMalloc", __FILE__, __LINE__);
    g_alloc_bytes += bytes;
    if (g_alloc_bytes > g_alloc_peak)
        g_alloc_peak = g_alloc_bytes;
    return (float *)p;
}

static void dev_free(float **p, size_t count)
{
    if (!*p)
        return;
    CK(cudaFree(*p));
    g_alloc_bytes -= count * sizeof(float);
    *p = NULL;
}

/* ------------------------------------------------------------------------ */
/* Deterministic random numbers, identical on host and device               */

__host__ __device__ static inline uint64_t mix64(uint64_t z)
{
    /* splitmix64 finaliser */
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Value i of stream `key`: uniform in [-2^23, 2^23) times k. The integer is
 * exact in a float and the product is one IEEE multiplication, so host and
 * device give the same bits. */
__host__ __device__ static inline float rand_val(uint64_t key, uint64_t i, float k)
{
    uint64_t h = mix64(key ^ mix64(i));
    int v = (int)(h >> 40) - (1 << 23);
    return (float)v * k;
}

/* k for values uniform in [-bound, bound). */
static float rand_scale(double bound) { return (float)(bound / 8388608.0); }

enum { KEY_WEIGHT = 1, KEY_BIAS = 2, KEY_BATCH = 3 };

static uint64_t stream_key(uint64_t seed, int kind, uint64_t index)
{
    return mix64(mix64(seed) ^ mix64(((uint64_t)kind << 56) ^ index));
}

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */

static unsigned grid_for(size_t n, unsigned block)
{
    size_t g = (n + block - 1) / block;
    if (g > 4096)
        g = 4096; /* grid-stride loops cover the rest */
    return g ? (unsigned)g : 1u;
}

__global__ void init_uniform(float *p, size_t n, uint64_t key, float k)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        p[i] = rand_val(key, i, k);
}

/* Input batch x (rows x cols, uniform in [-1, 1)) and target t: half the
 * input, reversed along the features. Both come from the same RNG stream, so
 * no thread reads what another writes. */
struct BatchArgs {
    float *x;
    float *t;
    int rows;
    int cols;
    uint64_t key;
    float k;
};

__global__ void make_batch(BatchArgs a)
{
    size_t n = (size_t)a.rows * a.cols;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        size_t r = i / a.cols;
        int c = (int)(i % a.cols);
        a.x[i] = rand_val(a.key, i, a.k);
        a.t[i] = 0.5f * rand_val(a.key, r * a.cols + (a.cols - 1 - c), a.k);
    }
}

/* C (M x N, row-major, leading dimension ldc) = op(A) * op(B), op(A) M x K,
 * op(B) K x N. Not transposed: A is M x K row-major (A[i*lda + k]) and B is
 * K x N (B[k*ldb + j]); transposed: A is stored K x M (A[k*lda + i]) and B is
 * stored N x K (B[j*ldb + k]). 64 x 64 output tile per block of 256 threads,
 * each thread computing 4 x 4 outputs; every output's sum runs over k in
 * order, so results are deterministic. */
#define TILE_M 64
#define TILE_N 64
#define TILE_K 16
#define SGEMM_THREADS 256

template <bool TA, bool TB>
__global__ void __launch_bounds__(SGEMM_THREADS)
sgemm(int M, int N, int K, const float *__restrict__ A, int lda, const float *__restrict__ B,
      int ldb, float *__restrict__ C, int ldc)
{
    __shared__ float As[TILE_K][TILE_M + 4];
    __shared__ float Bs[TILE_K][TILE_N + 4];
    const int tid = threadIdx.x;
    const int tx = tid % 16, ty = tid / 16;
    const int m0 = blockIdx.y * TILE_M, n0 = blockIdx.x * TILE_N;
    float acc[4][4];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += TILE_K) {
        /* Each tile holds 16 x 64 = 1024 values: 4 per thread, read along
         * the dimension that is contiguous in memory. */
        for (int r = 0; r < 4; r++) {
            int e = tid + r * SGEMM_THREADS;
            int mm, kk;
            if (TA) { mm = e % TILE_M; kk = e / TILE_M; }
            else    { kk = e % TILE_K; mm = e / TILE_K; }
            int gm = m0 + mm, gk = k0 + kk;
            float v = 0.0f;
            if (gm < M && gk < K)
                v = TA ? A[(size_t)gk * lda + gm] : A[(size_t)gm * lda + gk];
            As[kk][mm] = v;

            int nn;
            if (TB) { kk = e % TILE_K; nn = e / TILE_K; }
            else    { nn = e % TILE_N; kk = e / TILE_N; }
            int gn = n0 + nn;
            gk = k0 + kk;
            v = 0.0f;
            if (gn < N && gk < K)
                v = TB ? B[(size_t)gn * ldb + gk] : B[(size_t)gk * ldb + gn];
            Bs[kk][nn] = v;
        }
        __syncthreads();
        for (int kk = 0; kk < TILE_K; kk++) {
            float a[4], b[4];
            for (int i = 0; i < 4; i++)
                a[i] = As[kk][ty + 16 * i];
            for (int j = 0; j < 4; j++)
                b[j] = Bs[kk][tx + 16 * j];
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                    acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
    for (int i = 0; i < 4; i++) {
        int gm = m0 + ty + 16 * i;
        if (gm >= M)
            continue;
        for (int j = 0; j < 4; j++) {
            int gn = n0 + tx + 16 * j;
            if (gn < N)
                C[(size_t)gm * ldc + gn] = acc[i][j];
        }
    }
}

static void launch_sgemm(bool ta, bool tb, int M, int N, int K, const float *A, int lda,
                         const float *B, int ldb, float *C, int ldc)
{
    dim3 grid((N + TILE_N - 1) / TILE_N, (M + TILE_M - 1) / TILE_M);
    dim3 block(SGEMM_THREADS);
    if (!ta && tb)
        sgemm<false, true><<<grid, block>>>(M, N, K, A, lda, B, ldb, C, ldc);
    else if (ta && !tb)
        sgemm<true, false><<<grid, block>>>(M, N, K, A, lda, B, ldb, C, ldc);
    else if (!ta && !tb)
        sgemm<false, false><<<grid, block>>>(M, N, K, A, lda, B, ldb, C, ldc);
    else
        sgemm<true, true><<<grid, block>>>(M, N, K, A, lda, B, ldb, C, ldc);
    LAUNCH_CHECK("sgemm");
}

/* y = act(y + bias) in place, bias broadcast over rows. */
struct BiasActArgs {
    int rows;
    int cols;
    const float *bias;
    float *y;
    int relu;
};

__global__ void bias_act(BiasActArgs a)
{
    size_t n = (size_t)a.rows * a.cols;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = a.y[i] + a.bias[i % a.cols];
        a.y[i] = (a.relu && v < 0.0f) ? 0.0f : v;
    }
}

/* Loss 0.5 * mean((y - t)^2) over all rows x cols outputs (inv_n = 1 / (rows
 * * cols)). One block of LOSS_THREADS per row: writes dy = (y - t) * inv_n and
 * row_loss[r] = 0.5 * sum over the row; sum_scaled then adds the rows up. */
#define LOSS_THREADS 256

__global__ void mse_loss(const float *y, const float *t, float *dy, float *row_loss, int rows,
                         int cols, float inv_n)
{
    __shared__ float part[LOSS_THREADS];
    if ((int)blockIdx.x >= rows)
        return; /* the whole block: no __syncthreads is skipped by part of it */
    size_t base = (size_t)blockIdx.x * cols;
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += LOSS_THREADS) {
        float d = y[base + c] - t[base + c];
        dy[base + c] = d * inv_n;
        s = fmaf(d, d, s);
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = LOSS_THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        row_loss[blockIdx.x] = 0.5f * part[0];
}

/* out[0] = scale * sum(v[0..n)), one block, fixed order. */
__global__ void sum_scaled(const float *v, int n, float scale, float *out)
{
    __shared__ float part[LOSS_THREADS];
    float s = 0.0f;
    for (int i = threadIdx.x; i < n; i += LOSS_THREADS)
        s += v[i];
    part[threadIdx.x] = s;
    __syncthreads();
    for (int w = LOSS_THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[0] = part[0] * scale;
}

/* dz = dy * (y > 0), in place: y is the layer's saved ReLU output. */
__global__ void relu_bwd(float *dy, const float *y, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        if (!(y[i] > 0.0f))
            dy[i] = 0.0f;
}

/* gb[c] = sum over rows of dz[r][c], one thread per column, rows in order. */
struct BiasGradArgs {
    const float *dz;
    float *gb;
    int rows;
    int cols;
};

__global__ void bias_grad(BiasGradArgs a)
{
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= a.cols)
        return;
    float s = 0.0f;
    for (int r = 0; r < a.rows; r++)
        s += a.dz[(size_t)r * a.cols + c];
    a.gb[c] = s;
}

/* SGD with momentum, as torch.optim.SGD (dampening 0, no weight decay):
 * first step buf = g, later buf = momentum * buf + g; p -= lr * buf.
 * Explicit fmaf so both update kernels give the same bits. */
__device__ static inline void sgd_elem(float *p, const float *g, float *m, size_t i, float lr,
                                       float momentum, int first)
{
    float d = g[i];
    if (m) {
        d = first ? d : fmaf(momentum, m[i], d);
        m[i] = d;
    }
    p[i] = fmaf(-lr, d, p[i]);
}

__global__ void sgd_update(float *p, const float *g, float *m, size_t n, float lr,
                           float momentum, int first)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        sgd_elem(p, g, m, i, lr, momentum, first);
}

/* Multi-tensor SGD: one launch updates up to SGD_MAX_TENSORS tensors whose
 * pointers travel in the struct parameter; blockIdx.y picks the tensor. */
#define SGD_MAX_TENSORS 32

struct SgdList {
    float *param[SGD_MAX_TENSORS];
    const float *grad[SGD_MAX_TENSORS];
    float *mom[SGD_MAX_TENSORS];
    size_t numel[SGD_MAX_TENSORS];
    int count;
    float lr;
    float momentum;
    int first;
};

__global__ void sgd_foreach(SgdList a)
{
    int t = blockIdx.y;
    if (t >= a.count)
        return;
    size_t n = a.numel[t];
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        sgd_elem(a.param[t], a.grad[t], a.mom[t], i, a.lr, a.momentum, a.first);
}

/* ------------------------------------------------------------------------ */
/* Host side                                                                */

struct Layer {
    float *w, *b;    /* parameters: out x in, out */
    float *gw, *gb;  /* gradients */
    float *mw, *mb;  /* momentum buffers */
    float *act;      /* this iteration's output (saved for backward) */
};

struct Model {
    Options o;
    int L, W, B;
    size_t wn, bn, an; /* floats in a weight, a bias, an activation */
    Layer *layer;
    float *loss;       /* 1 float, persistent */
    int steps_done;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Fill n floats of stream key. With --host-init the host writes them: into
 * the memory itself when it is managed (under umkit), so that the pages start
 * on the host; through a staging buffer and cudaMemcpy otherwise. Same values
 * either way. */
static void init_param(const Model *m, float *d, size_t n, uint64_t key, float k)
{
    if (!m->o.host_init) {
        init_uniform<<<grid_for(n, 256), 256>>>(d, n, key, k);
        LAUNCH_CHECK("init_uniform");
        return;
    }
    cudaPointerAttributes attr;
    CK(cudaPointerGetAttributes(&attr, d));
    if (attr.type == cudaMemoryTypeManaged) {
        CK(cudaDeviceSynchronize()); /* nothing may still be using it */
        for (size_t i = 0; i < n; i++)
            d[i] = rand_val(key, i, k);
        return;
    }
    static int noted;
    if (!noted) {
        fprintf(stderr, PROG ": --host-init: memory is not managed (not running under umkit); "
                        "initialising on the host and copying with cudaMemcpy\n");
        noted = 1;
    }
    const size_t chunk = (size_t)16 << 20; /* floats */
    size_t cn = n < chunk ? n : chunk;
    float *h = (float *)malloc(cn * sizeof(float));
    if (!h) {
        fprintf(stderr, PROG ": out of host memory\n");
        exit(EXIT_OOM);
    }
    for (size_t off = 0; off < n; off += cn) {
        size_t c = n - off < cn ? n - off : cn;
        for (size_t i = 0; i < c; i++)
            h[i] = rand_val(key, off + i, k);
        CK(cudaMemcpy(d + off, h, c * sizeof(float), cudaMemcpyHostToDevice));
    }
    free(h);
}

static void model_init(Model *m, const Options *o)
{
    memset(m, 0, sizeof *m);
    m->o = *o;
    m->L = o->layers;
    m->W = o->width;
    m->B = o->batch;
    m->wn = (size_t)m->W * m->W;
    m->bn = (size_t)m->W;
    m->an = (size_t)m->B * m->W;
    m->layer = (Layer *)calloc(m->L, sizeof(Layer));
    if (!m->layer) {
        fprintf(stderr, PROG ": out of host memory\n");
        exit(EXIT_OOM);
    }
    /* As torch.nn.Linear: weights uniform in +-sqrt(6 / fan_in) (He, for
     * ReLU), biases uniform in +-1/sqrt(fan_in). */
    float kw = rand_scale(sqrt(6.0 / m->W));
    float kb = rand_scale(1.0 / sqrt((double)m->W));
    for (int l = 0; l < m->L; l++) {
        Layer *ly = &m->layer[l];
        ly->w = dev_alloc(m->wn, "a weight");
        ly->b = dev_alloc(m->bn, "a bias");
        init_param(m, ly->w, m->wn, stream_key(o->seed, KEY_WEIGHT, l), kw);
        init_param(m, ly->b, m->bn, stream_key(o->seed, KEY_BIAS, l), kb);
    }
    m->loss = dev_alloc(1, "the loss");
}

static void alloc_grads(Model *m, Layer *ly)
{
    if (!ly->gw) {
        ly->gw = dev_alloc(m->wn, "a weight gradient");
        ly->gb = dev_alloc(m->bn, "a bias gradient");
    }
}

static void optimizer_step(Model *m)
{
    const Options *o = &m->o;
    int first = m->steps_done == 0;
    if (o->momentum != 0.0f && first) {
        /* Lazily, as torch.optim.SGD creates its momentum buffers. */
        for (int l = 0; l < m->L; l++) {
            m->layer[l].mw = dev_alloc(m->wn, "a momentum buffer");
            m->layer[l].mb = dev_alloc(m->bn, "a momentum buffer");
        }
    }
    if (o->per_layer_update) {
        for (int l = 0; l < m->L; l++) {
            Layer *ly = &m->layer[l];
            sgd_update<<<grid_for(m->wn, 256), 256>>>(ly->w, ly->gw, ly->mw, m->wn, o->lr,
                                                      o->momentum, first);
            LAUNCH_CHECK("sgd_update");
            sgd_update<<<grid_for(m->bn, 256), 256>>>(ly->b, ly->gb, ly->mb, m->bn, o->lr,
                                                      o->momentum, first);
            LAUNCH_CHECK("sgd_update");
        }
    } else {
        /* Tensors in parameter order (w0, b0, w1, b1, ...), in launches of
         * up to SGD_MAX_TENSORS. */
        int total = 2 * m->L;
        for (int t0 = 0; t0 < total; t0 += SGD_MAX_TENSORS) {
            SgdList a;
            memset(&a, 0, sizeof a);
            a.lr = o->lr;
            a.momentum = o->momentum;
            a.first = first;
            size_t most = 0;
            for (int t = t0; t < total && a.count < SGD_MAX_TENSORS; t++) {
                Layer *ly = &m->layer[t / 2];
                int i = a.count++;
                int is_w = t % 2 == 0;
                a.param[i] = is_w ? ly->w : ly->b;
                a.grad[i] = is_w ? ly->gw : ly->gb;
                a.mom[i] = is_w ? ly->mw : ly->mb;
                a.numel[i] = is_w ? m->wn : m->bn;
                if (a.numel[i] > most)
                    most = a.numel[i];
            }
            unsigned gx = grid_for(most, 256);
            if (gx > 512)
                gx = 512;
            sgd_foreach<<<dim3(gx, a.count), 256>>>(a);
            LAUNCH_CHECK("sgd_foreach");
        }
    }
    m->steps_done++;
}

/* One training iteration; returns the loss. */
static float train_step(Model *m, int iter)
{
    const int L = m->L, W = m->W, B = m->B;
    const size_t an = m->an;

    /* The batch, as a framework copies it to the GPU each step. */
    float *x = dev_alloc(an, "the input batch");
    float *t = dev_alloc(an, "the target batch");
    BatchArgs ba;
    ba.x = x;
    ba.t = t;
    ba.rows = B;
    ba.cols = W;
    ba.key = stream_key(m->o.seed, KEY_BATCH, (uint64_t)iter);
    ba.k = rand_scale(1.0);
    make_batch<<<grid_for(an, 256), 256>>>(ba);
    LAUNCH_CHECK("make_batch");

    /* Forward: act_l = relu(act_{l-1} W_l^T + b_l), the last layer linear. */
    const float *in = x;
    for (int l = 0; l < L; l++) {
        Layer *ly = &m->layer[l];
        ly->act = dev_alloc(an, "an activation");
        launch_sgemm(false, true, B, W, W, in, W, ly->w, W, ly->act, W);
        BiasActArgs aa;
        aa.rows = B;
        aa.cols = W;
        aa.bias = ly->b;
        aa.y = ly->act;
        aa.relu = l < L - 1;
        bias_act<<<grid_for(an, 256), 256>>>(aa);
        LAUNCH_CHECK("bias_act");
        in = ly->act;
    }

    /* Loss and its gradient. */
    float *dy = dev_alloc(an, "an activation gradient");
    float *row_loss = dev_alloc((size_t)B, "the per-sample losses");
    const float inv_n = (float)(1.0 / ((double)B * W)); /* mean over all outputs */
    mse_loss<<<B, LOSS_THREADS>>>(m->layer[L - 1].act, t, dy, row_loss, B, W, inv_n);
    LAUNCH_CHECK("mse_loss");
    sum_scaled<<<1, LOSS_THREADS>>>(row_loss, B, inv_n, m->loss);
    LAUNCH_CHECK("sum_scaled");
    dev_free(&row_loss, (size_t)B);
    dev_free(&t, an);

    /* Backward, last layer first; each saved activation is freed once the
     * layer above no longer needs it. */
    for (int l = L - 1; l >= 0; l--) {
        Layer *ly = &m->layer[l];
        const float *prev = l > 0 ? m->layer[l - 1].act : x;
        if (l < L - 1) {
            relu_bwd<<<grid_for(an, 256), 256>>>(dy, ly->act, an);
            LAUNCH_CHECK("relu_bwd");
        }
        alloc_grads(m, ly);
        /* gW = dz^T prev (W x W), gb = column sums of dz. */
        launch_sgemm(true, false, W, W, B, dy, W, prev, W, ly->gw, W);
        BiasGradArgs ga;
        ga.dz = dy;
        ga.gb = ly->gb;
        ga.rows = B;
        ga.cols = W;
        bias_grad<<<(W + 255) / 256, 256>>>(ga);
        LAUNCH_CHECK("bias_grad");
        float *dprev = NULL;
        if (l > 0) {
            /* d prev = dz W (B x W). */
            dprev = dev_alloc(an, "an activation gradient");
            launch_sgemm(false, false, B, W, W, dy, W, ly->w, W, dprev, W);
        }
        dev_free(&dy, an);
        dev_free(&ly->act, an);
        dy = dprev;
    }
    dev_free(&x, an);

    optimizer_step(m);
    if (!m->o.keep_grads) {
        /* zero_grad(set_to_none=True) */
        for (int l = 0; l < L; l++) {
            dev_free(&m->layer[l].gw, m->wn);
            dev_free(&m->layer[l].gb, m->bn);
        }
    }

    float loss;
    CK(cudaMemcpy(&loss, m->loss, sizeof loss, cudaMemcpyDeviceToHost));
    return loss;
}

/* FNV-1a 64 of all weights and biases, layer by layer. */
static uint64_t weights_checksum(const Model *m)
{
    const size_t chunk = (size_t)16 << 20; /* floats */
    size_t cn = m->wn < chunk ? m->wn : chunk;
    float *h = (float *)malloc(cn * sizeof(float));
    if (!h) {
        fprintf(stderr, PROG ": out of host memory\n");
        exit(EXIT_OOM);
    }
    uint64_t hash = 0xcbf29ce484222325ull;
    for (int l = 0; l < m->L; l++) {
        const float *bufs[2] = {m->layer[l].w, m->layer[l].b};
        size_t lens[2] = {m->wn, m->bn};
        for (int j = 0; j < 2; j++) {
            for (size_t off = 0; off < lens[j]; off += cn) {
                size_t c = lens[j] - off < cn ? lens[j] - off : cn;
                CK(cudaMemcpy(h, bufs[j] + off, c * sizeof(float), cudaMemcpyDeviceToHost));
                const unsigned char *p = (const unsigned char *)h;
                for (size_t i = 0; i < c * sizeof(float); i++) {
                    hash ^= p[i];
                    hash *= 0x100000001b3ull;
                }
            }
        }
    }
    free(h);
    return hash;
}

static void model_free(Model *m)
{
    for (int l = m->L - 1; l >= 0; l--) {
        Layer *ly = &m->layer[l];
        dev_free(&ly->mb, m->bn);
        dev_free(&ly->mw, m->wn);
        dev_free(&ly->gb, m->bn);
        dev_free(&ly->gw, m->wn);
    }
    for (int l = m->L - 1; l >= 0; l--) {
        dev_free(&m->layer[l].b, m->bn);
        dev_free(&m->layer[l].w, m->wn);
    }
    dev_free(&m->loss, 1);
    free(m->layer);
    m->layer = NULL;
}

/* An upper bound of the bytes this run allocates at once: parameters,
 * gradients and momentum all live, plus every activation-sized buffer. */
static size_t estimate_peak_bytes(const Options *o)
{
    size_t W = (size_t)o->width, B = (size_t)o->batch, L = (size_t)o->layers;
    size_t params = L * (W * W + W);
    size_t copies = o->momentum != 0.0f ? 3 : 2;
    size_t acts = (L + 3) * B * W + B;
    return (params * copies + acts + 1) * sizeof(float);
}

int main(int argc, char **argv)
{
    Options o;
    parse_options(argc, argv, &o);
    setvbuf(stdout, NULL, _IOLBF, 0);

    int ndev = 0;
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0) {
        fprintf(stderr, PROG ": no usable CUDA device: %s\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "no devices");
        return EXIT_CUDA;
    }

    size_t est = estimate_peak_bytes(&o);
    printf("config layers=%d width=%d batch=%d iters=%d seed=%llu lr=%.9g momentum=%.9g "
           "host_init=%d nvtx=%d keep_grads=%d per_layer_update=%d est_peak_bytes=%zu\n",
           o.layers, o.width, o.batch, o.iters, (unsigned long long)o.seed, o.lr, o.momentum,
           o.host_init, o.nvtx, o.keep_grads, o.per_layer_update, est);

    if (!o.no_mem_check) {
        /* Under umkit every cudaMalloc is managed memory, which the driver
         * lets exceed the GPU: refuse up front rather than oversubscribe a
         * GPU by accident. Allow 2 MiB of alignment per buffer. */
        size_t free_b = 0, total_b = 0;
        CK(cudaMemGetInfo(&free_b, &total_b));
        size_t buffers = (size_t)o.layers * 6 + 8;
        size_t need = est + buffers * ((size_t)2 << 20);
        if (need > free_b) {
            fprintf(stderr,
                    PROG ": out of memory: this run needs about %zu bytes of GPU memory and "
                         "%zu are free; use smaller --layers/--width/--batch (or "
                         "--no-mem-check)\n",
                    need, free_b);
            return EXIT_OOM;
        }
    }

    Model m;
    model_init(&m, &o);

    double t_first = 0.0, t_rest = 0.0;
    for (int it = 0; it < o.iters; it++) {
        if (o.nvtx)
            nvtxRangePushA("iteration");
        double t0 = now_s();
        float loss = train_step(&m, it);
        double dt = now_s() - t0;
        if (o.nvtx)
            nvtxRangePop();
        if (it == 0)
            t_first = dt;
        else
            t_rest += dt;
        printf("iter %d loss %.9g\n", it, loss);
        if (!isfinite(loss)) {
            fprintf(stderr, PROG ": loss is not finite at iteration %d (lower --lr)\n", it);
        }
    }
    CK(cudaDeviceSynchronize());
    uint64_t sum = weights_checksum(&m);
    size_t peak = g_alloc_peak;
    model_free(&m);

    printf("peak_alloc_bytes %zu\n", peak);
    if (o.iters > 0)
        printf("time_per_iter_ms %.3f\n",
               1e3 * (o.iters > 1 ? t_rest / (o.iters - 1) : t_first));
    printf("checksum %016llx\n", (unsigned long long)sum);
    return 0;
}
