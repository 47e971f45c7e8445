# Every dependency is a Debian 12 package (scripts/setup.sh installs them).
find_package(yaml-cpp REQUIRED)
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(doctest REQUIRED)
find_package(Eigen3 3.4 REQUIRED NO_MODULE)
find_package(OpenSSL 3 REQUIRED COMPONENTS Crypto)  # SHA-256: checkpoint checksums, provenance
if(DDPSIM_BENCH)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(STATUS "Google Benchmark not found: bench/ is skipped")
    set(DDPSIM_BENCH OFF)
  endif()
endif()

# Optional back-ends, used by later layers; detected now, never required.
find_package(MPI QUIET COMPONENTS CXX)
find_package(CUDAToolkit QUIET)
find_library(NCCL_LIBRARY nccl HINTS ${CUDAToolkit_LIBRARY_DIR} /usr/local/cuda/lib64)
find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  pkg_check_modules(SIMGRID QUIET simgrid)
endif()
message(STATUS "ddpsim optional back-ends: MPI=${MPI_CXX_FOUND} CUDA=${CUDAToolkit_FOUND} "
               "NCCL=${NCCL_LIBRARY} SimGrid=${SIMGRID_FOUND}")

# One helper for unit-test executables beside the code: doctest, one ctest entry each.
function(ddpsim_unit_test name)
  add_executable(${name} ${ARGN} ${PROJECT_SOURCE_DIR}/tests/doctest_main.cpp)
  target_link_libraries(${name} PRIVATE doctest::doctest)
  add_test(NAME ${name} COMMAND ${name})
endfunction()
