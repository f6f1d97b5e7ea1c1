#!/usr/bin/env bash
# Installs the build into a fresh prefix and builds consumer/ against it
# with find_package(nnc) + nnc_add_model, with Ninja and with Makefiles:
# the app (typed header) and the driver run; editing a file the model
# imports (directly, or found along IMPORT_DIRS) regenerates the sources
# on the next build; a build with nothing changed does not run nnc.  With
# a third argument (the MPI launcher and its flags), also the model built
# with nnc_add_model(... MPI): it links nnc::runtime_mpi, and app_mpi runs
# on two processes.
set -euo pipefail
build=$1 src=$2 mpirun=${3:-}
mpi_args=()
[ -z "$mpirun" ] || mpi_args=(-DCONSUMER_MPI=ON)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in nncConfig.cmake nncConfigVersion.cmake nncTargets.cmake nncFunctions.cmake; do
  test -f "$tmp/prefix/lib/cmake/nnc/$f" || { echo "missing lib/cmake/nnc/$f"; exit 1; }
done
test -f "$tmp/prefix/share/man/man1/nnc.1"
cp -r "$src/tests/cmake_package/consumer" "$tmp/src"
gen_c=nnc/tiny/tiny_mlp_net.c

stamp() { stat -c %y "$1"; }
fail() { echo "FAIL ($gen): $*"; exit 1; }

for gen in Ninja "Unix Makefiles"; do
  b="$tmp/build-${gen// /_}"
  cmake -S "$tmp/src" -B "$b" -G "$gen" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    "${mpi_args[@]}" >/dev/null
  cmake --build "$b" >"$b.log" 2>&1 || { cat "$b.log"; fail "first build"; }
  # no CMAKE_BUILD_TYPE here: nnc_add_model still compiles the generated C
  # at -O3 (its last -O), not unoptimized
  cmd=$(grep '"command": .*tiny_mlp_net\.c' "$b/compile_commands.json" | head -1)
  [ "$(echo "$cmd" | grep -o -- ' -O[^ ]*' | tail -1)" = " -O3" ] || fail "generated C not at -O3: $cmd"
  grep -q "nnc model/tiny.nn" "$b.log" || fail "first build did not run nnc"
  "$b/app"
  # (the output is taken whole, then searched: under pipefail, `info |
  # grep -q` failed whenever grep quit at its match before info had written
  # the rest, and info or mpirun died of SIGPIPE)
  info=$("$b/tiny_driver" info) || fail "driver info exited $?"
  grep -q "mid.fc.weight \[6, 6\]" <<<"$info" || fail "driver info"
  if [ -n "$mpirun" ]; then
    grep -q "nnc::runtime_mpi" "$b/tiny_mpi_links.txt" || fail "the MPI model links $(cat "$b/tiny_mpi_links.txt")"
    out=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 $mpirun -np 2 "$b/app_mpi") ||
      { echo "$out"; fail "app_mpi under mpirun"; }
    [ "$(echo "$out" | grep -c 'of 2: ok=1')" = 2 ] || { echo "$out"; fail "app_mpi did not run on 2 processes"; }
    echo "$out"
    info=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 $mpirun -np 1 "$b/tiny_mpi_driver" info) ||
      fail "MPI driver info exited $?"
    grep -q "mid.fc.weight \[6, 6\]" <<<"$info" || fail "MPI driver info"
  fi

  # nothing changed: nnc does not run
  t0=$(stamp "$b/$gen_c")
  cmake --build "$b" >"$b.log" 2>&1
  if grep -q "nnc model/tiny.nn" "$b.log" || [ "$(stamp "$b/$gen_c")" != "$t0" ]; then
    cat "$b.log"; fail "a no-op build reran nnc"
  fi

  # an edit to each imported file regenerates
  for dep in model/lib/block.nn shared/act.nn; do
    t0=$(stamp "$b/$gen_c")
    sleep 0.01
    echo "// edited" >>"$tmp/src/$dep"
    cmake --build "$b" >"$b.log" 2>&1 || { cat "$b.log"; fail "build after editing $dep"; }
    if ! grep -q "nnc model/tiny.nn" "$b.log" || [ "$(stamp "$b/$gen_c")" = "$t0" ]; then
      cat "$b.log"; fail "editing $dep did not regenerate the sources"
    fi
    "$b/app" >/dev/null
  done

  # and then it is quiet again
  cmake --build "$b" >"$b.log" 2>&1
  if grep -q "nnc model/tiny.nn" "$b.log"; then cat "$b.log"; fail "a no-op build reran nnc"; fi
  echo "$gen: ok"
done
echo "cmake package test passed"
