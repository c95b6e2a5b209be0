// Session 24 probe: FP32 GEMM rates on the trailing-update shapes of geqrf's form by
// CholeskyQR panels (m = 2^20 rows, block reflectors of 256 columns): cublasSgemm (what
// larfb calls) against every algorithm cublasLt's heuristic offers (up to 32, 1 GiB of
// workspace), with each algorithm's id, tile, stages and split-K. Median of 5 after a warm-up.
// Build: nvcc -O2 -arch=sm_90 -o lt_probe lt_probe.cu -lcublasLt -lcublas
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <vector>

#define CK(x)                                                               \
  do {                                                                      \
    auto s_ = (x);                                                          \
    if (s_ != 0) {                                                          \
      std::printf("error %d at %s:%d\n", int(s_), __FILE__, __LINE__);      \
      std::exit(1);                                                         \
    }                                                                       \
  } while (0)

cudaEvent_t e0, e1;

double time_ms(const std::function<void()>& f) {
  f();
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    CK(cudaEventRecord(e0));
    f();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms = 0;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

__global__ void fill(float* x, std::int64_t n, unsigned seed) {
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < n;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    x[i] = (float(h & 0xffffff) / float(0x1000000)) * 2.0f - 1.0f + 1e-7f;
  }
}

int main() {
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  const std::int64_t m = 1 << 20;
  float *v, *c, *w, *ws;
  CK(cudaMalloc(&v, sizeof(float) * m * 256));
  CK(cudaMalloc(&c, sizeof(float) * m * 768));
  CK(cudaMalloc(&w, sizeof(float) * 768 * 768));
  const std::size_t ws_bytes = std::size_t(1) << 30;
  CK(cudaMalloc(&ws, ws_bytes));
  fill<<<4096, 256>>>(v, m * 256, 1);
  fill<<<4096, 256>>>(c, m * 768, 2);
  fill<<<64, 256>>>(w, 768 * 768, 3);
  cublasHandle_t h;
  CK(cublasCreate(&h));
  cublasLtHandle_t lt;
  CK(cublasLtCreate(&lt));
  struct Shape {
    const char* name;
    cublasOperation_t ta, tb;
    std::int64_t rows, cols, k;  // C rows x cols, inner k
    const float *a, *b;
    std::int64_t lda, ldb;
    float* c;
    std::int64_t ldc;
    float beta;
  };
  // W = V^T C (256 x n over m rows), C -= V Y (m x n, k = 256), the merge / in-block
  // V^T V_i (128 x 128 over m rows) and C -= V Y at 128.
  const Shape shapes[] = {
      {"W=V^T C n=256", CUBLAS_OP_T, CUBLAS_OP_N, 256, 256, m, v, c, m, m, w, 768, 0.0f},
      {"W=V^T C n=512", CUBLAS_OP_T, CUBLAS_OP_N, 256, 512, m, v, c, m, m, w, 768, 0.0f},
      {"C-=VY n=256", CUBLAS_OP_N, CUBLAS_OP_N, m, 256, 256, v, w, m, 768, c, m, 1.0f},
      {"C-=VY n=512", CUBLAS_OP_N, CUBLAS_OP_N, m, 512, 256, v, w, m, 768, c, m, 1.0f},
      {"V^T V 128", CUBLAS_OP_T, CUBLAS_OP_N, 128, 128, m, v, c, m, m, w, 768, 0.0f},
      {"C-=VY 128x128", CUBLAS_OP_N, CUBLAS_OP_N, m, 128, 128, v, w, m, 768, c, m, 1.0f},
  };
  for (const Shape& s : shapes) {
    const double flops = 2.0 * double(s.rows) * double(s.cols) * double(s.k);
    const float alpha = s.beta == 0.0f ? 1.0f : -1.0f;
    const double base = time_ms([&] {
      CK(cublasSgemm_64(h, s.ta, s.tb, s.rows, s.cols, s.k, &alpha, s.a, s.lda, s.b, s.ldb,
                        &s.beta, s.c, s.ldc));
    });
    std::printf("%-16s cublasSgemm %8.3f ms %6.1f TFLOP/s\n", s.name, base, flops / base * 1e-9);
    cublasLtMatmulDesc_t op;
    CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &s.ta, sizeof(s.ta)));
    CK(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &s.tb, sizeof(s.tb)));
    cublasLtMatrixLayout_t la, lb, lc;
    const bool at = s.ta == CUBLAS_OP_T, bt = s.tb == CUBLAS_OP_T;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, at ? s.k : s.rows, at ? s.rows : s.k, s.lda));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, bt ? s.cols : s.k, bt ? s.k : s.cols, s.ldb));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, s.rows, s.cols, s.ldc));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t wsb = ws_bytes;
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb,
                                            sizeof(wsb)));
    cublasLtMatmulHeuristicResult_t res[32];
    int found = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 32, res, &found));
    for (int i = 0; i < found; ++i) {
      int id = -1, tile = -1, stages = -1, splitk = -1, swizzle = -1, red = -1;
      std::size_t sz = 0;
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, &sz);
      cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &sz);
      const double t = time_ms([&] {
        CK(cublasLtMatmul(lt, op, &alpha, s.a, la, s.b, lb, &s.beta, s.c, lc, s.c, lc,
                          &res[i].algo, ws, ws_bytes, 0));
      });
      std::printf("%-16s lt #%-2d id %3d tile %3d stages %3d splitk %4d swz %d red %d ws %9zu  %8.3f ms %6.1f TFLOP/s %s\n",
                  s.name, i, id, tile, stages, splitk, swizzle, red, res[i].workspaceSize, t,
                  flops / t * 1e-9, t < base * 0.95 ? "<" : "");
    }
    cublasLtMatmulPreferenceDestroy(pref);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
  }
  return 0;
}
