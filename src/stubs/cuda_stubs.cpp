// What a build without the CUDA backend links against: every CUDA entry point throws
// NotCompiled, device queries report none, so a CPU-only build always links and runs.
#include "src/core/context_impl.hpp"
#include "src/core/graph_cache.hpp"
#include "src/core/blocked_kernels.hpp"
#include "src/core/dense_kernels.hpp"
#include "src/core/update_kernels.hpp"
#include "src/stubs/not_compiled.hpp"

namespace gpuqr {

bool cuda_compiled() noexcept { return false; }

namespace detail {

void cuda_init_context(ContextImpl&, int, CudaStream) { not_compiled("Context::cuda"); }
void cuda_release_context(ContextImpl&) noexcept {}
void cuda_synchronize(const ContextImpl&) { not_compiled("Context::synchronize"); }
void* cuda_workspace(ContextImpl&, std::size_t, int) { not_compiled("cuda workspace"); }
std::string cuda_describe(const ContextImpl&) { return "cuda (not compiled)"; }
std::vector<DeviceInfo> cuda_device_list() noexcept { return {}; }
ContextImpl& cuda_aux_lane(ContextImpl&) { not_compiled("cuda aux lane"); }
void cuda_lane_signal(ContextImpl&, ContextImpl&) { not_compiled("cuda lane signal"); }
bool cuda_graph_run(ContextImpl&, GraphKey, bool, const std::function<void()>&) { return false; }
std::string cuda_unavailable_reason_impl() {
  return "this gpuqr was built without the CUDA backend";
}
void* cuda_malloc(std::size_t, int) { not_compiled("device allocation"); }
std::int64_t cuda_free_memory(int) { not_compiled("cuda_free_memory"); }
void cuda_free(void*, int) noexcept {}
void cuda_copy_2d(void*, std::int64_t, bool, const void*, std::int64_t, bool, std::int64_t,
                  std::int64_t) {
  not_compiled("device copy");
}
}  // namespace detail

namespace kernels::cuda {

template <class T>
void geqrf(detail::ContextImpl&, MatrixView<T>, VectorView<T>) {
  detail::not_compiled("cuda geqrf");
}
template <class T>
void orgqr(detail::ContextImpl&, std::int64_t, MatrixView<T>, VectorView<const T>) {
  detail::not_compiled("cuda orgqr");
}
template <class T>
void ormqr(detail::ContextImpl&, Side, Op, MatrixView<const T>, VectorView<const T>,
           MatrixView<T>) {
  detail::not_compiled("cuda ormqr");
}
template <class T>
void trsm(detail::ContextImpl&, Uplo, Op, Diag, MatrixView<const T>, MatrixView<T>) {
  detail::not_compiled("cuda trsm");
}
template <class T>
std::vector<double> abs_diagonal(detail::ContextImpl&, MatrixView<const T>) {
  detail::not_compiled("cuda abs_diagonal");
}
template <class T>
std::vector<double> column_norms(detail::ContextImpl&, MatrixView<const T>) {
  detail::not_compiled("cuda column_norms");
}
template <class T>
std::vector<double> diagonal_and_norms(detail::ContextImpl&, MatrixView<const T>,
                                       MatrixView<const T>) {
  detail::not_compiled("cuda diagonal_and_norms");
}
template <class T>
bool all_finite(detail::ContextImpl&, MatrixView<const T>) {
  detail::not_compiled("cuda all_finite");
}
template <class T>
void copy(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>) {
  detail::not_compiled("cuda copy");
}
template <class T>
void copy_upper(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>) {
  detail::not_compiled("cuda copy_upper");
}
template <class T>
void fill(detail::ContextImpl&, MatrixView<T>, T) {
  detail::not_compiled("cuda fill");
}

void panel_qr_single_block(int) {}
void panel_qr_ah_mode(int) {}
void panel_qr_ah_step_mode(int) {}
bool panel_qr_ah_step_wanted(int, int, std::int64_t, std::int64_t, std::int64_t) { return false; }
void panel_qr_ah_warp_mode(int) {}
void panel_qr_ah_t_beside_mode(int) {}
void panel_qr_ah_read_mode(int) {}
void panel_qr_ah_trace(bool) {}
void panel_qr_ah_trace_clocks(long long* out) {
  for (int i = 0; i < 8; ++i) out[i] = 0;
}
void larfb_trmm_mode(int) {}
void larfb_tf32_mode(int) {}
void larfb_small_mode(int) {}
std::int64_t larfb_small_count() { return 0; }
std::int64_t larfb_tf32_count() { return 0; }
bool larfb_tf32_built() { return false; }
void larft_merge_mode(int) {}
std::int64_t knob_signature() { return 0; }
template <class T>
bool panel_qr_ah_only(detail::ContextImpl&, MatrixView<T>, VectorView<T>, MatrixView<T>,
                      MatrixView<T>) {
  detail::not_compiled("cuda panel_qr_ah_only");
}
template bool panel_qr_ah_only<float>(detail::ContextImpl&, MatrixView<float>,
                                      VectorView<float>, MatrixView<float>, MatrixView<float>);
template bool panel_qr_ah_only<double>(detail::ContextImpl&, MatrixView<double>,
                                       VectorView<double>, MatrixView<double>,
                                       MatrixView<double>);
std::int64_t max_panel_width(detail::ContextImpl&, int, std::int64_t) {
  detail::not_compiled("cuda max_panel_width");
}
bool panel_waits_for_host(detail::ContextImpl&, int, std::int64_t, std::int64_t) {
  detail::not_compiled("cuda panel_waits_for_host");
}
template <class T>
void panel_qr(detail::ContextImpl&, MatrixView<T>, VectorView<T>, MatrixView<T>,
              MatrixView<T>) {
  detail::not_compiled("cuda panel_qr");
}
template <class T>
void panel_qr_update(detail::ContextImpl&, MatrixView<T>, std::int64_t, VectorView<T>,
                     MatrixView<T>, MatrixView<T>, MatrixView<T>) {
  detail::not_compiled("cuda panel_qr_update");
}
template <class T>
void form_v(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>) {
  detail::not_compiled("cuda form_v");
}
template <class T>
void larft(detail::ContextImpl&, MatrixView<const T>, VectorView<const T>, MatrixView<T>,
           MatrixView<T>) {
  detail::not_compiled("cuda larft");
}
template <class T>
void larft_known_diagonal(detail::ContextImpl&, MatrixView<const T>, VectorView<const T>,
                          MatrixView<T>, MatrixView<T>, std::int64_t) {
  detail::not_compiled("cuda larft_known_diagonal");
}
template <class T>
void larfb(detail::ContextImpl&, Side, Op, MatrixView<const T>, MatrixView<const T>,
           MatrixView<T>, MatrixView<T>) {
  detail::not_compiled("cuda larfb");
}
template <class T>
void laset(detail::ContextImpl&, T, T, MatrixView<T>) {
  detail::not_compiled("cuda laset");
}

template <class T>
void tpmqrt(detail::ContextImpl&, Side, Op, MatrixView<const T>, MatrixView<const T>,
            MatrixView<T>, MatrixView<T>, MatrixView<T>) {
  detail::not_compiled("cuda tpmqrt");
}
template <class T>
void add_rows_chained(detail::ContextImpl&, MatrixView<T>, MatrixView<T>, MatrixView<T>,
                      MatrixView<T>, VectorView<T>, VectorView<int>) {
  detail::not_compiled("cuda add_rows_chained");
}
template <class T>
void gather_rows(detail::ContextImpl&, MatrixView<const T>, VectorView<const std::int64_t>,
                 std::int64_t, bool, MatrixView<T>) {
  detail::not_compiled("cuda gather_rows");
}
template <class T>
void move_lines(detail::ContextImpl&, MatrixView<T>, VectorView<const std::int64_t>,
                VectorView<const std::int64_t>, bool) {
  detail::not_compiled("cuda move_lines");
}
template <class T>
void transpose(detail::ContextImpl&, MatrixView<const T>, MatrixView<T>) {
  detail::not_compiled("cuda transpose");
}
template <class T>
void deletion_rotations(detail::ContextImpl&, MatrixView<T>, MatrixView<T>, MatrixView<T>) {
  detail::not_compiled("cuda deletion_rotations");
}
template <class T>
void apply_deletion_rotations(detail::ContextImpl&, MatrixView<const T>, MatrixView<const T>,
                              MatrixView<T>, MatrixView<T>, bool, bool) {
  detail::not_compiled("cuda apply_deletion_rotations");
}
template <class T>
void accumulate_deletion_rotations(detail::ContextImpl&, MatrixView<const T>, MatrixView<const T>,
                                   std::int64_t, MatrixView<T>) {
  detail::not_compiled("cuda accumulate_deletion_rotations");
}

template <class T>
void multiply_add(detail::ContextImpl&, Op, Op, T, MatrixView<const T>, MatrixView<const T>,
                  MatrixView<T>) {
  detail::not_compiled("cuda multiply_add");
}

GPUQR_INSTANTIATE_UPDATE_KERNELS(float)
GPUQR_INSTANTIATE_UPDATE_KERNELS(double)
GPUQR_INSTANTIATE_BLOCKED_KERNELS(float)
GPUQR_INSTANTIATE_BLOCKED_KERNELS(double)
GPUQR_INSTANTIATE_DENSE_KERNELS(float)
GPUQR_INSTANTIATE_DENSE_KERNELS(double)

}  // namespace kernels::cuda
}  // namespace gpuqr
