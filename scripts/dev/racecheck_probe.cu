// Session 34 probe: does compute-sanitizer racecheck follow a named barrier that only part of
// the block meets (bar.sync 1, 128)? The pattern of the AH b x b kernel's mode 10, reduced:
// warps 0-3 run 32 steps, the step's owner (warp k mod 4) publishes a row into a ring of three
// slots, the others read the previous step's slot, one named barrier per step; then two block
// barriers around a flag written by thread 0, which every thread reads. Variants:
//   0: warps 4-7 only meet the block barriers;
//   1: warps 4-7 also run the steps ("shadows") reading a private array, without barriers;
//   2: the control: warps 0-3 run the steps, every warp meets __syncthreads after each step;
//   3: variant 1 twice in one launch (two calls, as the b x b kernel's callers make);
//   4: variant 3 with the shadows meeting each other at a second named barrier each step;
//   5: variant 3 with the shadows meeting each other 32 times at a second named barrier after
//      their steps (as many barriers as the four warps, without binding the shadows to them).
// No hazard exists in any variant: a report is the tool's.
// Build: nvcc -arch=sm_90 -lineinfo -O3 racecheck_probe.cu -o racecheck_probe
// Run: compute-sanitizer --tool racecheck racecheck_probe V (V = 0..5; none: all)
#include <cstdio>

__global__ void steps(double* out, int variant) {
  __shared__ double ring[3][32];
  __shared__ double priv[3][32];
  __shared__ int good;
  const int tid = threadIdx.x, w = (tid >> 5) & 3, j = tid & 31;
  const bool active = tid < 128;
  const bool runs = active || variant == 1 || variant >= 3;
  const bool shadow = !active && runs;
  const bool per_step_block_barrier = variant == 2;
  double(*r)[32] = active ? ring : priv;
  if (tid < 96) priv[tid / 32][j] = 0.5 * j;
  __syncthreads();
  double acc = 1.0 + j;
  const int calls = variant >= 3 ? 2 : 1;
  for (int call = 0; call < calls; ++call) {
#pragma unroll
    for (int k = 0; k < 32; ++k) {
      if (runs) {
        if (w == k % 4) {
          const double v = acc * 0.5 + k;
          if (active) ring[k % 3][j] = v;
          acc += v;
        } else if (k > 0) {
          acc += 0.25 * r[(k - 1) % 3][(j + 1) & 31];
        }
      }
      if (per_step_block_barrier) {
        __syncthreads();
      } else if (active) {
        asm volatile("bar.sync 1, 128;" ::: "memory");
      } else if (variant == 4) {
        asm volatile("bar.sync 2, 128;" ::: "memory");
      }
    }
    if (variant == 5 && shadow) {
      for (int k = 0; k < 32; ++k) asm volatile("bar.sync 2, 128;" ::: "memory");
    }
    __syncthreads();
    if (tid == 0) good = acc > 0 ? 1 : 0;
    __syncthreads();
    acc += good;
  }
  out[tid] = acc;
}

#include <cstdlib>

int main(int argc, char** argv) {
  const int only = argc > 1 ? std::atoi(argv[1]) : -1;  // one variant, or all
  double* out = nullptr;
  cudaMalloc(&out, 256 * sizeof(double));
  for (int variant = 0; variant < 6; ++variant) {
    if (only >= 0 && variant != only) continue;
    steps<<<1, 256>>>(out, variant);
    const cudaError_t e = cudaDeviceSynchronize();
    double h[2] = {0, 0};
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    std::printf("variant %d: %s out[0] %g\n", variant, cudaGetErrorString(e), h[0]);
  }
  cudaFree(out);
  return 0;
}
