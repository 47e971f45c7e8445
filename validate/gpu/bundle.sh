#!/usr/bin/env bash
# Packs a GPU build for a machine that has a GPU, CUDA and NCCL but none of
# the Debian packages (this workplace's device machine: no package registry
# there): stripped ddpsim-real and ddpsim, the shared libraries they need
# from Debian (fmt, yaml-cpp, OpenSSL, OpenMPI and its plugins, relocated
# with OPAL_PREFIX), and libcudart as a last resort. CUDA's cuBLAS and NCCL
# are taken from the target machine. Usage, from the repository root after
# scripts/build.sh (with nvcc found):
#   validate/gpu/bundle.sh build .gpu
# then on the GPU machine: validate/gpu/device_w1.sh .gpu OUT_DIR
set -euo pipefail
build=${1:?usage: bundle.sh BUILD_DIR OUT_DIR} out=${2:?usage: bundle.sh BUILD_DIR OUT_DIR}
rm -rf "$out" && mkdir -p "$out/lib" "$out/cudart" "$out/mpi/share" "$out/mpi/lib/x86_64-linux-gnu/openmpi/lib"
strip -o "$out/ddpsim-real" "$build/real_backend/ddpsim-real"
strip -o "$out/ddpsim" "$build/cli/ddpsim"
for l in libfmt.so.9 libyaml-cpp.so.0.7 libcrypto.so.3 libmpi_cxx.so.40 libmpi.so.40 libopen-pal.so.40 libopen-rte.so.40 \
         libhwloc.so.15 libevent_core-2.1.so.7 libevent_pthreads-2.1.so.7 libudev.so.1 libz.so.1 libnuma.so.1 libpmix.so.2; do
  cp -L "/lib/x86_64-linux-gnu/$l" "$out/lib/"
done
cp -rL /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3 "$out/mpi/lib/x86_64-linux-gnu/openmpi/lib/"
cp -r /usr/share/openmpi "$out/mpi/share/"
cp -L "$(ldd "$build/real_backend/ddpsim-real" | awk '/libcudart/ {print $3}')" "$out/cudart/"
strip "$out"/lib/*.so* "$out"/mpi/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/*.so
du -sh "$out"
