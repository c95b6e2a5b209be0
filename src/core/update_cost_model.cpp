// The update cost model: leaf prices (CostPricer), the predictions that walk the same loops as
// the drivers, and the in-memory and on-disk caches of the calibrated rates.
#include "src/core/update_cost_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "gpuqr/error.hpp"

#ifndef GPUQR_VERSION_STRING
#define GPUQR_VERSION_STRING "unknown"
#endif

namespace gpuqr {
namespace detail {

double CostPricer::gemm_rate(std::int64_t d) const {
  // Measured at the smallest dimension 64 (thin) and >= 512 (large); log-linear between,
  // proportional below 64 (the tile is mostly idle).
  if (d <= 0) return r_.gemm_thin;
  if (d < 64) return r_.gemm_thin * double(d) / 64.0;
  if (d >= 512) return r_.gemm_large;
  const double f = std::log2(double(d) / 64.0) / 3.0;
  return r_.gemm_thin + f * (r_.gemm_large - r_.gemm_thin);
}

void CostPricer::gemm(std::int64_t mm, std::int64_t nn, std::int64_t kk) {
  if (mm <= 0 || nn <= 0) return;
  const double flops = 2.0 * double(mm) * double(nn) * double(kk);
  const double bytes = double(es_) * (double(mm) * kk + double(kk) * nn + 2.0 * double(mm) * nn);
  seconds_ += std::max(flops / gemm_rate(std::min({mm, nn, kk})), bytes / r_.bandwidth) +
              r_.launch_seconds;
  ++launches_;
}

void CostPricer::copy(std::int64_t rows, std::int64_t cols) {
  if (rows <= 0 || cols <= 0) return;
  seconds_ += 2.0 * double(es_) * double(rows) * double(cols) / r_.bandwidth + r_.launch_seconds;
  ++launches_;
}

void CostPricer::panel(std::int64_t h, std::int64_t b) {
  seconds_ += double(b) * (r_.panel_column_seconds + r_.panel_row_column_seconds * double(h)) +
              r_.launch_seconds;
  ++launches_;
}

void CostPricer::larfb(std::int64_t h, std::int64_t k, std::int64_t nc) {
  if (nc <= 0 || k <= 0) return;
  gemm(k, nc, h);
  gemm(k, nc, k);  // the TRMM, priced as a GEMM of its size (it does half the flops, slower)
  gemm(h, nc, k);
}

void CostPricer::step(std::int64_t h, std::int64_t jb, std::int64_t rest_cols,
                      std::int64_t nrhs, std::int64_t mq) {
  copy(h, jb);
  for (std::int64_t i = 0; i < jb; i += 32) {
    const std::int64_t ib = std::min<std::int64_t>(32, jb - i);
    if (i > 0) copy(i, ib);
    panel(h - i, ib);
    larfb(h - i, ib, jb - i - ib);
  }
  if (jb > 32) {
    gemm(jb, jb, h);  // the Gram of larft_known_diagonal, then its merges
    for (std::int64_t width = 32; width < jb; width *= 2) launches_ += 2, seconds_ += 2 * r_.launch_seconds;
  }
  copy(h, jb);
  larfb(h, jb, rest_cols);
  larfb(h, jb, nrhs);
  larfb(h, jb, mq);
}

void CostPricer::reduce_band(std::int64_t rows, std::int64_t cols, std::int64_t bw,
                             std::int64_t nb, std::int64_t nrhs, std::int64_t mq) {
  for (std::int64_t j = 0; j < cols; j += nb) {
    const std::int64_t jb = std::min(nb, cols - j);
    step(std::min(jb + bw, rows - j), jb, cols - j - jb, nrhs, mq);
  }
}

void CostPricer::reduce_from_bottom(std::int64_t rows, std::int64_t p, std::int64_t rest,
                                    std::int64_t s, std::int64_t nb, std::int64_t nrhs,
                                    std::int64_t mq) {
  std::int64_t e = rows, a = std::max<std::int64_t>(0, rows - s - p);
  for (;;) {
    for (std::int64_t c = 0; c < p; c += nb) {
      const std::int64_t cb = std::min(nb, p - c);
      step(e - a - c, cb, (p - c - cb) + std::max<std::int64_t>(0, rest - a), nrhs, mq);
    }
    if (a == 0) break;
    e = a + p;
    a = std::max<std::int64_t>(0, a - s);
  }
}

void CostPricer::geqrf(std::int64_t rows, std::int64_t cols, bool corrected) {
  const double before = seconds_;
  const std::int64_t kk = std::min(rows, cols);
  for (std::int64_t j = 0; j < kk; j += 256) {
    const std::int64_t jb = std::min<std::int64_t>(256, kk - j), h = rows - j;
    for (std::int64_t i = 0; i < jb; i += 32) {
      const std::int64_t ib = std::min<std::int64_t>(32, jb - i);
      panel(h - i, ib);
      larfb(h - i, ib, jb - i - ib);
    }
    gemm(jb, jb, h);
    larfb(h, jb, cols - j - jb);
  }
  if (corrected) seconds_ = before + (seconds_ - before) * r_.geqrf_efficiency;
}

void CostPricer::ormqr(std::int64_t h, std::int64_t k, std::int64_t nc) {
  for (std::int64_t j = 0; j < k; j += 256) {
    const std::int64_t jb = std::min<std::int64_t>(256, k - j);
    gemm(jb, jb, h - j);
    larfb(h - j, jb, nc);
  }
}

void CostPricer::trsm(std::int64_t n, std::int64_t nrhs) {
  if (nrhs <= 0) return;
  seconds_ += double(n) * double(n) * double(nrhs) / gemm_rate(std::min(n, nrhs)) +
              double(n) / 64.0 * r_.launch_seconds;
  ++launches_;
}

double modelled_geqrf_seconds(const UpdateRates& rates, bool cuda, std::int64_t es,
                              std::int64_t rows, std::int64_t cols) {
  CostPricer pricer(rates, cuda, es);
  pricer.geqrf(rows, cols, false);
  return pricer.seconds();
}

}  // namespace detail

const char* to_string(UpdateOp op) {
  switch (op) {
    case UpdateOp::add_rows: return "add_rows";
    case UpdateOp::remove_rows: return "remove_rows";
    case UpdateOp::add_columns: return "add_columns";
    case UpdateOp::remove_columns: return "remove_columns";
    case UpdateOp::rank_k: return "rank_k";
  }
  return "?";
}

UpdateCostModel::UpdateCostModel(std::string device, bool cuda, UpdateRates fp32,
                                 UpdateRates fp64)
    : device_(std::move(device)), cuda_(cuda), fp32_(fp32), fp64_(fp64) {}

UpdatePrediction UpdateCostModel::predict(UpdateOp op, std::int64_t m, std::int64_t n,
                                          std::int64_t p, std::int64_t k, bool fp64,
                                          UpdateQ q_mode, std::int64_t nrhs) const {
  GPUQR_CHECK_ARG(m >= 1 && n >= 1 && p >= 0 && k >= 0,
                  "UpdateCostModel::predict: m, n must be positive and p, k non-negative");
  const UpdateRates& rates = fp64 ? fp64_ : fp32_;
  const std::int64_t es = fp64 ? 8 : 4;
  const std::int64_t nb = cuda_ ? 128 : 64;
  const std::int64_t mq_full = q_mode == UpdateQ::none ? 0 : m;
  detail::CostPricer up(rates, cuda_, es);
  std::int64_t m2 = m, n2 = n;  // the size after the update
  switch (op) {
    case UpdateOp::remove_columns: {
      const std::int64_t t = std::max<std::int64_t>(0, n - k - p), b = std::min(nb, std::max<std::int64_t>(t, 1));
      up.copy(n, t);
      up.reduce_band(n - k, t, p, b, nrhs, mq_full);
      up.copy(n, t);
      n2 = n - p;
      break;
    }
    case UpdateOp::add_columns:
    case UpdateOp::rank_k: {
      const bool add = op == UpdateOp::add_columns;
      const std::int64_t kk = add ? std::min(k, n) : 0, nk = n - kk;
      const std::int64_t r2 = std::min(p, m - n), rows = add ? nk + p : n + r2;
      up.sync();
      up.copy(m, p);
      up.gemm(m, p, m);  // W = Q^T U
      up.geqrf(m - n, p);
      if (add) up.sync(), up.sync();  // the pivot check
      up.ormqr(m - n, r2, m);
      up.ormqr(m - n, r2, nrhs);
      up.copy(rows, p + nk);
      up.reduce_from_bottom(rows, p, add ? nk : n, nb, nb, nrhs, m);
      if (add) {
        if (nk > 0 && nb > 1) up.reduce_band(nk, nk, nb - 1, nb, nrhs, m);
        n2 = n + p;
      } else {
        up.gemm(p, n, p);
        up.reduce_band(rows, n, std::min(nb + p - 1, rows - 1), nb, nrhs, m);
      }
      up.copy(n2, n2);
      break;
    }
    case UpdateOp::add_rows: {
      const std::int64_t b = std::min(nb, n);
      const std::int64_t mq = q_mode == UpdateQ::none ? 0 : m + p;
      for (std::int64_t j = 0; j < n; j += b) {
        const std::int64_t jb = std::min(b, n - j);
        up.step(jb + p, jb, 0, 0, 0);
        up.larfb(p, jb, n - j - jb);
        up.larfb(p, jb, nrhs);
        up.larfb(p, jb, mq);
      }
      m2 = m + p;
      break;
    }
    case UpdateOp::remove_rows: {
      for (std::int64_t done = 0; done < p; done += 96) {
        const std::int64_t pb = std::min<std::int64_t>(96, p - done), mm = m - done;
        up.sync();
        up.geqrf(mm - n, pb);
        up.ormqr(mm - n, pb, mm);
        // The Givens sweeps: 6 flops per rotation and entry of Q, d and R, at a quarter of
        // the thin GEMM rate (one kernel, rotations in registers).
        up.add_seconds(6.0 * double(pb) * double(n) * double(mm + n) / (0.25 * rates.gemm_thin));
        up.copy(mm, 2 * pb);
      }
      m2 = m - p;
      break;
    }
  }
  UpdatePrediction out;
  out.update_seconds = up.seconds();
  out.launches = cuda_ ? up.launches() : 0;
  // The TUS baseline: factor the updated matrix, Q^T b, back substitution.
  detail::CostPricer ref(rates, cuda_, es);
  ref.copy(m2, n2);
  ref.geqrf(m2, n2);
  ref.ormqr(m2, n2, std::max<std::int64_t>(nrhs, 1));
  ref.trsm(n2, std::max<std::int64_t>(nrhs, 1));
  out.refactor_seconds = ref.seconds();
  // Rebuilding the object: A~ = Q R, b~ = Q d, geqrf, d, Q formed (orgqr: the reflectors on
  // the identity), plus the host round trips.
  detail::CostPricer reb(rates, cuda_, es);
  reb.gemm(m, n, n);
  reb.gemm(m, nrhs, m);
  reb.copy(m, n2);
  reb.geqrf(m2, n2);
  reb.ormqr(m2, n2, nrhs);
  if (q_mode != UpdateQ::none) reb.ormqr(m2, n2, q_mode == UpdateQ::full ? m2 : n2);
  reb.sync();
  reb.sync();
  out.rebuild_seconds = reb.seconds();
  return out;
}

std::string UpdateCostModel::key_of(const Context& ctx) {
  std::string name = "cpu";
  if (ctx.is_cuda()) {
    name = "cuda";
    for (const DeviceInfo& dev : cuda_devices())
      if (dev.index == ctx.device()) name = "cuda " + dev.name;
  }
  return name + " gpuqr " + GPUQR_VERSION_STRING;
}

std::string UpdateCostModel::cache_file(const std::string& device) {
  std::filesystem::path dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    dir = std::filesystem::path(xdg) / "gpuqr";
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    dir = std::filesystem::path(home) / ".cache" / "gpuqr";
  } else {
    return {};
  }
  std::string file = "update_rates-";
  for (char c : device) file += std::isalnum(static_cast<unsigned char>(c)) || c == '.' ? c : '_';
  return (dir / (file + ".txt")).string();
}

namespace {

constexpr const char* kHeader = "gpuqr-update-rates 1";

void write_rates(std::ostream& os, const char* name, const UpdateRates& r) {
  os << name << ' ' << r.gemm_large << ' ' << r.gemm_thin << ' ' << r.bandwidth << ' '
     << r.launch_seconds << ' ' << r.panel_column_seconds << ' ' << r.panel_row_column_seconds
     << ' ' << r.geqrf_efficiency << '\n';
}

bool read_rates(std::istream& is, const char* name, UpdateRates& r) {
  std::string tag;
  if (!(is >> tag) || tag != name) return false;
  double* fields[] = {&r.gemm_large, &r.gemm_thin, &r.bandwidth, &r.launch_seconds,
                      &r.panel_column_seconds, &r.panel_row_column_seconds, &r.geqrf_efficiency};
  for (double* f : fields)
    if (!(is >> *f) || !std::isfinite(*f) || *f < 0) return false;
  return r.gemm_large > 0 && r.gemm_thin > 0 && r.bandwidth > 0 && r.geqrf_efficiency > 0;
}

std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}
std::map<std::string, UpdateCostModel>& memory_cache() {
  static std::map<std::string, UpdateCostModel> cache;
  return cache;
}

bool disk_cache_enabled() {
  const char* off = std::getenv("GPUQR_NO_RATE_CACHE");
  return off == nullptr || *off == '\0' || std::string(off) == "0";
}

}  // namespace

void UpdateCostModel::save(const std::string& path) const {
  const std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream os(tmp);
    GPUQR_CHECK_ARG(bool(os), "UpdateCostModel::save: cannot write " + tmp);
    os.precision(17);
    os << kHeader << '\n' << device_ << '\n' << (cuda_ ? 1 : 0) << '\n';
    write_rates(os, "fp32", fp32_);
    write_rates(os, "fp64", fp64_);
  }
  std::filesystem::rename(tmp, p, ec);  // atomic: a reader sees the old file or the new one
  GPUQR_CHECK_ARG(!ec, "UpdateCostModel::save: cannot rename " + tmp + " to " + path);
}

bool UpdateCostModel::load(const std::string& path, const std::string& device,
                           UpdateCostModel& out) {
  std::ifstream is(path);
  if (!is) return false;
  std::string header, key;
  if (!std::getline(is, header) || header != kHeader) return false;
  if (!std::getline(is, key) || key != device) return false;
  int cuda = -1;
  UpdateRates fp32, fp64;
  if (!(is >> cuda) || (cuda != 0 && cuda != 1)) return false;
  if (!read_rates(is, "fp32", fp32) || !read_rates(is, "fp64", fp64)) return false;
  out = UpdateCostModel(key, cuda == 1, fp32, fp64);
  return true;
}

void UpdateCostModel::clear_memory_cache() {
  std::lock_guard<std::mutex> lock(cache_mutex());
  memory_cache().clear();
}

UpdateCostModel UpdateCostModel::calibrate(const Context& ctx) {
  const std::string key = key_of(ctx);
  {
    std::lock_guard<std::mutex> lock(cache_mutex());
    auto it = memory_cache().find(key);
    if (it != memory_cache().end()) return it->second;
  }
  const std::string file = disk_cache_enabled() ? cache_file(key) : std::string();
  UpdateCostModel model("", false, {}, {});
  if (file.empty() || !load(file, key, model)) {
    model = measure(ctx);
    if (!file.empty()) {
      try {
        model.save(file);
      } catch (const Error&) {
        // An unwritable cache directory costs a calibration per process, nothing else.
      }
    }
  }
  std::lock_guard<std::mutex> lock(cache_mutex());
  memory_cache().insert_or_assign(key, model);
  return model;
}

}  // namespace gpuqr
