// The binary operations of the one-block status reductions (src/cuda/cholqr_kernels.cu,
// src/cuda/cholesky_small.cu), on doubles. Internal to src/cuda/; each including .cu gets its
// own copies (an unnamed namespace).
#pragma once

namespace gpuqr::kernels::cuda {
namespace {

struct SumOp {
  __device__ double operator()(double a, double b) const { return a + b; }
};
/// max / min by comparison: a NaN operand on the left is dropped, on the right kept.
struct MaxOp {
  __device__ double operator()(double a, double b) const { return a > b ? a : b; }
};
struct MinOp {
  __device__ double operator()(double a, double b) const { return a < b ? a : b; }
};

}  // namespace
}  // namespace gpuqr::kernels::cuda
