# Finds CUTLASS's headers (header-only, https://github.com/NVIDIA/cutlass), used by the CUDA
# backend's FP32 GEMMs on the TF32 tensor cores with the 3xTF32 split (src/cuda/larfb_tf32.cu).
# Optional: without it those products stay on cuBLAS's SGEMM.
# Looks in GPUQR_CUTLASS_DIR, $CUTLASS_DIR, the prefix path, and where scripts/setup.sh puts
# the headers of the nvidia-cutlass wheel (~/.cache/gpuqr/cutlass). Sets GpuqrCutlass_FOUND
# and GpuqrCutlass_INCLUDE_DIR (the folder holding cutlass/ and cute/).
find_path(GpuqrCutlass_INCLUDE_DIR NAMES cutlass/cutlass.h
  HINTS ${GPUQR_CUTLASS_DIR} $ENV{CUTLASS_DIR} "$ENV{HOME}/.cache/gpuqr/cutlass"
  PATH_SUFFIXES include)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(GpuqrCutlass REQUIRED_VARS GpuqrCutlass_INCLUDE_DIR)
