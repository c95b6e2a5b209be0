// larfb's FP32 products W = V^T C and C -= V Y on the TF32 tensor cores, 3xTF32
// (src/cuda/larfb_tf32.hpp), by CUTLASS's GEMMs with OpMultiplyAddFastF32.
//
// Why. The trailing updates of the tall FP32 Householder QR (geqrf's form by CholeskyQR panels,
// src/core/tsqr.cpp) are most of its time, and cuBLAS runs FP32 GEMMs on the FP32 pipes at
// ~43-45 TFLOP/s on an H100 (cublasLt's other algorithms are no faster; session 24 run 4).
// cuBLAS's TF32 GEMMs with the split done in memory first lost (the split's passes over V cost
// what the tensor cores saved: session 24 runs 2 and 3). CUTLASS splits in registers: each
// FP32 operand x as big = tf32(x) (round to nearest) and small = tf32(x - big), the product
// taken as big big + big small + small big (small small, <= 2^-22 |ab|, dropped), three
// mma.sync.m16n8k8.tf32. Measured (session 24 runs 5-6, H100, 2^20 rows): C -= V Y 1.42-1.49x
// cublasSgemm at k = 256 (tile 128 x 64 x 32, warps 64 x 32, 3 stages), 1.30x at k = n = 128
// (64 x 64 x 32, 32 x 32, 4 stages); W = V^T C split-K 1.25x at n = 256, 1.55-1.64x at n = 512
// (128 x 128 x 16, 64 x 32, 3 stages).
//
// Accumulation. The tensor cores add in FP32 but truncate each mma's sum: over a chain of one
// accumulator that is a bias of ~0.118 u per term on same-sign sums (u = 2^-24; session 22's
// measure). C -= V Y has chains of k (256: ~30 u, within SGEMM's k u bound for the same
// product). W = V^T C has an inner dimension of m (millions): split-K keeps every chain within
// GPUQR_LARFB_TF32_CHAIN rows (1024: ~120 u on same-sign sums), and the slices' partials are
// added in FP32 (rounded to nearest) in a fixed order: bitwise reproducible run to run.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "gpuqr/error.hpp"
#include "src/core/blocked_kernels.hpp"
#include "src/cuda/check.hpp"
#include "src/cuda/gram_kernels.hpp"
#include "src/cuda/larfb_tf32.hpp"

#if GPUQR_HAVE_CUTLASS
#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm.h"
#include "cutlass/gemm/device/gemm_splitk_parallel.h"
#endif

namespace gpuqr::kernels::cuda {
namespace {

std::atomic<int> tf32_larfb_override{-1};       // larfb_tf32_mode(): -1 default, 0 off, 1 on
std::atomic<std::int64_t> tf32_larfb_calls{0};  // larfb_tf32_count()

/// GPUQR_<name> as an integer in [lo, hi], else dflt (read on every call: A/B runs).
std::int64_t knob(const char* name, std::int64_t dflt, std::int64_t lo, std::int64_t hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return dflt;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  return *end == '\0' && x >= lo && x <= hi ? std::int64_t(x) : dflt;
}

#if GPUQR_HAVE_CUTLASS
using Col = cutlass::layout::ColumnMajor;
using Row = cutlass::layout::RowMajor;
using Epilogue = cutlass::epilogue::thread::LinearCombination<float, 4, float, float>;

/// C = alpha A B + beta C, all column-major, 3xTF32 (OpMultiplyAddFastF32), 16-byte operands.
template <int TM, int TN, int TK, int WM, int WN, int Stages>
using Gemm3x = cutlass::gemm::device::Gemm<
    float, Col, float, Col, float, Col, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<TM, TN, TK>, cutlass::gemm::GemmShape<WM, WN, TK>,
    cutlass::gemm::GemmShape<16, 8, 8>, Epilogue,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, Stages, 4, 4, false,
    cutlass::arch::OpMultiplyAddFastF32>;
using NnWide = Gemm3x<128, 64, 32, 64, 32, 3>;   // k >= 256
using NnNarrow = Gemm3x<64, 64, 32, 32, 32, 4>;  // k < 256

/// D = alpha A B + beta C with A row-major (V^T of a column-major V), split-K parallel: each
/// slice's product into the workspace, then one reduction kernel sums them in order.
using TnSplit = cutlass::gemm::device::GemmSplitKParallel<
    float, Row, float, Col, float, Col, float, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 16>, cutlass::gemm::GemmShape<64, 32, 16>,
    cutlass::gemm::GemmShape<16, 8, 8>, Epilogue,
    cutlass::epilogue::thread::Convert<float, 4, float>,
    cutlass::reduction::thread::ReduceAdd<float, float, 4>,
    cutlass::gemm::threadblock::GemmSplitKHorizontalThreadblockSwizzle, 3, 4, 4,
    cutlass::arch::OpMultiplyAddFastF32>;

template <class G>
bool run_nn(detail::ContextImpl& ctx, std::int64_t m, std::int64_t n, std::int64_t k,
            const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
            std::int64_t ldc) {
  typename G::Arguments args({int(m), int(n), int(k)}, {a, lda}, {b, ldb}, {c, ldc}, {c, ldc},
                             {-1.0f, 1.0f});
  if (G::can_implement(args) != cutlass::Status::kSuccess) return false;
  G op;
  if (op.initialize(args, nullptr, ctx.stream) != cutlass::Status::kSuccess) return false;
  if (op.run(ctx.stream) != cutlass::Status::kSuccess)
    GPUQR_THROW(CudaError, "larfb: the 3xTF32 GEMM's launch failed");
  return true;
}

/// Whether every pointer and leading dimension allows CUTLASS's 16-byte accesses.
bool aligned(std::initializer_list<const float*> p, std::initializer_list<std::int64_t> ld) {
  for (const float* x : p)
    if (reinterpret_cast<std::uintptr_t>(x) % 16 != 0) return false;
  for (std::int64_t l : ld)
    if (l % 4 != 0) return false;
  return true;
}
#endif

}  // namespace

void larfb_tf32_mode(int mode) { tf32_larfb_override.store(mode); }
int larfb_tf32_override() { return tf32_larfb_override.load(); }
std::int64_t larfb_tf32_count() { return tf32_larfb_calls.load(); }

bool larfb_tf32_built() {
#if GPUQR_HAVE_CUTLASS
  return true;
#else
  return false;
#endif
}

bool larfb_tf32_wanted(std::int64_t m, std::int64_t n, std::int64_t k) {
  if (!larfb_tf32_built() || m <= 0 || n <= 0 || k <= 0) return false;
  // CUTLASS's problem sizes are int.
  if (m > std::int64_t(1) << 30 || n > std::int64_t(1) << 30 || k > std::int64_t(1) << 30)
    return false;
  const int mode = tf32_larfb_override.load();
  if (mode >= 0) return mode == 1;
  const char* v = std::getenv("GPUQR_LARFB_TF32");
  if (v != nullptr && *v != '\0') {
    const std::string s(v);
    GPUQR_CHECK_ARG(s == "0" || s == "1", "GPUQR_LARFB_TF32 is '" + s + "': 0 or 1");
    if (s == "0") return false;
  }
  return gram_tf32_enabled() &&
         m >= knob("GPUQR_LARFB_TF32_ROWS", 131072, 1, std::int64_t(1) << 40) &&
         k >= knob("GPUQR_LARFB_TF32_MIN_K", 64, 1, 1 << 20) &&
         n >= knob("GPUQR_LARFB_TF32_MIN_N", 64, 1, std::int64_t(1) << 40);
}

bool transposed_product_3xtf32(detail::ContextImpl& ctx, const float* v, std::int64_t ldv,
                               std::int64_t m, std::int64_t k, const float* c, std::int64_t ldc,
                               std::int64_t n, float* w, std::int64_t ldw) {
#if GPUQR_HAVE_CUTLASS
  if (m == 0 || n == 0 || k == 0) return false;
  if (!aligned({v, c, w}, {ldv, ldc, ldw})) return false;
  const std::int64_t chain = knob("GPUQR_LARFB_TF32_CHAIN", 1024, 16, std::int64_t(1) << 30);
  const std::int64_t budget = knob("GPUQR_LARFB_TF32_WS_MB", 256, 1, 1 << 20) << 20;
  const std::int64_t slice_bytes = k * n * std::int64_t(sizeof(float));
  const std::int64_t max_slices = std::max<std::int64_t>(1, budget / slice_bytes);
  const std::int64_t slices_all = (m + chain - 1) / chain;
  const std::int64_t chunks = (slices_all + max_slices - 1) / max_slices;
  const std::int64_t slices = (slices_all + chunks - 1) / chunks;  // per chunk, balanced
  const std::int64_t rows = std::min(m, slices * chain);
  void* ws = nullptr;
  {
    typename TnSplit::Arguments probe({int(k), int(n), int(rows)}, {v, ldv}, {c, ldc}, {w, ldw},
                                      {w, ldw}, {1.0f, 0.0f}, int(slices));
    if (TnSplit::can_implement(probe) != cutlass::Status::kSuccess) return false;
    try {
      ws = detail::cuda_workspace(ctx, TnSplit::get_workspace_size(probe) + 256,
                                  detail::ContextImpl::kSplitWorkspace);
    } catch (const OutOfMemory&) {
      return false;  // the caller takes SGEMM, which needs no workspace
    }
  }
  for (std::int64_t s = 0; s < m; s += rows) {
    const std::int64_t r = std::min(rows, m - s);
    const int sl = int(std::min(slices, (r + chain - 1) / chain));
    // Row-major V^T: V's row offset is a column offset of V^T.
    typename TnSplit::Arguments args({int(k), int(n), int(r)}, {v + s, ldv}, {c + s, ldc}, {w, ldw},
                                     {w, ldw}, {1.0f, s == 0 ? 0.0f : 1.0f}, sl);
    TnSplit op;
    if (op.initialize(args, ws) != cutlass::Status::kSuccess ||
        op.run(ctx.stream) != cutlass::Status::kSuccess)
      GPUQR_THROW(CudaError, "larfb: the 3xTF32 split-K GEMM's launch failed");
  }
  return true;
#else
  (void)ctx, (void)v, (void)ldv, (void)m, (void)k, (void)c, (void)ldc, (void)n, (void)w, (void)ldw;
  return false;
#endif
}

bool minus_product_3xtf32(detail::ContextImpl& ctx, const float* v, std::int64_t ldv,
                          std::int64_t m, std::int64_t k, const float* y, std::int64_t ldy,
                          std::int64_t n, float* c, std::int64_t ldc) {
#if GPUQR_HAVE_CUTLASS
  if (m == 0 || n == 0 || k == 0) return false;
  if (!aligned({v, y, c}, {ldv, ldy, ldc})) return false;
  // CUTLASS computes a column-major C as the row-major C^T, whose 64-column tiles (C's rows)
  // go to the grid's y dimension (at most 65535): launches of at most 2^21 rows
  // (GPUQR_LARFB_TF32_LAUNCH_ROWS, whole 128s, lower in the tests).
  const std::int64_t kRows =
      knob("GPUQR_LARFB_TF32_LAUNCH_ROWS", std::int64_t(1) << 21, 128, std::int64_t(1) << 21) /
      128 * 128;
  for (std::int64_t s = 0; s < m; s += kRows) {
    const std::int64_t r = std::min(kRows, m - s);
    const bool done = k >= 256 ? run_nn<NnWide>(ctx, r, n, k, v + s, ldv, y, ldy, c + s, ldc)
                               : run_nn<NnNarrow>(ctx, r, n, k, v + s, ldv, y, ldy, c + s, ldc);
    if (!done) {
      // Only the first launch can decline (every chunk has the same alignment): SGEMM then.
      if (s == 0) return false;
      GPUQR_THROW(CudaError, "larfb: the 3xTF32 GEMM declined a later row chunk");
    }
  }
  tf32_larfb_calls.fetch_add(1);
  return true;
#else
  (void)ctx, (void)v, (void)ldv, (void)m, (void)k, (void)y, (void)ldy, (void)n, (void)c, (void)ldc;
  return false;
#endif
}

}  // namespace gpuqr::kernels::cuda
