# Finds SuiteSparse's COLAMD and AMD (with SuiteSparse_config), used by gpuqr's sparse analysis
# for its colamd/amd column orderings, and defines the INTERFACE target gpuqr_suitesparse.
# Optional: without it gpuqr builds and those orderings throw gpuqr::NotCompiled.
# Debian/Ubuntu: apt-get install libsuitesparse-dev.
if(TARGET gpuqr_suitesparse)
  set(GpuqrSuiteSparse_FOUND TRUE)
  return()
endif()
find_path(GPUQR_COLAMD_INCLUDE_DIR colamd.h PATH_SUFFIXES suitesparse)
find_path(GPUQR_AMD_INCLUDE_DIR amd.h PATH_SUFFIXES suitesparse)
find_library(GPUQR_COLAMD_LIBRARY NAMES colamd)
find_library(GPUQR_AMD_LIBRARY NAMES amd)
find_library(GPUQR_SUITESPARSECONFIG_LIBRARY NAMES suitesparseconfig)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(GpuqrSuiteSparse
  REQUIRED_VARS GPUQR_COLAMD_LIBRARY GPUQR_AMD_LIBRARY GPUQR_COLAMD_INCLUDE_DIR
                GPUQR_AMD_INCLUDE_DIR)
if(GpuqrSuiteSparse_FOUND)
  add_library(gpuqr_suitesparse INTERFACE IMPORTED GLOBAL)
  set(_libs ${GPUQR_COLAMD_LIBRARY} ${GPUQR_AMD_LIBRARY})
  if(GPUQR_SUITESPARSECONFIG_LIBRARY)
    list(APPEND _libs ${GPUQR_SUITESPARSECONFIG_LIBRARY})
  endif()
  set_target_properties(gpuqr_suitesparse PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${GPUQR_COLAMD_INCLUDE_DIR};${GPUQR_AMD_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${_libs}")
endif()
