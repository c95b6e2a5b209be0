// The CholeskyQR / orhr_col leaves for a build without the CUDA backend: each throws
// NotCompiled (a CUDA context cannot be created in such a build, so they are never reached
// through the drivers; they exist so that GPUQR_DISPATCH links).
#include "src/core/cholqr_kernels.hpp"
#include "src/core/qrf_ah_kernels.hpp"
#include "src/cuda/gram_kernels.hpp"
#include "src/stubs/not_compiled.hpp"

namespace gpuqr::kernels::cuda {
using detail::not_compiled;

template <class T>
void gram(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>) {
  not_compiled("cuda gram");
}
template <class T>
bool gram_low(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>) {
  not_compiled("cuda gram_low");
}
template <class T>
bool gram_low_wanted(detail::ContextImpl&, std::int64_t, std::int64_t) {
  not_compiled("cuda gram_low_wanted");
}
template <class T>
void gram_of_product(detail::ContextImpl&, MatrixView<const T>, MatrixView<const T>,
                     MatrixView<T>) {
  not_compiled("cuda gram_of_product");
}
template <class T>
void gram_of_upper_product(detail::ContextImpl&, MatrixView<const T>, MatrixView<const T>,
                           MatrixView<T>) {
  not_compiled("cuda gram_of_upper_product");
}
template <class T>
void orhr_col_of_product(detail::ContextImpl&, MatrixView<const T>, MatrixView<const T>,
                         MatrixView<T>, MatrixView<T>, VectorView<T>, MatrixView<T>) {
  not_compiled("cuda orhr_col_of_product");
}
template <class T>
void cholesky_inverse(detail::ContextImpl&, MatrixView<T>, MatrixView<T>, double,
                      VectorView<double>) {
  not_compiled("cuda cholesky_inverse");
}
template <class T>
void gram_status(detail::ContextImpl&, MatrixView<const T>, VectorView<double>) {
  not_compiled("cuda gram_status");
}
template <class T>
void multiply(detail::ContextImpl&, Op, MatrixView<const T>, MatrixView<const T>, MatrixView<T>,
              double) {
  not_compiled("cuda multiply");
}
template <class T>
void multiply_in_place(detail::ContextImpl&, MatrixView<T>, MatrixView<const T>) {
  not_compiled("cuda multiply_in_place");
}
template <class T>
void trsm_right_upper(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>) {
  not_compiled("cuda trsm_right_upper");
}
template <class T>
void orhr_col(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>, MatrixView<T>,
              VectorView<T>) {
  not_compiled("cuda orhr_col");
}
template <class T>
void finish_geqrf(detail::ContextImpl&, MatrixView<const T>, VectorView<const T>,
                  MatrixView<const T>, MatrixView<T>, VectorView<T>) {
  not_compiled("cuda finish_geqrf");
}

template <class T>
void ah_panel(detail::ContextImpl&, MatrixView<T>, MatrixView<T>, MatrixView<T>, VectorView<T>,
              VectorView<double>) {
  not_compiled("cuda ah_panel");
}

template <class T>
void tall_times_upper(detail::ContextImpl&, MatrixView<const T>, MatrixView<const T>,
                      MatrixView<T>) {
  not_compiled("cuda tall_times_upper");
}
template <class T>
bool tall_times_upper_wanted(detail::ContextImpl&, std::int64_t, std::int64_t) {
  return false;
}

void gram_tf32_mode(int) {}
void tall_times_upper_mode(int) {}  // the tests' hook (src/cuda/gram_kernels.hpp): nothing to switch

GPUQR_INSTANTIATE_QRF_AH_KERNELS(float)
GPUQR_INSTANTIATE_QRF_AH_KERNELS(double)
GPUQR_INSTANTIATE_CHOLQR_KERNELS(float)
GPUQR_INSTANTIATE_CHOLQR_KERNELS(double)
GPUQR_INSTANTIATE_ORHR_COL_KERNEL(float)
GPUQR_INSTANTIATE_ORHR_COL_KERNEL(double)
GPUQR_INSTANTIATE_TALL_TIMES_UPPER(float)
GPUQR_INSTANTIATE_TALL_TIMES_UPPER(double)

}  // namespace gpuqr::kernels::cuda
