# nnc_add_model's prefix rule (cmake/nncFunctions.cmake) names the files
# as nnc does by default: for each model name, nnc without --prefix must
# write exactly <_nnc_snake_case(name)>.h.
#   cmake -DNNC=<nnc> -DSRC=<repo> -DOUT=<dir> -P prefix_rule.cmake
include(${SRC}/cmake/nncFunctions.cmake)
file(REMOVE_RECURSE ${OUT})
foreach(name Digits TinyMLPNet MLP Net2D ResNet18Block Gpt2Small Lenet5 A myModel XMLHttpRequest Mlp_Head)
  file(WRITE ${OUT}/${name}.nn "model ${name} {\n    input x: f32[N, 2]\n    fc: Dense(units: 2)\n}\n")
  execute_process(COMMAND ${NNC} ${OUT}/${name}.nn -o ${OUT}/${name} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nnc failed on model ${name}")
  endif()
  _nnc_model_prefix(p ${OUT}/${name}.nn ${name} "")
  file(GLOB written RELATIVE ${OUT}/${name} ${OUT}/${name}/*.h)
  if(NOT written STREQUAL "${p}.h")
    message(FATAL_ERROR "model ${name}: nnc wrote ${written}, nnc_add_model expects ${p}.h")
  endif()
  message("${name} -> ${p}")
endforeach()
# the rule itself (docs/decisions.md): a capital starts a word after a
# lower-case letter or a digit, and ends a run of capitals before a
# lower-case letter
foreach(pair "Gpt2Small:gpt2_small" "TinyMLPNet:tiny_mlp_net" "ResNet18Block:res_net18_block" "Lenet5:lenet5" "MLP:mlp")
  string(REPLACE ":" ";" pair "${pair}")
  list(GET pair 0 name)
  list(GET pair 1 want)
  _nnc_snake_case(p "${name}")
  if(NOT p STREQUAL want)
    message(FATAL_ERROR "${name} -> ${p}, expected ${want}")
  endif()
endforeach()
# without MODEL or PREFIX: the file name, made a C identifier
_nnc_model_prefix(p /x/my-net.v2.nn "" "")
if(NOT p STREQUAL "my_net_v2")
  message(FATAL_ERROR "my-net.v2.nn -> ${p}, expected my_net_v2")
endif()
_nnc_model_prefix(p /x/whatever.nn Digits forced)
if(NOT p STREQUAL "forced")
  message(FATAL_ERROR "PREFIX must win, got ${p}")
endif()
