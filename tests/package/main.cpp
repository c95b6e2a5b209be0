// Uses an installed gpuqr: factors a random 60 x 20 matrix with HouseholderQR on the CPU,
// checks A = QR and Q's orthogonality, solves a least-squares problem and checks that x is
// optimal (LAPACK's ratios, threshold 30). Returns 0 when all pass, 1 otherwise.
#include <cstdint>
#include <cstdio>
#include <exception>

#include <gpuqr/accuracy.hpp>
#include <gpuqr/context.hpp>
#include <gpuqr/dense.hpp>
#include <gpuqr/matrix.hpp>

namespace {

/// Uniform in (-1, 1), never exactly zero: a fixed 64-bit LCG.
double next_uniform(std::uint64_t& state) {
  state = state * 6364136223846793005ULL + 1442695040888963407ULL;
  return (static_cast<double>(state >> 11) + 0.5) * 0x1.0p-52 - 1.0;
}

gpuqr::Matrix<double> random_matrix(std::int64_t m, std::int64_t n, std::uint64_t seed) {
  gpuqr::Matrix<double> a(m, n);
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) a(i, j) = next_uniform(seed);
  return a;
}

bool check(const char* what, double value, double threshold) {
  const bool ok = value < threshold;
  std::printf("  %-40s %10.3g  (< %g) %s\n", what, value, threshold, ok ? "ok" : "FAILED");
  return ok;
}

}  // namespace

int main() {
  try {
    const std::int64_t m = 60, n = 20;
    const gpuqr::Context ctx = gpuqr::Context::cpu();
    std::printf("consumer: gpuqr on %s (CUDA compiled: %s)\n", ctx.describe().c_str(),
                gpuqr::cuda_compiled() ? "yes" : "no");

    const gpuqr::Matrix<double> a = random_matrix(m, n, 42);
    const gpuqr::Matrix<double> b = random_matrix(m, 1, 7);

    gpuqr::HouseholderQR<double> qr(ctx, a.view());
    const gpuqr::Matrix<double> q = qr.householder_q();
    const gpuqr::Matrix<double> r = qr.matrix_r();
    gpuqr::LstsqInfo info;
    const gpuqr::Matrix<double> x = qr.solve(b.view(), &info);

    bool ok = true;
    ok &= check("||A - QR|| / (||A|| max(m,n) eps)",
                gpuqr::accuracy::qr_backward_error<double>(a.view(), q.view(), r.view()), 30);
    ok &= check("||I - Q^T Q|| / (m eps)", gpuqr::accuracy::orthogonality<double>(q.view()), 30);
    ok &= check("lstsq optimality ratio (xQRT17)",
                gpuqr::accuracy::lstsq_optimality_ratio<double>(a.view(), x.view(), b.view()),
                30);
    const double ne = gpuqr::accuracy::normal_equations_residual<double>(a.view(), x.view(),
                                                                         b.view());
    ok &= check("||A^T r|| / (||A|| ||r||)", ne, 1e-12);
    ok &= !info.singular() && info.rcond_estimate > 0.0;
    std::printf("consumer: rcond estimate %.3g, %s\n", info.rcond_estimate,
                ok ? "all checks passed" : "FAILED");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: error: %s\n", e.what());
    return 1;
  }
}
