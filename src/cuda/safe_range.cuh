// The range in which the panel kernels square column entries without over- or underflow:
// a column whose sum of squares falls outside [small, big] is rescaled (LAPACK's larfg does
// the same with its safmin / rsafmn loop). One definition for the three panel kernels.
#pragma once

#include <cfloat>

namespace gpuqr::kernels::cuda {

template <class T>
struct SafeRange;
template <>
struct SafeRange<double> {
  static constexpr double small = DBL_MIN / DBL_EPSILON;
  static constexpr double big = DBL_MAX / 4;
};
template <>
struct SafeRange<float> {
  static constexpr float small = FLT_MIN / FLT_EPSILON;
  static constexpr float big = FLT_MAX / 4;
};

}  // namespace gpuqr::kernels::cuda
