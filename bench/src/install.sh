# shellcheck shell=bash
# bench/src/install.sh — sourced by bench/run.sh and bench/dist.sh: nnc
# built and installed as README.md tells a user, into a prefix under the
# benchmark's build directory.  Expects $repo and $build.

# install_nnc NAME C_FLAGS: nnc and its runtimes (nnc_runtime, and
# nnc_runtime_mpi when CMake finds MPI), CMake's default build type for
# nnc (no CMAKE_BUILD_TYPE given: RelWithDebInfo, the runtime at -O3), as
# README.md's commands build it, with C_FLAGS added (none for the portable
# build), installed into $build/prefix-NAME.  (Release was measured until
# the default build was found to run the convolutions 3x slower.)
# NNC_WERROR=OFF: a warning of this compiler at -O3 must not stop a benchmark.
install_nnc() {
    local name=$1 flags=$2 dir="$build/cmake-$1" log="$build/cmake-$1.log"
    echo "== building and installing nnc ($name: CMake default build type${flags:+, $flags}) into $build/prefix-$name" >&2
    {
        cmake -S "$repo" -B "$dir" -G Ninja -DBUILD_TESTING=OFF \
            -DNNC_WERROR=OFF -DCMAKE_C_FLAGS="$flags" -DCMAKE_INSTALL_PREFIX="$build/prefix-$name" &&
            cmake --build "$dir" &&
            cmake --install "$dir"
    } >"$log" 2>&1 || { tail -40 "$log" >&2; exit 1; }
}

# pc_dir NAME: the directory of nnc.pc under a prefix (lib/ or lib64/ or
# lib/<triplet>/)
pc_dir() { dirname "$(find "$build/prefix-$1" -name nnc.pc | head -1)"; }
