// sim.h: what the simulated device needs to build the kernels' CUDA source
// for the host with g++ -std=c++20 (graph/cuda, Sim): a module's kernels in
// a library of its own with SIM_LAUNCH, and the device's memory and products
// (sim_alloc, sim_gemm) in one without kernels.
//
// A kernel that declares __shared__ memory runs each block of the grid in
// turn with every thread of the block as a fiber of its own (ucontext), all
// on the launching thread: each runs until it reaches __syncthreads or
// ends, and when every fiber has, the next round starts, so that
// __syncthreads is a barrier; a block starts when the one before it has
// ended, so a __shared__ array (a static of the kernel function) belongs to
// one block at a time. A kernel without __shared__ memory shares nothing
// between threads but by atomics, and runs as plain loops over the blocks
// and threads. Launches are one at a time (the Go side holds a lock), like
// a single CUDA stream.
#include <math.h>
#include <string.h>

#include <setjmp.h>
#include <ucontext.h>

#include <atomic>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#define __global__
#define __device__
#define __shared__ static

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x = 1, y = 1, z = 1;
};

static uint3 threadIdx, blockIdx;
static dim3 blockDim, gridDim;
static bool sim_bad_sync;  // __syncthreads in a kernel run as loops

namespace sim {
// fiber is one thread of a block run as a fiber: started once (ucontext)
// and kept from launch to launch, it then switches with the scheduler by
// _setjmp and _longjmp, which save no signal mask and so make no system
// call. started says it has been entered; done that it has run the body
// for the block.
struct fiber {
    ucontext_t ctx;
    jmp_buf env;
    std::unique_ptr<char[]> stack;
    bool started, done;
};
// fiberStack is each fiber's stack: the kernels' locals are a few scalars.
constexpr size_t fiberStack = 64 << 10;
static jmp_buf scheduler;          // the launching thread, between rounds
static std::vector<std::unique_ptr<fiber>> fibers;  // the block's threads, kept from launch to launch
static fiber* running;             // the fiber running, or null: loops
static const std::function<void()>* fiberBody;

// yield goes back to the scheduler, to be resumed where it left.
static void yield() {
    if (!_setjmp(running->env)) _longjmp(scheduler, 1);
}
}  // namespace sim

static void __syncthreads() {
    if (sim::running) {
        sim::yield();
    } else {
        sim_bad_sync = true;
    }
}
static unsigned __float_as_uint(float f) {
    unsigned u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static float __uint_as_float(unsigned u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
    return (unsigned long long)((unsigned __int128)a * b >> 64);
}
static float atomicAdd(float* p, float v) { return std::atomic_ref<float>(*p).fetch_add(v); }

namespace sim {

// loops calls body once for every thread of every block of grid, in turn.
static void loops(dim3 grid, dim3 block, const std::function<void()>& body) {
    blockDim = block;
    gridDim = grid;
    running = nullptr;
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++)
                for (unsigned t = 0; t < block.x * block.y * block.z; t++) {
                    blockIdx = {x, y, z};
                    threadIdx = {t % block.x, t / block.x % block.y, t / (block.x * block.y)};
                    body();
                }
}

// fiberMain runs the body for every block the scheduler resumes the fiber
// in; it never returns.
static void fiberMain() {
    for (;;) {
        (*fiberBody)();
        running->done = true;
        yield();
    }
}

// resume runs fiber f until it yields: at a barrier, or when it has run the
// body for the block.
static void resume(fiber& f) {
    running = &f;
    if (_setjmp(scheduler)) return;
    if (f.started) _longjmp(f.env, 1);
    f.started = true;
    ucontext_t from;
    swapcontext(&from, &f.ctx);  // never resumed: the fiber comes back by _longjmp
}

// threads calls body once for every thread of every block of grid, the
// threads of a block as fibers taking turns, a round from one barrier
// (__syncthreads) to the next.
static void threads(dim3 grid, dim3 block, const std::function<void()>& body) {
    unsigned nt = block.x * block.y * block.z;
    blockDim = block;
    gridDim = grid;
    fiberBody = &body;
    while (fibers.size() < nt) {
        fibers.push_back(std::make_unique<fiber>());
        fiber& f = *fibers.back();
        f.stack = std::make_unique<char[]>(fiberStack);
        getcontext(&f.ctx);
        f.ctx.uc_stack.ss_sp = f.stack.get();
        f.ctx.uc_stack.ss_size = fiberStack;
        f.ctx.uc_link = nullptr;
        makecontext(&f.ctx, fiberMain, 0);
    }
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                blockIdx = {x, y, z};
                for (unsigned t = 0; t < nt; t++) fibers[t]->done = false;
                for (bool left = true; left;) {
                    left = false;
                    for (unsigned t = 0; t < nt; t++) {
                        if (fibers[t]->done) continue;
                        threadIdx = {t % block.x, t / block.x % block.y, t / (block.x * block.y)};
                        resume(*fibers[t]);
                        left = left || !fibers[t]->done;
                    }
                }
            }
    running = nullptr;
}

// call calls f with its arguments read from args as cuLaunchKernel does:
// args[i] points at the i-th argument's value.
template <typename... A, size_t... I>
static void call(void (*f)(A...), void** args, std::index_sequence<I...>) {
    f(*static_cast<std::remove_cv_t<A>*>(args[I])...);
}

template <typename... A>
static void launch(void (*f)(A...), bool shared, dim3 grid, dim3 block, void** args) {
    auto body = [&] { call(f, args, std::index_sequence_for<A...>{}); };
    if (shared) {
        threads(grid, block, body);
    } else {
        loops(grid, block, body);
    }
}

struct Kernel {
    void (*launch)(dim3, dim3, void**);
};

}  // namespace sim

// SIM_KERNEL is an entry of a module's table of kernels, in the file that
// includes the module's source after this header, in the order of the
// module's kernels (the Go side launches by that index); shared says that
// f declares __shared__ memory.
#define SIM_KERNEL(f, shared) {[](dim3 g, dim3 b, void** a) { sim::launch(f, shared, g, b, a); }},

// SIM_LAUNCH defines the launch of a kernel by its index in the module's
// table sim_kernels.
#define SIM_LAUNCH                                                                                  \
    extern "C" int sim_launch(int index, unsigned gx, unsigned gy, unsigned gz, unsigned bx,        \
                              unsigned by, unsigned bz, void** args) {                              \
        if (index < 0 || index >= (int)(sizeof sim_kernels / sizeof sim_kernels[0])) return 1;      \
        sim_bad_sync = false;                                                                       \
        try {                                                                                       \
            sim_kernels[index].launch(dim3{gx, gy, gz}, dim3{bx, by, bz}, args);                    \
        } catch (...) {                                                                             \
            return 2;                                                                               \
        }                                                                                           \
        return sim_bad_sync ? 3 : 0;                                                                \
    }

// sim_alloc is the device's memory: host memory aligned to 256 bytes, of n
// bytes rounded up to a multiple of 256, filled with NaN bytes so that
// reading memory never written shows.
extern "C" void* sim_alloc(size_t n) {
    void* p = aligned_alloc(256, (n + 255) / 256 * 256);
    if (p) memset(p, 0xff, n);
    return p;
}
extern "C" void sim_free(void* p) { free(p); }
extern "C" void sim_copy(void* dst, const void* src, size_t n) { memcpy(dst, src, n); }

// sim_elem is element i of a float32 or bfloat16 matrix.
static float sim_elem(const void* m, long long i, int bf16) {
    if (bf16) return __uint_as_float((unsigned)static_cast<const unsigned short*>(m)[i] << 16);
    return static_cast<const float*>(m)[i];
}

// sim_product is C = alpha·op(A)·op(B) + beta·C, row-major, summed in
// float32 (C is not read when beta is 0).
static void sim_product(int ta, int tb, int m, int n, int k, float alpha, const void* a, int lda, const void* b, int ldb,
                        float beta, float* c, int ldc, int bf16) {
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0;
            for (int p = 0; p < k; p++) {
                long long ia = ta ? (long long)p * lda + i : (long long)i * lda + p;
                long long ib = tb ? (long long)j * ldb + p : (long long)p * ldb + j;
                acc += sim_elem(a, ia, bf16) * sim_elem(b, ib, bf16);
            }
            float* cij = c + (long long)i * ldc + j;
            *cij = beta == 0 ? alpha * acc : alpha * acc + beta * *cij;
        }
}

// sim_gemm is graph.DeviceGEMM of one level: batch products, A, B and C
// moved on by sa, sb and sc elements from one to the next.
extern "C" void sim_gemm(int ta, int tb, int m, int n, int k, float alpha, const void* a, int lda, const void* b,
                         int ldb, float beta, float* c, int ldc, int bf16, int batch, long long sa, long long sb,
                         long long sc) {
    int size = bf16 ? 2 : 4;
    for (int q = 0; q < batch; q++)
        sim_product(ta, tb, m, n, k, alpha, (const char*)a + q * sa * size, lda, (const char*)b + q * sb * size, ldb,
                    beta, c + q * sc, ldc, bf16);
}

// sim_gemm_table is graph.DeviceGEMM from its table of count addresses of
// A, then of B, then of C.
extern "C" void sim_gemm_table(int ta, int tb, int m, int n, int k, float alpha, const void* const* table, int lda,
                               int ldb, float beta, int ldc, int bf16, int count) {
    for (int q = 0; q < count; q++)
        sim_product(ta, tb, m, n, k, alpha, table[q], lda, table[count + q], ldb, beta, (float*)table[2 * count + q], ldc,
                    bf16);
}
