// The reference implementation gpuqr is timed against: LAPACK on the CPU, cuSOLVER on a GPU.
//
// A Baseline takes host inputs and returns host outputs with its per-repetition times. Each
// implementation moves the input to where it computes, allocates its workspace, and restores
// the input from a pristine copy before every repetition, all outside the timed region; only
// the library calls themselves are timed. Outputs are those of the last repetition.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "gpuqr/matrix.hpp"

namespace gpuqr::bench {

/// How many repetitions to run: `warmup` untimed, then `repeat` timed.
struct TimingPlan {
  int warmup = 1;
  int repeat = 3;
};

/// What a baseline run returns, on the host.
template <class T>
struct BaselineRun {
  /// Milliseconds of each timed repetition.
  std::vector<double> times_ms;
  /// geqrf: the factors (m x n); orgqr: Q (m x k); ormqr: Q^T C (m x nrhs);
  /// gels: B on exit (m x nrhs), the solution in its first n rows.
  Matrix<T> out;
  /// geqrf: the reflectors' scalars (min(m, n) x 1); empty otherwise.
  Matrix<T> tau;
};

/// A reference library. Methods throw std::exception on failure (the case is then reported
/// without baseline figures).
class Baseline {
 public:
  virtual ~Baseline() = default;

  /// "lapack" or "cusolver".
  virtual std::string name() const = 0;
  /// One line naming the library and where it runs.
  virtual std::string describe() const = 0;

  /// geqrf of `a` (m x n).
  virtual BaselineRun<double> run_geqrf(MatrixView<const double> a, const TimingPlan& plan) = 0;
  virtual BaselineRun<float> run_geqrf(MatrixView<const float> a, const TimingPlan& plan) = 0;

  /// orgqr: forms Q (m x k) from the k reflectors in `reflectors` (m x k, as geqrf left them)
  /// and `tau` (k x 1).
  virtual BaselineRun<double> run_orgqr(MatrixView<const double> reflectors,
                                        MatrixView<const double> tau,
                                        const TimingPlan& plan) = 0;
  virtual BaselineRun<float> run_orgqr(MatrixView<const float> reflectors,
                                       MatrixView<const float> tau, const TimingPlan& plan) = 0;

  /// ormqr from the left, transposed: Q^T C with Q from `reflectors` (m x k) and `tau`,
  /// C m x nrhs.
  virtual BaselineRun<double> run_ormqr(MatrixView<const double> reflectors,
                                        MatrixView<const double> tau,
                                        MatrixView<const double> c,
                                        const TimingPlan& plan) = 0;
  virtual BaselineRun<float> run_ormqr(MatrixView<const float> reflectors,
                                       MatrixView<const float> tau, MatrixView<const float> c,
                                       const TimingPlan& plan) = 0;

  /// Least squares min ||A X - B|| (m >= n): geqrf, Q^T B, triangular solve.
  virtual BaselineRun<double> run_gels(MatrixView<const double> a, MatrixView<const double> b,
                                       const TimingPlan& plan) = 0;
  virtual BaselineRun<float> run_gels(MatrixView<const float> a, MatrixView<const float> b,
                                      const TimingPlan& plan) = 0;
};

/// LAPACK (LAPACKE over OpenBLAS) on the CPU, called directly.
std::unique_ptr<Baseline> make_lapack_baseline();

/// True when the tester was built with the cuSOLVER baseline (a CUDA build).
bool cusolver_baseline_compiled();

/// cuSOLVER/cuBLAS on CUDA device `device`, on a stream of its own. Throws std::runtime_error
/// when the tester was built without CUDA or the device is unusable.
std::unique_ptr<Baseline> make_cusolver_baseline(int device);

/// The median of `times` (0 when empty).
double median(std::vector<double> times);

}  // namespace gpuqr::bench
