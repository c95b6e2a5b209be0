// Session 21 probe: cuBLAS DGEMM / SGEMM rates on the tall-skinny CholeskyQR2 shapes
// (m = 2^20, n = 1024): the block-column products and Gram pieces, against full GEMMs.
// Prints ms and TFLOP/s per call (CUDA events, median of 5 after a warm-up).
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <functional>

template <class T>
struct G;
template <>
struct G<double> {
  static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
    const double one = 1;
    return cublasDgemm_64(h, ta, tb, m, n, k, &one, a, lda, b, ldb, &beta, c, ldc);
  }
  static cublasStatus_t batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, int64_t sa, const double* b, int64_t ldb, int64_t sb, double* c, int64_t ldc, int64_t sc, int64_t cnt) {
    const double one = 1, zero = 0;
    return cublasDgemmStridedBatched_64(h, ta, tb, m, n, k, &one, a, lda, sa, b, ldb, sb, &zero, c, ldc, sc, cnt);
  }
};
template <>
struct G<float> {
  static cublasStatus_t gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    const float one = 1;
    return cublasSgemm_64(h, ta, tb, m, n, k, &one, a, lda, b, ldb, &beta, c, ldc);
  }
  static cublasStatus_t batched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, int64_t sa, const float* b, int64_t ldb, int64_t sb, float* c, int64_t ldc, int64_t sc, int64_t cnt) {
    const float one = 1, zero = 0;
    return cublasSgemmStridedBatched_64(h, ta, tb, m, n, k, &one, a, lda, sa, b, ldb, sb, &zero, c, ldc, sc, cnt);
  }
};

cudaEvent_t e0, e1;
template <class F>
double time_ms(F f) {
  f();
  std::vector<float> t;
  for (int r = 0; r < 5; ++r) {
    cudaEventRecord(e0);
    f();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

template <class T>
void run(cublasHandle_t h, const char* p) {
  const int64_t m = int64_t(1) << 20, n = 1024;
  T *a, *q, *g;
  cudaMalloc(&a, sizeof(T) * m * n);
  cudaMalloc(&q, sizeof(T) * m * n);
  cudaMalloc(&g, sizeof(T) * 64 * n * n);
  std::vector<T> hx(n * n);
  for (size_t i = 0; i < hx.size(); ++i) hx[i] = T((i * 2654435761u % 1000) / 1000.0 - 0.5);
  T* x;
  cudaMalloc(&x, sizeof(T) * n * n);
  cudaMemcpy(x, hx.data(), sizeof(T) * n * n, cudaMemcpyHostToDevice);
  // A: fill from x repeatedly (nonzero)
  for (int64_t s = 0; s < m * n; s += n * n) cudaMemcpy(a + s, x, sizeof(T) * n * n, cudaMemcpyDeviceToDevice);
  auto report = [&](const char* what, double flops, double ms) {
    std::printf("%s %-48s %9.3f ms %7.2f TFLOP/s\n", p, what, ms, flops / ms / 1e9);
  };
  const auto N = CUBLAS_OP_N, Tr = CUBLAS_OP_T;
  // full square reference
  {
    const int64_t s = 8192;
    double ms = time_ms([&] { G<T>::gemm(h, N, N, s, s, s, a, s, a + s * s, s, T(0), q, s); });
    report("square 8192^3", 2.0 * s * s * s, ms);
  }
  // product Q = A X by block columns of nb
  for (int64_t nb : {128, 256, 512}) {
    double flops = 0;
    double ms = time_ms([&] {
      for (int64_t j0 = 0; j0 < n; j0 += nb) {
        const int64_t j1 = std::min(n, j0 + nb);
        G<T>::gemm(h, N, N, m, j1 - j0, j1, a, m, x + j0 * n, n, T(0), q + j0 * m, m);
      }
    });
    for (int64_t j0 = 0; j0 < n; j0 += nb) flops += 2.0 * m * nb * std::min(n, j0 + nb);
    char w[64];
    std::snprintf(w, 64, "product block columns nb=%lld", (long long)nb);
    report(w, flops, ms);
  }
  {
    double ms = time_ms([&] { G<T>::gemm(h, N, N, m, n, n, a, m, x, n, T(0), q, m); });
    report("product full m x 1024 x 1024", 2.0 * m * n * n, ms);
  }
  for (int64_t j1 : {128, 512, 1024}) {
    double ms = time_ms([&] { G<T>::gemm(h, N, N, m, 128, j1, a, m, x, n, T(0), q, m); });
    char w[64];
    std::snprintf(w, 64, "product one m x 128 x %lld", (long long)j1);
    report(w, 2.0 * m * 128 * j1, ms);
  }
  // Gram by block columns
  for (int64_t nb : {128, 256}) {
    double flops = 0;
    double ms = time_ms([&] {
      for (int64_t j0 = 0; j0 < n; j0 += nb) {
        const int64_t j1 = std::min(n, j0 + nb);
        G<T>::gemm(h, Tr, N, j1, j1 - j0, m, a, m, a + j0 * m, m, T(0), g + j0 * n, n);
      }
    });
    for (int64_t j0 = 0; j0 < n; j0 += nb) flops += 2.0 * m * nb * std::min(n, j0 + nb);
    char w[64];
    std::snprintf(w, 64, "gram block columns nb=%lld", (long long)nb);
    report(w, flops, ms);
  }
  {
    double ms = time_ms([&] { G<T>::gemm(h, Tr, N, n, n, m, a, m, a, m, T(0), g, n); });
    report("gram full 1024 x 1024 x m", 2.0 * m * n * n, ms);
  }
  for (int64_t j1 : {128, 512, 1024}) {
    double ms = time_ms([&] { G<T>::gemm(h, Tr, N, j1, 128, m, a, m, a, m, T(0), g, n); });
    char w[64];
    std::snprintf(w, 64, "gram one %lld x 128 x m", (long long)j1);
    report(w, 2.0 * m * 128 * j1, ms);
  }
  // Gram block columns as row-chunk batches (S partials, no sum timed)
  for (int64_t S : {4, 8, 16}) {
    const int64_t nb = 128, k = m / S;
    double flops = 0;
    double ms = time_ms([&] {
      for (int64_t j0 = 0; j0 < n; j0 += nb) {
        const int64_t j1 = std::min(n, j0 + nb);
        G<T>::batched(h, Tr, N, j1, nb, k, a, m, k, a + j0 * m, m, k, g + j0 * n, n, n * n, S);
      }
    });
    for (int64_t j0 = 0; j0 < n; j0 += nb) flops += 2.0 * m * nb * std::min(n, j0 + nb);
    char w[64];
    std::snprintf(w, 64, "gram block columns batched S=%lld", (long long)S);
    report(w, flops, ms);
  }
  // Gram by block rows: G(j0:j1, j0:n) = W(:, j0:j1)^T W(:, j0:n) (wide outputs)
  {
    const int64_t nb = 128;
    double flops = 0;
    double ms = time_ms([&] {
      for (int64_t j0 = 0; j0 < n; j0 += nb) {
        G<T>::gemm(h, Tr, N, nb, n - j0, m, a + j0 * m, m, a + j0 * m, m, T(0), g + j0 + j0 * n, n);
      }
    });
    for (int64_t j0 = 0; j0 < n; j0 += nb) flops += 2.0 * m * nb * (n - j0);
    report("gram block rows nb=128", flops, ms);
  }
  // recursive halves for the Gram: G11, G12 (one GEMM 512 x 512), G22 recursively to 128
  {
    double flops = 0;
    std::vector<std::pair<int64_t,int64_t>> calls;  // (offset, size): off-diagonal block of size s at offset o
    std::function<void(int64_t,int64_t)> rec;
    double ms = time_ms([&] {
      std::vector<std::pair<int64_t,int64_t>> st = {{0, n}};
      while (!st.empty()) {
        auto [o, s] = st.back(); st.pop_back();
        if (s <= 128) { G<T>::gemm(h, Tr, N, s, s, m, a + o * m, m, a + o * m, m, T(0), g + o + o * n, n); continue; }
        const int64_t hs = s / 2;
        G<T>::gemm(h, Tr, N, hs, hs, m, a + o * m, m, a + (o + hs) * m, m, T(0), g + o + (o + hs) * n, n);
        st.push_back({o, hs}); st.push_back({o + hs, hs});
      }
    });
    // flops: n^2/2 + diag blocks 128^2 * 8 / 2 extra
    flops = 2.0 * m * (n * n / 2.0 + 128.0 * 128 * 8 / 2.0);
    report("gram recursive halves to 128", flops, ms);
  }
  cudaFree(a); cudaFree(q); cudaFree(g); cudaFree(x);
}

// TF32 tensor-core rates (one pass; a 3xTF32 split costs three such passes, or two for a
// Gram matrix: hh^T + hl^T + (hl^T)^T), FP32 data.
void run_tf32(cublasHandle_t h) {
  const int64_t m = int64_t(1) << 20, n = 1024;
  float *a, *q, *g, *x;
  cudaMalloc(&a, sizeof(float) * m * n);
  cudaMalloc(&q, sizeof(float) * m * n);
  cudaMalloc(&g, sizeof(float) * n * n);
  cudaMalloc(&x, sizeof(float) * n * n);
  std::vector<float> hx(n * n);
  for (size_t i = 0; i < hx.size(); ++i) hx[i] = float((i * 2654435761u % 1000) / 1000.0 - 0.5);
  cudaMemcpy(x, hx.data(), sizeof(float) * n * n, cudaMemcpyHostToDevice);
  for (int64_t s = 0; s < m * n; s += n * n) cudaMemcpy(a + s, x, sizeof(float) * n * n, cudaMemcpyDeviceToDevice);
  cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
  auto report = [&](const char* what, double flops, double ms) {
    std::printf("tf32 %-45s %9.3f ms %7.2f TFLOP/s\n", what, ms, flops / ms / 1e9);
  };
  const auto N = CUBLAS_OP_N, Tr = CUBLAS_OP_T;
  const float one = 1, zero = 0;
  {
    double ms = time_ms([&] { cublasSgemm_64(h, Tr, N, n, n, m, &one, a, m, a, m, &zero, g, n); });
    report("gram full 1024 x 1024 x m", 2.0 * m * n * n, ms);
  }
  {
    double ms = time_ms([&] {
      for (int64_t j0 = 0; j0 < n; j0 += 256)
        cublasSgemm_64(h, Tr, N, j0 + 256, 256, m, &one, a, m, a + j0 * m, m, &zero, g + j0 * n, n);
    });
    report("gram block columns nb=256", 2.0 * m * 256 * (256 + 512 + 768 + 1024), ms);
  }
  for (int64_t nb : {128, 256}) {
    double flops = 0;
    double ms = time_ms([&] {
      for (int64_t j0 = 0; j0 < n; j0 += nb) {
        const int64_t j1 = std::min(n, j0 + nb);
        cublasSgemm_64(h, N, N, m, j1 - j0, j1, &one, a, m, x + j0 * n, n, &zero, q + j0 * m, m);
      }
    });
    for (int64_t j0 = 0; j0 < n; j0 += nb) flops += 2.0 * m * nb * std::min(n, j0 + nb);
    char w[64];
    std::snprintf(w, 64, "product block columns nb=%lld", (long long)nb);
    report(w, flops, ms);
  }
  {
    double ms = time_ms([&] { cublasSgemm_64(h, N, N, m, n, n, &one, a, m, x, n, &zero, q, m); });
    report("product full m x 1024 x 1024", 2.0 * m * n * n, ms);
  }
  {
    // the product's three terms stacked along k: m x 128 x 3 j1 (j1 = 1024)
    double ms = time_ms([&] { cublasSgemm_64(h, N, N, m, 128, 3 * 1024 / 3 * 3 > n ? n : n, &one, a, m, x, n, &zero, q, m); });
    report("product one m x 128 x 1024", 2.0 * m * 128 * 1024, ms);
  }
  {
    double ms = time_ms([&] { cudaMemcpyAsync(q, a, sizeof(float) * m * n, cudaMemcpyDeviceToDevice); });
    std::printf("copy m x n fp32 %9.3f ms (%.0f GB/s)\n", ms, 2.0 * sizeof(float) * m * n / ms / 1e6);
  }
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  cudaFree(a); cudaFree(q); cudaFree(g); cudaFree(x);
}

int main() {
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cublasHandle_t h;
  cublasCreate(&h);
  run<double>(h, "d");
  run<float>(h, "s");
  run_tf32(h);
  return 0;
}
