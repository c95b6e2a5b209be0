// Dev probe (session 26): the FP64 GEMM shapes of geqrf's form by CholeskyQR panels (the
// trailing block-reflector update of src/core/tsqr.cpp) timed by cublasDgemm against every
// algorithm cublasLt's heuristic offers for the same shape, to see whether cuBLAS's default
// choice leaves time behind (session 25's ncu: C -= V W at ~40 TFLOP/s, W = V^T C at ~57).
//
//   nvcc -std=c++17 -O3 -arch=sm_90 -o gemm_lt_probe gemm_lt_probe.cu -lcublasLt -lcublas
//   ./gemm_lt_probe [m]         (m = 1048576 by default)
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                \
  do {                                                                       \
    cudaError_t e_ = (x);                                                    \
    if (e_ != cudaSuccess) {                                                 \
      std::printf("CUDA %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, __LINE__); \
      std::exit(1);                                                          \
    }                                                                        \
  } while (0)
#define CB(x)                                                             \
  do {                                                                    \
    int s_ = static_cast<int>(x);                                         \
    if (s_ != 0) {                                                        \
      std::printf("cuBLAS status %d at %s:%d\n", s_, __FILE__, __LINE__); \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)

__global__ void fill(double* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t z = (i + seed) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    p[i] = (double(z >> 11) * 0x1.0p-53) * 2.0 - 1.0;  // (-1, 1), never all zeros
  }
}

struct Case {
  const char* name;
  bool trans_a;  // op(A) = A^T
  std::int64_t m, n, k, lda, ldb, ldc;
  double alpha, beta;
};



template <class F>
float time_loop(cudaStream_t s, int reps, F&& f) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  f();  // warm
  CK(cudaEventRecord(a, s));
  for (int r = 0; r < reps; ++r) f();
  CK(cudaEventRecord(b, s));
  CK(cudaEventSynchronize(b));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, a, b));
  CK(cudaEventDestroy(a));
  CK(cudaEventDestroy(b));
  return ms / reps;
}

int main(int argc, char** argv) {
  const std::int64_t m = argc > 1 ? std::atoll(argv[1]) : 1048576;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, m = %lld\n", prop.name, (long long)m);
  // A (m x 1024 as the matrix being factored), V (m x 256) its columns 0..255.
  const std::int64_t ld = m, cols = 1024;
  double *a = nullptr, *w = nullptr, *w2 = nullptr, *ws = nullptr;
  CK(cudaMalloc(&a, sizeof(double) * ld * cols));
  CK(cudaMalloc(&w, sizeof(double) * 256 * 1024));
  CK(cudaMalloc(&w2, sizeof(double) * 256 * 1024));
  const std::size_t ws_bytes = std::size_t(256) << 20;
  CK(cudaMalloc(&ws, ws_bytes));
  fill<<<4096, 256>>>(a, std::size_t(ld) * cols, 1);
  fill<<<256, 256>>>(w, 256 * 1024, 2);
  CK(cudaDeviceSynchronize());
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  cublasHandle_t h;
  CB(cublasCreate(&h));
  CB(cublasSetStream(h, s));
  cublasLtHandle_t lt;
  CB(cublasLtCreate(&lt));
  const double* v = a;            // columns 0..255
  double* c = a + 256 * ld;       // columns 256..
  const Case cases[] = {
      // the trailing update of a 256-wide block reflector, C 256 and 512 columns wide
      {"C-=VW n=256 k=256", false, m, 256, 256, ld, 256, ld, -1.0, 1.0},
      {"C-=VW n=512 k=256", false, m, 512, 256, ld, 256, ld, -1.0, 1.0},
      {"C-=VW n=768 k=256", false, m, 768, 256, ld, 256, ld, -1.0, 1.0},
      {"W=V^T C n=256 k=m", true, 256, 256, m, ld, ld, 256, 1.0, 0.0},
      {"W=V^T C n=512 k=m", true, 256, 512, m, ld, ld, 256, 1.0, 0.0},
      // in-block (128-wide panel reflector on the block's second panel) and the T merge
      {"C-=VW n=128 k=128", false, m, 128, 128, ld, 128, ld, -1.0, 1.0},
      {"W=V^T C 128x128 k=m", true, 128, 128, m, ld, ld, 128, 1.0, 0.0},
  };
  const int reps = 5;
  for (const Case& cs : cases) {
    const double flops = 2.0 * double(cs.m) * double(cs.n) * double(cs.k);
    // B and C operands: NN: A = v (m x k), B = w (k x n), C = c. TN: A = v (k... op), B = c.
    const double* pa = v;
    const double* pb = cs.trans_a ? c : w;
    double* pc = cs.trans_a ? w2 : c;
    const cublasOperation_t ta = cs.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
    const double al = cs.alpha, be = cs.beta;
    const float base = time_loop(s, reps, [&] {
      CB(cublasDgemm(h, ta, CUBLAS_OP_N, int(cs.m), int(cs.n), int(cs.k), &al, pa, int(cs.lda),
                     pb, int(cs.ldb), &be, pc, int(cs.ldc)));
    });
    std::printf("\n%-22s cublasDgemm %.3f ms %.1f TFLOP/s\n", cs.name, base, flops / base * 1e-9);
    // The same product in pieces of 2^20 along the long dimension (rows of C for C -= V W,
    // the inner dimension for W = V^T C, accumulated with beta = 1 after the first).
    for (std::int64_t piece : {std::int64_t(1) << 20, std::int64_t(1) << 19}) {
      const std::int64_t len = cs.trans_a ? cs.k : cs.m;
      if (len <= piece) continue;
      const float tp = time_loop(s, reps, [&] {
        for (std::int64_t o = 0; o < len; o += piece) {
          const int l = int(std::min(piece, len - o));
          if (cs.trans_a) {
            const double b2 = o == 0 ? be : 1.0;
            CB(cublasDgemm(h, ta, CUBLAS_OP_N, int(cs.m), int(cs.n), l, &al, pa + o, int(cs.lda),
                           pb + o, int(cs.ldb), &b2, pc, int(cs.ldc)));
          } else {
            CB(cublasDgemm(h, ta, CUBLAS_OP_N, l, int(cs.n), int(cs.k), &al, pa + o, int(cs.lda),
                           pb, int(cs.ldb), &be, pc + o, int(cs.ldc)));
          }
        }
      });
      std::printf("  in pieces of %lld: %.3f ms %.1f TFLOP/s (%.2fx dgemm)\n", (long long)piece,
                  tp, flops / tp * 1e-9, base / tp);
    }
    if (std::getenv("PROBE_NO_LT") != nullptr) continue;
    cublasLtMatmulDesc_t op;
    CB(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_64F, CUDA_R_64F));
    CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    const cublasOperation_t tb = CUBLAS_OP_N;
    CB(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    cublasLtMatrixLayout_t la, lb, lc;
    const std::uint64_t ar = cs.trans_a ? cs.k : cs.m, ac = cs.trans_a ? cs.m : cs.k;
    CB(cublasLtMatrixLayoutCreate(&la, CUDA_R_64F, ar, ac, cs.lda));
    CB(cublasLtMatrixLayoutCreate(&lb, CUDA_R_64F, cs.k, cs.n, cs.ldb));
    CB(cublasLtMatrixLayoutCreate(&lc, CUDA_R_64F, cs.m, cs.n, cs.ldc));
    cublasLtMatmulPreference_t pref;
    CB(cublasLtMatmulPreferenceCreate(&pref));
    CB(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                            &ws_bytes, sizeof ws_bytes));
    std::vector<cublasLtMatmulHeuristicResult_t> res(32);
    int found = 0;
    CB(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 32, res.data(), &found));
    for (int i = 0; i < found; ++i) {
      const cublasLtMatmulAlgo_t& algo = res[i].algo;
      int id = -1, tile = -1, stages = -1, splitk = -1, swz = -1, red = -1, cluster = -1;
      std::size_t got = 0;
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &got);
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile,
                                           &got);
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages,
                                           sizeof stages, &got);
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk,
                                           sizeof splitk, &got);
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz,
                                           sizeof swz, &got);
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red,
                                           sizeof red, &got);
      cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster,
                                           sizeof cluster, &got);
      const float t = time_loop(s, reps, [&] {
        CB(cublasLtMatmul(lt, op, &al, pa, la, pb, lb, &be, pc, lc, pc, lc, &algo, ws,
                          res[i].workspaceSize, s));
      });
      std::printf("  lt[%2d] id %3d tile %3d stages %3d splitk %3d swizzle %d red %d cluster %d "
                  "ws %8zu: %.3f ms %.1f TFLOP/s (%.2fx dgemm)\n",
                  i, id, tile, stages, splitk, swz, red, cluster, res[i].workspaceSize, t,
                  flops / t * 1e-9, base / t);
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
  }
  std::printf("\ndone\n");
  return 0;
}
