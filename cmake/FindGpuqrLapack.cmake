# Finds OpenBLAS (BLAS, CBLAS, with openblas_get_config) and LAPACKE, and defines the
# INTERFACE target gpuqr_lapack. Debian/Ubuntu: apt-get install libopenblas-dev liblapacke-dev.
if(TARGET gpuqr_lapack)
  set(GpuqrLapack_FOUND TRUE)
  return()
endif()
find_path(GPUQR_OPENBLAS_INCLUDE_DIR cblas.h
  PATH_SUFFIXES openblas-pthread openblas openblas-openmp x86_64-linux-gnu/openblas-pthread
  HINTS /usr/include/x86_64-linux-gnu/openblas-pthread /usr/include/openblas)
find_library(GPUQR_OPENBLAS_LIBRARY NAMES openblas)
find_path(GPUQR_LAPACKE_INCLUDE_DIR lapacke.h PATH_SUFFIXES lapacke openblas-pthread)
find_library(GPUQR_LAPACKE_LIBRARY NAMES lapacke)
find_library(GPUQR_LAPACK_LIBRARY NAMES lapack)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(GpuqrLapack
  REQUIRED_VARS GPUQR_OPENBLAS_LIBRARY GPUQR_OPENBLAS_INCLUDE_DIR GPUQR_LAPACKE_LIBRARY
                GPUQR_LAPACKE_INCLUDE_DIR)
if(GpuqrLapack_FOUND)
  add_library(gpuqr_lapack INTERFACE IMPORTED GLOBAL)
  set(_libs ${GPUQR_LAPACKE_LIBRARY})
  if(GPUQR_LAPACK_LIBRARY)
    list(APPEND _libs ${GPUQR_LAPACK_LIBRARY})
  endif()
  list(APPEND _libs ${GPUQR_OPENBLAS_LIBRARY})
  set_target_properties(gpuqr_lapack PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${GPUQR_OPENBLAS_INCLUDE_DIR};${GPUQR_LAPACKE_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${_libs}")
endif()
