# nnc_add_model(): compile a model with nnc at build time and build it as a
# static library (and, optionally, its command-line driver).
#
#   nnc_add_model(<target> <file.nn>
#                 [MODEL <Name>]         # compile only model <Name> of the file
#                 [PREFIX <p>]           # name of the files and C symbols
#                 [DEFINE <k=v>...]      # nnc -D k=v (model hparams)
#                 [IMPORT_DIRS <dir>...] # nnc -I dir (where imports are searched)
#                 [DRIVER <exe>]         # also build the driver executable <exe>
#                 [CHECK_NUMERICS]       # nnc --check-numerics: stop at NaN and inf
#                 [MPI])                 # link nnc::runtime_mpi: processes over MPI
#
# The generated <p>.h and <p>.c (and <p>_main.c with DRIVER) are written into
# the build tree, ${CMAKE_CURRENT_BINARY_DIR}/nnc/<target>/, when the build
# runs.  <target> is a STATIC library of <p>.c whose users see <p>.h
# (`#include "<p>.h"`) and link the nnc runtime (nnc::runtime: OpenBLAS and
# libm).  Editing the model file or any file it imports regenerates the
# sources on the next build: nnc writes a depfile that CMake reads (Ninja and
# Makefile generators).
#
# With MPI, the library and the driver link nnc::runtime_mpi (the runtime
# whose nnc_dist_* calls are MPI's; find_package(nnc COMPONENTS mpi))
# instead of nnc::runtime, so the driver runs under `mpirun -np P`.
#
# The prefix <p> must be known when CMake configures, so nnc_add_model always
# passes `--prefix <p>` to nnc.  It is, in this order:
#   1. PREFIX, when given;
#   2. else MODEL in snake_case, as nnc names it (TinyMLPNet -> tiny_mlp_net);
#   3. else the .nn file's name without its extension, every character
#      that may not be in a C identifier replaced by `_` (my-net.nn -> my_net).
# A file that declares several models needs MODEL (nnc refuses --prefix for
# several models at once).  nnc refuses a --prefix that C cannot take (a
# keyword or a C library name: model `Default` or `Exp`), saying which name
# would do; pass that as PREFIX (`default_`).
#
# The target's properties NNC_OUTPUT_DIR and NNC_PREFIX name the folder and
# the prefix.  The generated sources are compiled as C11 with
# -fno-math-errno -fno-trapping-math (gcc, clang), the flags nnc recommends.
#
# The file is used both by nnc's own build (where `nnc::nnc` and
# `nnc::runtime` alias the targets `nnc` and `nnc_runtime`, and
# `nnc::runtime_mpi` nnc_runtime_mpi) and by installed packages
# (`find_package(nnc)` imports the same names).

cmake_policy(PUSH)
cmake_policy(VERSION 3.20...3.31)

# nnc's rule for a model's default prefix: an upper-case letter after a
# lower-case one, or starting a word after capitals (MLPNet), begins a new
# `_`-separated word; everything is lower-cased.
function(_nnc_snake_case out name)
  string(LENGTH "${name}" n)
  set(s "")
  set(prev "")
  math(EXPR last "${n} - 1")
  foreach(i RANGE 0 ${last})
    string(SUBSTRING "${name}" ${i} 1 c)
    set(next "")
    math(EXPR j "${i} + 1")
    if(j LESS n)
      string(SUBSTRING "${name}" ${j} 1 next)
    endif()
    if(c MATCHES "^[A-Z]$")
      if(i GREATER 0 AND (prev MATCHES "^[a-z0-9]$" OR (next MATCHES "^[a-z]$" AND prev MATCHES "^[A-Z]$")))
        string(APPEND s "_")
      endif()
      string(TOLOWER "${c}" c)
      string(APPEND s "${c}")
    else()
      string(APPEND s "${c}")
    endif()
    string(SUBSTRING "${name}" ${i} 1 prev)
  endforeach()
  set(${out} "${s}" PARENT_SCOPE)
endfunction()

# The prefix nnc_add_model uses (see the rule above).
function(_nnc_model_prefix out file model prefix)
  if(prefix)
    set(p "${prefix}")
  elseif(model)
    _nnc_snake_case(p "${model}")
  else()
    get_filename_component(p "${file}" NAME_WLE)
    string(MAKE_C_IDENTIFIER "${p}" p)
  endif()
  set(${out} "${p}" PARENT_SCOPE)
endfunction()

function(nnc_add_model target file)
  cmake_parse_arguments(PARSE_ARGV 2 arg "CHECK_NUMERICS;MPI" "MODEL;PREFIX;DRIVER" "DEFINE;IMPORT_DIRS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nnc_add_model: unknown arguments: ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET nnc::nnc OR NOT TARGET nnc::runtime)
    message(FATAL_ERROR "nnc_add_model: the targets nnc::nnc and nnc::runtime are missing (find_package(nnc) first)")
  endif()
  set(runtime nnc::runtime)
  if(arg_MPI)
    if(NOT TARGET nnc::runtime_mpi)
      message(FATAL_ERROR "nnc_add_model(${target} ... MPI): the target nnc::runtime_mpi is missing (nnc built with NNC_MPI=OFF, or MPI not found; find_package(nnc COMPONENTS mpi) says why)")
    endif()
    set(runtime nnc::runtime_mpi)
  endif()
  if(NOT CMAKE_C_COMPILER_LOADED)
    message(FATAL_ERROR "nnc_add_model: the project must enable the C language")
  endif()

  get_filename_component(nn "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  _nnc_model_prefix(p "${nn}" "${arg_MODEL}" "${arg_PREFIX}")
  if(NOT p MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "nnc_add_model: prefix '${p}' is not a C identifier (give PREFIX)")
  endif()
  set(out "${CMAKE_CURRENT_BINARY_DIR}/nnc/${target}")
  set(outputs "${out}/${p}.h" "${out}/${p}.c")

  # absolute paths everywhere, so the depfile names absolute paths
  set(args "${nn}" -o "${out}" --prefix "${p}" --depfile "${out}/${p}.d")
  if(arg_MODEL)
    list(APPEND args --model "${arg_MODEL}")
  endif()
  foreach(d IN LISTS arg_DEFINE)
    list(APPEND args -D "${d}")
  endforeach()
  foreach(d IN LISTS arg_IMPORT_DIRS)
    get_filename_component(d "${d}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND args -I "${d}")
  endforeach()
  if(arg_CHECK_NUMERICS)
    list(APPEND args --check-numerics)
  endif()
  if(arg_DRIVER)
    list(APPEND args --emit=all)
    list(APPEND outputs "${out}/${p}_main.c")
  endif()

  file(RELATIVE_PATH shown "${CMAKE_SOURCE_DIR}" "${nn}")
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND nnc::nnc ${args}
    DEPENDS "${nn}" nnc::nnc
    DEPFILE "${out}/${p}.d"
    COMMENT "nnc ${shown} -> ${p}.h ${p}.c"
    VERBATIM)

  add_library(${target} STATIC "${out}/${p}.c" "${out}/${p}.h")
  target_include_directories(${target} PUBLIC "${out}")
  target_link_libraries(${target} PUBLIC ${runtime})
  set_target_properties(${target} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON
    NNC_OUTPUT_DIR "${out}" NNC_PREFIX "${p}")
  # generated-c.md's recommended flags, and -O3 in every build type but
  # Debug: a project with no CMAKE_BUILD_TYPE compiles without any -O, and
  # the generated loops are the training step (-O3 after the build type's
  # -O wins)
  set(flags "$<$<C_COMPILER_ID:GNU,Clang,AppleClang>:-fno-math-errno;-fno-trapping-math;$<$<NOT:$<CONFIG:Debug>>:-O3>>")
  target_compile_options(${target} PRIVATE "${flags}")

  if(arg_DRIVER)
    add_executable(${arg_DRIVER} "${out}/${p}_main.c")
    target_link_libraries(${arg_DRIVER} PRIVATE ${target})
    set_target_properties(${arg_DRIVER} PROPERTIES C_STANDARD 11 C_STANDARD_REQUIRED ON)
    target_compile_options(${arg_DRIVER} PRIVATE "${flags}")
  endif()
endfunction()

cmake_policy(POP)
