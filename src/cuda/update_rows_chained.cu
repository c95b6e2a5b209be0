// CUDA backend of add_rows_chained (src/core/update_kernels.hpp): the whole reduction of p
// added rows into R, and into d, in ONE launch, by chunks of add_rows_chunk_rows(p) rows (p
// itself up to 8, 8 up to 16, 16 above).
//
// A chunk's update is n reflectors of length p + 1, H_i = I - tau_i [e_i; v_i] [e_i; v_i]^T
// acting on row i of R and on the chunk's rows of U: cheap arithmetic (2 p n^2 flops) but a
// chain of n dependent steps. The kernel is built around that chain: everything else runs
// beside it.
//
// Shape: the augmented columns [R d; U e] (n + k of them) are cut into tiles of 32; one warp
// (one thread block) owns a tile of one chunk and lane c owns column c: its entries of the
// chunk's rows of U in registers (padded with zeros to P, a power of two chosen per launch,
// so that no loop is longer than p needs) and the 32 rows of R it is updating in shared
// memory, a column per lane. Tiles are handed out by a ticket counter, by antidiagonals of
// (chunk, tile), so a warp only ever waits for warps that already run (no deadlock whatever
// the scheduler does).
// Warp (c, t) applies, in order, the reflectors of every tile s < t of its chunk as tile s
// publishes them (V_s in U's columns, tau_s, then a flag; with one chunk, V_s and tau_s in
// the scratch after the scalars, each value its own flag: see unpublished), then factors its
// own 32 columns and publishes them. The next step's rows of R are copied in (cp.async) while
// the current step runs. The flags are polled with relaxed loads, then read once with acquire
// semantics, and V is read with __ldcg (L2), so no stale L1 line is ever seen.
//
// Chunks: chunk c's reflector i needs row i of R as chunk c - 1 left it, and nothing else of
// the chunks before, so the chunks run as a wavefront: warp (c, t) reads a block of 32 rows
// of R once warp (c - 1, t) has stored it (a count of blocks stored per warp, the second set
// of flags), and the last chunk finishes about one tile step per chunk after the first. With
// one chunk (p <= 8) nobody waits for R's rows: they are written after the flag, off the
// chain. 9 to 16 rows go as two chunks of 8, not one of 16: the second runs about one tile
// behind the first, and a tile's column steps are shorter with 8 rows a lane than with 16
// (session 14, run 9: FP64 8000 x 3000 + 16 rows, update 1.34 -> 1.23 ms).
//
// Reflectors are applied two at a time (but in the chunked FP32 kernel of 16 rows): the
// second sees u - v_i w_i, so its product v_(i+1) . u' = v_(i+1) . u - c w_i with the pair's
// coupling c = v_(i+1) . v_i, which the producer publishes with tau.
//
// A column step: every lane sums its own squares; lane j's sum and alpha reach the other
// lanes by shuffles, its p entries through shared memory (where they stay, unscaled, as V's
// column j), every lane computes the same tau and scale (no divergent larfg: one reciprocal
// square root and one reciprocal), and the lanes right of j update their column with
// v_j . u = scale (u_j . u), the dot product formed while the square root runs (a lane whose
// u_j . u leaves the safe range forms v_j . u from v_j instead). Where lane j's squares
// would over- or underflow, a warp-uniform branch takes LAPACK's scaled two-pass norm
// (max |x|, then sum (x / max)^2). The column loop is not unrolled: each warp runs it once,
// and unrolled it was too long for the instruction cache (ncu, session 12: 46% of its stall
// samples waiting for instructions at p = 16).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "src/core/update_kernels.hpp"
#include "src/cuda/chained_tiles.cuh"
#include "src/cuda/check.hpp"
#include "src/cuda/safe_range.cuh"

namespace gpuqr::kernels::cuda {
namespace {

using cuda_detail::DeviceGuard;

constexpr int kTile = 32;

template <class T>
struct SmallArgs {
  T* r;
  std::int64_t ldr;
  T* u;
  std::int64_t ldu;
  T* d;
  std::int64_t ldd;
  T* e;
  std::int64_t lde;
  T* tau;      // chunk c's scalars at tau + c n; one chunk: V published after them
  int* flags;  // kernels::add_rows_chained_flags: ticket, then published(c, s), then done(c, t)
  std::int64_t n;
  std::int64_t cols;   // n + k
  std::int64_t tiles;  // ceil(cols / 32): tiles per chunk
  int p;               // rows of U (all chunks)
  int chunk_rows;      // add_rows_chunk_rows(p): P at most
  int chunks;          // ceil(p / chunk_rows)
  int publish;         // one chunk: 0 flags, 1 fill and poll V and tau, 2 fill, tau first
  int l2hint;          // chunked: R's rows stored with an L2 evict-last policy
};

/// One chunk: V and tau are published without flags. The launch fills tau's scalars and the
/// V scratch after them with bytes 0x7F (1.4e306 in double, 3.4e38 in float), a value no
/// entry of V (|v| <= 1) or tau (0, or in [1, 2]) can take; each is stored once, by a strong
/// store, so a strong load that reads anything else has read the published value, and the
/// consumer needs neither the producer's fence nor a flag's round trip before reading V.
__device__ __forceinline__ bool unpublished(double x) {
  return __double_as_longlong(x) == 0x7F7F7F7F7F7F7F7FLL;
}
__device__ __forceinline__ bool unpublished(float x) { return __float_as_int(x) == 0x7F7F7F7F; }

/// Column c of the augmented top [R d] / bottom [U e].
template <class T>
__device__ __forceinline__ T* top_col(const SmallArgs<T>& a, std::int64_t c) {
  return c < a.n ? a.r + c * a.ldr : a.d + (c - a.n) * a.ldd;
}
template <class T>
__device__ __forceinline__ T* bottom_col(const SmallArgs<T>& a, std::int64_t c) {
  return c < a.n ? a.u + c * a.ldu : a.e + (c - a.n) * a.lde;
}

/// Rows row0 .. row0 + 31 (those < n) of the tile's columns c0 .. c0 + 31 (those < cols)
/// into rows[i][j] (zeros elsewhere), copied asynchronously (cp.async: no registers held while
/// they arrive). Coalesced: lane i copies row row0 + i of every column, so each copy reads one
/// column's 32 contiguous entries (the chunked kernel, where every warp copies blocks of R
/// throughout), column j from cols[j] (the tile's columns of R or d, null past `cols`: a
/// shared table, one load per column, where forming the address took some 30 instructions);
/// otherwise lane j copies its own column (`top`, null past cols), measured faster where only
/// the chain's tiles copy (session 13, run 3: p = 1, 0.92 against 1.14 ms).
/// `dummy` is any 8-byte aligned global address, the source of the zero-filled copies.
template <bool Coalesced, class T>
__device__ __forceinline__ void fetch_rows(T (*rows)[kTile + 1], const SmallArgs<T>& a,
                                           T* const* cols, const T* top, const T* dummy,
                                           std::int64_t row0) {
  const int lane = threadIdx.x;
  const bool row_ok = row0 + lane < a.n;
#pragma unroll 8
  for (int j = 0; j < kTile; ++j) {
    bool ok;
    const T* src;
    unsigned dst;
    if constexpr (Coalesced) {
      const T* const col = cols[j];
      ok = row_ok && col != nullptr;
      src = ok ? col + row0 + lane : dummy;
      dst = static_cast<unsigned>(__cvta_generic_to_shared(&rows[lane][j]));
    } else {
      ok = top && row0 + j < a.n;
      src = ok ? top + row0 + j : dummy;
      dst = static_cast<unsigned>(__cvta_generic_to_shared(&rows[j][lane]));
    }
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src),
                 "n"(sizeof(T)), "r"(ok ? static_cast<int>(sizeof(T)) : 0)
                 : "memory");
  }
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
__device__ __forceinline__ void rows_arrived() {
  asm volatile("cp.async.wait_group 0;\n" ::: "memory");
  __syncwarp();
}
__device__ __forceinline__ void store_evict_last(double* p, double v, std::uint64_t policy) {
  asm volatile("st.global.L2::cache_hint.f64 [%0], %1, %2;" ::"l"(__cvta_generic_to_global(p)),
               "d"(v), "l"(policy)
               : "memory");
}
__device__ __forceinline__ void store_evict_last(float* p, float v, std::uint64_t policy) {
  asm volatile("st.global.L2::cache_hint.f32 [%0], %1, %2;" ::"l"(__cvta_generic_to_global(p)),
               "f"(v), "l"(policy)
               : "memory");
}

/// The inverse of fetch_rows (the rows that exist).
template <bool Coalesced, class T>
__device__ __forceinline__ void store_rows(const SmallArgs<T>& a, T* const* cols, T* top,
                                           std::int64_t row0, const T (*rows)[kTile + 1]) {
  __syncwarp();
  const int lane = threadIdx.x;
  if constexpr (Coalesced) {
    if (row0 + lane >= a.n) return;
    if (a.l2hint) {
      // Kept in L2 ahead of other lines: the next chunk's warp reads these rows soon after.
      std::uint64_t policy;
      asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
#pragma unroll 8
      for (int j = 0; j < kTile; ++j) {
        T* const col = cols[j];
        if (col != nullptr) store_evict_last(col + row0 + lane, rows[lane][j], policy);
      }
      return;
    }
#pragma unroll 8
    for (int j = 0; j < kTile; ++j) {
      T* const col = cols[j];
      if (col != nullptr) col[row0 + lane] = rows[lane][j];
    }
  } else {
#pragma unroll 8
    for (int i = 0; i < kTile; ++i)
      if (top && row0 + i < a.n) top[row0 + i] = rows[i][lane];
  }
}

/// init + sum of x[r] * y[r] in min(P, 4) independent chains.
template <class T, int P>
__device__ __forceinline__ T dot(T init, const T (&x)[P], const T (&y)[P]) {
  constexpr int K = P < 4 ? P : 4;
  T part[K];
  part[0] = fma(x[0], y[0], init);
#pragma unroll
  for (int r = 1; r < K; ++r) part[r] = x[r] * y[r];
#pragma unroll
  for (int r = K; r < P; ++r) part[r % K] = fma(x[r], y[r], part[r % K]);
  if constexpr (K == 1) return part[0];
  else if constexpr (K == 2) return part[0] + part[1];
  else return (part[0] + part[1]) + (part[2] + part[3]);
}

/// 1 / sqrt(x) for x in SafeRange (normal, positive): the hardware estimate and one
/// refinement (cubic in FP64, Newton in FP32), about 1 ulp; 1 / x for x in [1, 2] likewise.
/// No range checks: they sit on the column chain, and the callers' ranges make them moot.
__device__ __forceinline__ double rsqrt_in_range(double x) {
  double y;
  asm("rsqrt.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  const double e = fma(-x, y * y, 1.0);
  return fma(fma(0.375, e, 0.5), y * e, y);
}
__device__ __forceinline__ float rsqrt_in_range(float x) {
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return fmaf(0.5f * fmaf(-x, y * y, 1.0f), y, y);
}
__device__ __forceinline__ double reciprocal_1_2(double x) {
  double y;
  asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
  double e = fma(-x, y, 1.0);
  y = fma(fma(e, e, e), y, y);
  e = fma(-x, y, 1.0);
  return fma(e, y, y);
}
__device__ __forceinline__ float reciprocal_1_2(float x) {
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return fmaf(fmaf(-x, y, 1.0f), y, y);
}

/// Chunked: p > 8 (P = 8 up to 16 rows, 16 above); otherwise one chunk and no hand-off of R's
/// rows. The chunked kernel of 16-row chunks keeps one buffer of R's rows (the next step's are
/// copied after this one's are stored) and at most 128 registers in FP64 (80 in FP32), so that
/// 16 warps fit an SM (10 with two buffers; FP32 24, was 19): with many chunks the warps' own
/// work, not the chain, bounds it (session 13, runs 6 and 7; 96 registers in FP64 spilled and
/// lost, run 8).
template <class T, int P, bool Chunked>
__global__ void __launch_bounds__(kTile, Chunked ? (sizeof(T) == 8 ? 16 : 24) : 1)
    add_rows_chained_kernel(SmallArgs<T> a) {
  // The reflectors being applied (v_i in row i), then, while this tile factors, its columns'
  // entries, unscaled (su): one array, as the phases do not overlap.
  __shared__ __align__(16) T sv[kTile][P];
  T (*const su)[P] = sv;
  __shared__ T stau[kTile];
  __shared__ T scpl[kTile];  // odd i: v_i . v_(i-1), the coupling of the pair (i - 1, i)
  // Two buffers of R's rows (the next step's copied while this one runs) but in the chunked
  // kernel of 16-row chunks, where one lets 16 warps (FP64) fit an SM.
  constexpr int kBuffers = Chunked && P == 16 ? 1 : 2;
  __shared__ T srows[kBuffers][kTile][kTile + 1];  // R's rows being updated: [i][lane]
  __shared__ T* scols[kTile];  // chunked: column c0 + j of [R d] (null past cols), for the copies
  const int lane = threadIdx.x;
  // Tickets run by antidiagonals of (chunk, tile), chunk by chunk within one: (c, t) waits for
  // (c, s < t) and (c - 1, t), every one of them on an earlier antidiagonal, so a warp only
  // waits for warps that got their ticket before it. (Chunk-major order measured 1.3x the
  // cuSOLVER refactor at p = 1500, n = 7000: the first chunks' warps of the last tiles held
  // the SMs while they waited for the wavefront, and the later chunks could not start.)
  int ticket = 0, chunk = 0;
  if (lane == 0) {
    ticket = atomicAdd(&a.flags[0], 1);
    if constexpr (Chunked) {
      const int tiles = static_cast<int>(a.tiles), last = a.chunks - 1;
      for (int d = 0;; ++d) {
        const int first = max(0, d - tiles + 1), count = min(d, last) - first + 1;
        if (ticket < count) {
          chunk = first + ticket;
          ticket = d - chunk;
          break;
        }
        ticket -= count;
      }
    }
  }
  if constexpr (Chunked) chunk = __shfl_sync(0xffffffffu, chunk, 0);
  const std::int64_t t = __shfl_sync(0xffffffffu, ticket, 0);
  const std::int64_t c0 = t * kTile, c = c0 + lane;
  const bool valid = c < a.cols;
  const int row0 = chunk * a.chunk_rows;
  const int p = min(a.p - row0, a.chunk_rows);  // this chunk's rows
  const std::int64_t n = a.n, factor_tiles = (n + kTile - 1) / kTile;
  T* const bottom = valid ? bottom_col(a, c) + row0 : nullptr;
  T* const top = valid ? top_col(a, c) : nullptr;
  if constexpr (Chunked) {
    scols[lane] = top;
    __syncwarp();
  }
  const T* const dummy = a.u;
  const T* const vcols = a.u + row0;  // this chunk's V, in U's rows row0..
  T* const taus = a.tau + chunk * n;
  T* const cpls = a.tau + (a.chunks + chunk) * n;  // odd c: v_c . v_(c-1)
  T* const vpub = a.tau + 2 * n;  // one chunk: V published here, column c at c p
  int* const published = a.flags + 1 + chunk * factor_tiles;
  int* const done_base = a.flags + 1 + a.chunks * factor_tiles;
  // Row block b of this tile's columns of R (and d) is final for the chunk before once that
  // chunk's warp of this tile has counted b + 1 blocks stored.
  const int* const before = Chunked && chunk > 0 ? done_base + (chunk - 1) * a.tiles + t : nullptr;
  int* const mine = Chunked && chunk + 1 < a.chunks ? done_base + chunk * a.tiles + t : nullptr;
  auto fetch = [&](T (*rows)[kTile + 1], std::int64_t row) {
    if (before) wait_at_least(before, static_cast<int>(row / kTile) + 1);
    if constexpr (kBuffers == 1) __syncwarp();  // the one buffer's reads are done
    fetch_rows<Chunked>(rows, a, scols, top, dummy, row);
  };
  auto stored = [&](std::int64_t row) {  // rows row.. of R stored: the next chunk may read them
    if (!mine) return;
    release_fence();
    __syncwarp();
    if (lane == 0) atomicExch(mine, static_cast<int>(row / kTile) + 1);
  };

  T u[P];
#pragma unroll
  for (int r = 0; r < P; ++r) u[r] = (valid && r < p) ? bottom[r] : T(0);

  // The reflectors of the tiles before this one, in order. With one chunk, each step's rows
  // of R are copied in while the step before runs (chunked: after it); after the last
  // producer, this tile's own rows c0...
  const std::int64_t producers = t < factor_tiles ? t : factor_tiles;
  fetch(srows[0], producers > 0 ? 0 : c0);
  // V's block of a tile is copied by columns: lane l reads entry l % P of column l / P (plus
  // 32 / P per step), so each load reads whole columns of V.
  constexpr int kColsPerLoad = kTile / P;
  const int vr = lane % P, vc = lane / P;
  for (std::int64_t s = 0; s < producers; ++s) {
    const std::int64_t i0 = s * kTile;
    T (*const rows)[kTile + 1] = srows[s % kBuffers];
    T vv[P], tv, cv;
    const bool has_cpl = (lane & 1) && i0 + lane < n;
    if (Chunked || a.publish == 0) {
      wait_published(published + s);
#pragma unroll
      for (int q = 0; q < P; ++q) {
        const std::int64_t col = i0 + q * kColsPerLoad + vc;
        vv[q] = (vr < p && col < n) ? __ldcg(vcols + vr + col * a.ldu) : T(0);
      }
      tv = i0 + lane < n ? __ldcg(taus + i0 + lane) : T(0);
      cv = has_cpl ? __ldcg(cpls + i0 + lane) : T(0);
    } else {
      // Read until no entry is the fill: every one is then the producer's (see unpublished).
      // publish 2: the scalars alone until all have come (one load a lane per poll), then V.
      const bool has_tau = i0 + lane < n;
      if (a.publish == 2) {
        do {
          tv = has_tau ? load_strong(taus + i0 + lane) : T(0);
        } while (!__all_sync(0xffffffffu, !(has_tau && unpublished(tv))));
      }
      for (;;) {
        bool ready = true;
#pragma unroll
        for (int q = 0; q < P; ++q) {
          const std::int64_t col = i0 + q * kColsPerLoad + vc;
          const bool need = vr < p && col < n;
          vv[q] = need ? load_strong(vpub + vr + col * p) : T(0);
          ready &= !(need && unpublished(vv[q]));
        }
        if (a.publish == 1) {
          tv = has_tau ? load_strong(taus + i0 + lane) : T(0);
          ready &= !(has_tau && unpublished(tv));
        }
        cv = has_cpl ? load_strong(cpls + i0 + lane) : T(0);
        ready &= !(has_cpl && unpublished(cv));
        if (__all_sync(0xffffffffu, ready)) break;
      }
    }
    __syncwarp();  // the previous step's reads of sv and stau are done
#pragma unroll
    for (int q = 0; q < P; ++q) sv[q * kColsPerLoad + vc][vr] = vv[q];
    stau[lane] = tv;
    scpl[lane] = cv;
    rows_arrived();  // also orders the sv, stau and scpl stores before the reads below
    // The next step's rows: copied now with two buffers (one chunk), after this step with one
    // (chunked: waiting here for the chunk before would hold this step up anyway).
    const bool more = s + 1 < producers || t < factor_tiles;
    const std::int64_t next = s + 1 < producers ? i0 + kTile : c0;
    // With two buffers the chunk before may not have stored the next rows yet: then they are
    // copied after this step, not waited for here.
    bool ahead = false;
    if (kBuffers > 1 && more) {
      if (before) {
        int ready = 0;
        if (lane == 0) ready = load_relaxed(before) >= static_cast<int>(next / kTile) + 1;
        ahead = __shfl_sync(0xffffffffu, ready, 0) != 0;
        if (ahead) {
          if (lane == 0) release_fence();  // after the relaxed load that saw the flag: acquire
          __syncwarp();                    // and the other lanes' copies after it
          fetch_rows<Chunked>(srows[(s + 1) % kBuffers], a, scols, top, dummy, next);
        }
      } else {
        fetch(srows[(s + 1) % kBuffers], next);
        ahead = true;
      }
    }
    // Two at a time: reflector i + 1 sees u - v_i w_i, so v_(i+1) . u' = v_(i+1) . u - c w_i
    // with c = v_(i+1) . v_i (published with tau): both dot products at once, and half the
    // chain per reflector. Measured (session 14, run 5) 1-4% faster but in the chunked FP32
    // kernel (2% slower: its 80 registers), which applies them one at a time.
    constexpr bool kPairs = !(Chunked && P == 16 && sizeof(T) == 4);
    if constexpr (kPairs) {
#pragma unroll 4
      for (int i = 0; i < kTile; i += 2) {
        T v1[P], v2[P];
#pragma unroll
        for (int r = 0; r < P; ++r) v1[r] = sv[i][r];
#pragma unroll
        for (int r = 0; r < P; ++r) v2[r] = sv[i + 1][r];
        const T d1 = dot(rows[i][lane], v1, u), d2 = dot(rows[i + 1][lane], v2, u);
        const T w1 = stau[i] * d1;
        const T w2 = stau[i + 1] * fma(-scpl[i + 1], w1, d2);
        rows[i][lane] -= w1;
        rows[i + 1][lane] -= w2;
#pragma unroll
        for (int r = 0; r < P; ++r) u[r] = fma(-v2[r], w2, fma(-v1[r], w1, u[r]));
      }
    } else {
#pragma unroll 8
      for (int i = 0; i < kTile; ++i) {
        T v[P];
#pragma unroll
        for (int r = 0; r < P; ++r) v[r] = sv[i][r];
        const T w = stau[i] * dot(rows[i][lane], v, u);
        rows[i][lane] -= w;
#pragma unroll
        for (int r = 0; r < P; ++r) u[r] -= v[r] * w;
      }
    }
    store_rows<Chunked>(a, scols, top, i0, rows);
    stored(i0);
    if (more && !ahead) fetch(srows[(s + 1) % kBuffers], next);
  }

  T (*const rows)[kTile + 1] = srows[producers % kBuffers];
  if (t < factor_tiles) {
    // This tile's own reflectors: column j's against row c0 + j of R. Reflector j changes
    // row j of R alone, so only u carries the chain from one column to the next; the loop is
    // not unrolled (the warp runs it once: unrolled, its code would not stay in the
    // instruction cache).
    rows_arrived();
    T my_tau = 0, my_scale = 0;
    const int jend = static_cast<int>(n - c0 < kTile ? n - c0 : kTile);
    // Row j of R (and alpha, its diagonal entry) is read one column ahead: reflectors before
    // j do not change it.
    T rj = rows[0][lane];
    T alpha = __shfl_sync(0xffffffffu, rj, 0);
#pragma unroll 1
    for (int j = 0; j < jend; ++j) {
      const T ss = dot(T(0), u, u);
      const T ssj = __shfl_sync(0xffffffffu, ss, j);
      // Lane j's entries reach the others through shared memory (half the instructions of
      // shuffles), where they also stay, unscaled, as V's column j. (Shuffles for p <= 4
      // measured the same, session 12 runs 5 and 6.)
      if (lane == j) {
#pragma unroll
        for (int r = 0; r < P; ++r) su[j][r] = u[r];
      }
      __syncwarp();
      T uj[P];
#pragma unroll
      for (int r = 0; r < P; ++r) uj[r] = su[j][r];
      const int jn = j + 1 < jend ? j + 1 : j;
      const T rj_next = rows[jn][lane];
      const T alpha_next = __shfl_sync(0xffffffffu, rj_next, jn);
      const T g = dot(T(0), uj, u);  // u_j . u, beside the square root: v . u = scale g
      const T total = alpha * alpha + ssj;
      T tau, scale, beta, st;  // st = scale tau = -1 / beta (0 where tau is)
      if (ssj >= SafeRange<T>::small && ssj <= SafeRange<T>::big && total <= SafeRange<T>::big) {
        // beta = -sign(alpha) norm, tau = (beta - alpha) / beta = 1 + |alpha| / norm (in
        // [1, 2]), scale = 1 / (alpha - beta) = sign(alpha) / (norm tau): one reciprocal
        // square root and one reciprocal on the chain.
        const T r = rsqrt_in_range(total);
        const T sr = alpha >= 0 ? r : -r;
        beta = -(total * sr);
        tau = fma(abs(alpha), r, T(1));
        scale = sr * reciprocal_1_2(tau);
        st = sr;
      } else {  // warp-uniform: every lane holds lane j's alpha and entries
        T amax = 0;
#pragma unroll
        for (int r = 0; r < P; ++r) amax = max(amax, abs(uj[r]));
        tau = 0, scale = 0, beta = alpha, st = 0;
        if (amax > 0) {
          const T inv = T(1) / amax;
          T sc = 0;
#pragma unroll
          for (int r = 0; r < P; ++r) sc += (uj[r] * inv) * (uj[r] * inv);
          const T norm = hypot(alpha, amax * sqrt(sc));
          beta = alpha >= 0 ? -norm : norm;
          tau = (beta - alpha) / beta;
          scale = T(1) / (alpha - beta);
          st = T(-1) / beta;
        }
      }
      // rj + v_j . u. Where u_j . u left the range (over- or underflow, or exactly zero:
      // nothing to tell them apart), the lane forms v_j . u from v_j = scale u_j instead
      // (|v_j| <= 1).
      T t1 = fma(scale, g, rj);
      if (lane > j && valid && !(abs(g) >= SafeRange<T>::small && abs(g) <= SafeRange<T>::big)) {
        T vu = 0;
#pragma unroll
        for (int r = 0; r < P; ++r) vu = fma(uj[r] * scale, u[r], vu);
        t1 = rj + vu;
      }
      // The columns right of j (d's included) apply H_j: w = tau t1 leaves row j, and u -=
      // v_j w = u_j (scale w) = u_j (st t1): st, not scale times w, keeps the chain from one
      // column to the next two operations shorter. Lane j keeps beta and tau; its u is not
      // used again (V's column is in su).
      const T w = lane > j ? tau * t1 : T(0);
      const T sw = lane > j ? st * t1 : T(0);
      rows[j][lane] = lane == j ? beta : rj - w;
      my_tau = lane == j ? tau : my_tau;
      my_scale = lane == j ? scale : my_scale;
#pragma unroll
      for (int r = 0; r < P; ++r) u[r] = fma(-uj[r], sw, u[r]);
      rj = rj_next;
      alpha = alpha_next;
    }
    // v_c, and for odd c the pair's coupling v_c . v_(c-1) (lane c - 1's column, from su).
    const T prev_scale = __shfl_up_sync(0xffffffffu, my_scale, 1);
    T cpl = 0;
    if (c < n) {
#pragma unroll
      for (int r = 0; r < P; ++r) u[r] = su[lane][r] * my_scale;
      if (lane & 1) {
#pragma unroll
        for (int r = 0; r < P; ++r) cpl = fma(su[lane - 1][r] * prev_scale, u[r], cpl);
      }
      if (Chunked || a.publish == 0) {
        taus[c] = my_tau;
        if (lane & 1) cpls[c] = cpl;
      } else {  // published at once (see unpublished); U gets V below, as the chunked kernel's
#pragma unroll
        for (int r = 0; r < P; ++r)
          if (r < p) store_strong(vpub + c * p + r, u[r]);
        store_strong(taus + c, my_tau);
        if (lane & 1) store_strong(cpls + c, cpl);
      }
    }
  }

  if (valid) {
#pragma unroll
    for (int r = 0; r < P; ++r)
      if (r < p) bottom[r] = u[r];
  }
  if (t < factor_tiles) {
    if (Chunked || a.publish == 0) {
      release_fence();  // V (U's columns) and tau reach L2 before the flag does
      __syncwarp();
      if (lane == 0) atomicExch(published + t, 1);
    }
    store_rows<Chunked>(a, scols, top, c0, rows);  // this tile's rows of R (and d): the next chunk's only
    stored(c0);
  }
}

/// GPUQR_ADD_PUBLISH=0, 1 or 2: how one chunk hands V and tau on (SmallArgs::publish). A
/// measurement knob, read per call; default: 2 up to kAddRowsFillRows rows, 0 above (session
/// 14, run 4: fill and tau first 5% faster at p = 1, flags 2% faster at p = 16, the same at
/// p = 4).
int publish_mode(std::int64_t p) {
  const char* knob = std::getenv("GPUQR_ADD_PUBLISH");
  const int mode = knob != nullptr && *knob != '\0' ? std::atoi(knob) : -1;
  return mode >= 0 && mode <= 2 ? mode : (p <= kAddRowsFillRows ? 2 : 0);
}


/// GPUQR_ADD_L2HINT=0 or 1: the chunked kernel stores R's rows with an L2 evict-last policy
/// (default 1: session 14, runs 12 and 14 on an H100, FP64 8000 x 7000 + 1500 rows 17.8-17.9
/// -> 16.9 ms, the other 1500-row cases 4-6% faster). A measurement knob, read per call.
int l2_hint() {
  const char* knob = std::getenv("GPUQR_ADD_L2HINT");
  return knob != nullptr && *knob != '\0' && std::atoi(knob) == 0 ? 0 : 1;
}

template <class T, int P, bool Chunked = false>
void launch(const SmallArgs<T>& a, std::int64_t tiles, cudaStream_t stream) {
  add_rows_chained_kernel<T, P, Chunked><<<static_cast<unsigned>(tiles), kTile, 0, stream>>>(a);
}

}  // namespace

template <class T>
void add_rows_chained(detail::ContextImpl& ctx, MatrixView<T> r, MatrixView<T> u,
                      MatrixView<T> d, MatrixView<T> e, VectorView<T> tau,
                      VectorView<int> flags) {
  const std::int64_t n = r.cols(), p = u.rows(), k = d.cols();
  if (n == 0 || p == 0) return;
  const std::int64_t chunks = add_rows_chunks(p);
  if (flags.size() < add_rows_chained_flags(n, k, p) || tau.size() < add_rows_chained_scalars(n, p))
    GPUQR_THROW(InvalidArgument, "add_rows_chained: scratch too small for p = " +
                                     std::to_string(p) + ", n = " + std::to_string(n));
  DeviceGuard guard(ctx.device);
  const std::int64_t cols = n + k, tiles = (cols + kTile - 1) / kTile;
  GPUQR_CUDA_CHECK(cudaMemsetAsync(
      flags.data(), 0, static_cast<std::size_t>(add_rows_chained_flags(n, k, p)) * sizeof(int),
      ctx.stream));
  const int publish = chunks == 1 ? publish_mode(p) : 0;
  if (chunks == 1 && publish != 0)  // the fill of the published tau and V (see unpublished)
    GPUQR_CUDA_CHECK(cudaMemsetAsync(
        tau.data(), 0x7F, static_cast<std::size_t>(add_rows_chained_scalars(n, p)) * sizeof(T),
        ctx.stream));
  SmallArgs<T> a{r.data(), r.ld(),     u.data(),     u.ld(), k > 0 ? d.data() : nullptr,
                 k > 0 ? d.ld() : 1,   k > 0 ? e.data() : nullptr,
                 k > 0 ? e.ld() : 1,   tau.data(),   flags.data(),
                 n,                    cols,         tiles,
                 static_cast<int>(p),  static_cast<int>(add_rows_chunk_rows(p)),
                 static_cast<int>(chunks), publish, l2_hint()};
  static_assert(kAddRowsChunk == 16 && add_rows_chunk_rows(16) == 8,
                "the launches below cover chunks of 8 rows up to p = 16, of 16 above");
  const std::int64_t blocks = chunks * tiles;
  if (p == 1)
    launch<T, 1>(a, blocks, ctx.stream);
  else if (p == 2)
    launch<T, 2>(a, blocks, ctx.stream);
  else if (p <= 4)
    launch<T, 4>(a, blocks, ctx.stream);
  else if (p <= 8)
    launch<T, 8>(a, blocks, ctx.stream);
  else if (p <= 16)
    launch<T, 8, true>(a, blocks, ctx.stream);  // chunks of 8 rows
  else
    launch<T, 16, true>(a, blocks, ctx.stream);
  GPUQR_CUDA_CHECK_LAUNCH(ctx.stream);
}

template void add_rows_chained<float>(detail::ContextImpl&, MatrixView<float>, MatrixView<float>,
                                    MatrixView<float>, MatrixView<float>, VectorView<float>,
                                    VectorView<int>);
template void add_rows_chained<double>(detail::ContextImpl&, MatrixView<double>,
                                     MatrixView<double>, MatrixView<double>, MatrixView<double>,
                                     VectorView<double>, VectorView<int>);

}  // namespace gpuqr::kernels::cuda
