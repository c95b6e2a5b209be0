// gpuqr_panel_bench: the panel kernels alone (no other work on the GPU): time per h x b panel
// and per column, for the single-block kernel, the cluster kernel and the AH panel (QRF-AH
// from the Gram matrix, with its launch of the Householder kernel that returns at once), on
// the same random panel (uniform in (-1, 1)), restored before every call. CUDA events around
// each call; median of --repeat calls after warm-up. `ratio` = the Householder kernel
// panel_qr chose before the AH panel (single block up to its height, else the cluster) / AH.
//   gpuqr_panel_bench [--h 64,128,...] [--b 32] [--precision d,s] [--repeat 50] [--trace 1]
// --trace 1: instead, the AH top kernel's clock cycles per phase for one panel of each h.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "gpuqr/context.hpp"
#include "gpuqr/matrix.hpp"
#include "src/core/blocked_kernels.hpp"
#include "src/core/context_impl.hpp"
#include "tests/support/generators.hpp"

namespace {

std::vector<long> list(const std::string& text) {
  std::vector<long> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atol(item.c_str()));
  return out;
}

template <class T>
double time_panel(gpuqr::Context& ctx, long h, long b, int mode, int repeat) {
  using namespace gpuqr;
  const Matrix<T> host = testing::random_matrix<T>(h, b, 7);
  Matrix<T> src = Matrix<T>::copy_of(host.view(), MemorySpace::device, ctx.device());
  Matrix<T> a(h, b, MemorySpace::device, ctx.device()), v(h, b, MemorySpace::device, ctx.device());
  Matrix<T> t(b, b, MemorySpace::device, ctx.device()), tau(b, 1, MemorySpace::device, ctx.device());
  // mode 1: single block, 0: cluster (both without the AH panel); 2: the AH panel.
  kernels::cuda::panel_qr_single_block(mode == 0 ? 0 : 1);
  kernels::cuda::panel_qr_ah_mode(mode == 2 ? 1 : 0);
  cudaStream_t stream = static_cast<cudaStream_t>(ctx.impl().stream);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  std::vector<float> ms;
  for (int r = 0; r < repeat + 5; ++r) {
    cudaMemcpy2DAsync(a.data(), a.ld() * sizeof(T), src.data(), src.ld() * sizeof(T),
                      h * sizeof(T), b, cudaMemcpyDeviceToDevice, stream);
    cudaEventRecord(e0, stream);
    kernels::cuda::panel_qr<T>(ctx.impl(), a.view(), VectorView<T>(tau.data(), b, MemorySpace::device, ctx.device()),
                               v.view(), t.view());
    cudaEventRecord(e1, stream);
    cudaEventSynchronize(e1);
    float x = 0;
    cudaEventElapsedTime(&x, e0, e1);
    if (r >= 5) ms.push_back(x);
  }
  kernels::cuda::panel_qr_single_block(-1);
  kernels::cuda::panel_qr_ah_mode(-1);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1000.0;  // us
}

/// The AH top kernel's phase clocks for one h x b panel (after warm-up).
template <class T>
void trace_panel(gpuqr::Context& ctx, long h, long b, const char* prec) {
  using namespace gpuqr;
  const Matrix<T> host = testing::random_matrix<T>(h, b, 7);
  Matrix<T> a = Matrix<T>::copy_of(host.view(), MemorySpace::device, ctx.device());
  Matrix<T> v(h, b, MemorySpace::device, ctx.device()), t(b, b, MemorySpace::device, ctx.device());
  Matrix<T> tau(b, 1, MemorySpace::device, ctx.device());
  kernels::cuda::panel_qr_ah_mode(1);
  long long c[8] = {};
  for (int r = 0; r < 4; ++r) {
    Matrix<T> w = Matrix<T>::copy_of(a.view(), MemorySpace::device, ctx.device());
    kernels::cuda::panel_qr_ah_trace(r == 3);
    kernels::cuda::panel_qr<T>(ctx.impl(), w.view(),
                               VectorView<T>(tau.data(), b, MemorySpace::device, ctx.device()),
                               v.view(), t.view());
    cudaDeviceSynchronize();
  }
  kernels::cuda::panel_qr_ah_trace(false);
  kernels::cuda::panel_qr_ah_trace_clocks(c);
  kernels::cuda::panel_qr_ah_mode(-1);
  std::printf("trace %-2s h %6ld b %3ld cycles: read %lld gram %lld factor %lld vtv %lld t %lld "
              "write %lld total %lld\n",
              prec, h, b, c[1] - c[0], c[2] - c[1], c[3] - c[2], c[4] - c[3], c[5] - c[4],
              c[6] - c[5], c[6] - c[0]);
}

}  // namespace

int main(int argc, char** argv) {
  std::string hs = "32,64,128,256,512,640,1024", bs = "32", precs = "d,s";
  int repeat = 50;
  bool trace = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string arg = argv[i], value = argv[i + 1];
    if (arg == "--h") hs = value;
    else if (arg == "--b") bs = value;
    else if (arg == "--precision") precs = value;
    else if (arg == "--repeat") repeat = std::atoi(value.c_str());
    else if (arg == "--trace") trace = std::atoi(value.c_str()) != 0;
    else { std::fprintf(stderr, "unknown option %s\n", arg.c_str()); return 2; }
  }
  if (gpuqr::cuda_devices().empty()) {
    std::printf("no GPU here: nothing to time\n");
    return 0;
  }
  gpuqr::Context ctx = gpuqr::Context::cuda(0);
  if (trace) {
    for (const std::string& p : {std::string("d"), std::string("s")}) {
      if (precs.find(p) == std::string::npos) continue;
      for (long b : list(bs))
        for (long h : list(hs)) {
          if (h < 2 * b) continue;
          if (p == "d") trace_panel<double>(ctx, h, b, "d");
          else trace_panel<float>(ctx, h, b, "s");
        }
    }
    return 0;
  }
  std::printf("%-4s %6s %3s %10s %8s %10s %8s %10s %8s %8s\n", "prec", "h", "b", "single_us",
              "per_col", "cluster_us", "per_col", "ah_us", "per_col", "ratio");
  for (const std::string& p : {std::string("d"), std::string("s")}) {
    if (precs.find(p) == std::string::npos) continue;
    for (long b : list(bs))
      for (long h : list(hs)) {
        if (h < b) continue;
        auto run = [&](int mode) {
          return p == "d" ? time_panel<double>(ctx, h, b, mode, repeat)
                          : time_panel<float>(ctx, h, b, mode, repeat);
        };
        const bool single_fits = h <= (p == "d" ? 512 : 640);
        const double s = single_fits ? run(1) : 0.0, c = run(0), a = run(2);
        const double before = single_fits ? s : c;
        std::printf("%-4s %6ld %3ld %10.2f %8.3f %10.2f %8.3f %10.2f %8.3f %8.2f\n", p.c_str(), h,
                    b, s, s / b, c, c / b, a, a / b, before / a);
      }
  }
  return 0;
}
