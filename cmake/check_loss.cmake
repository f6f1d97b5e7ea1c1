# Evaluates a trained model on held-out data and fails when its loss is
# above MAX_LOSS (or not a number).
#   cmake -DDRIVER=<model driver> -DWEIGHTS=<w.safetensors> -DINPUTS=<x.npy>
#         -DLABELS=<y.npy> -DMAX_LOSS=<v> -P cmake/check_loss.cmake
execute_process(
  COMMAND ${DRIVER} eval --weights ${WEIGHTS} --inputs ${INPUTS} --labels ${LABELS}
  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "eval failed (exit ${rc})")
endif()
string(REGEX MATCH "(^|\n)loss=([0-9.eE+-]+)" _ "${out}")
set(loss ${CMAKE_MATCH_2})
# NaN or a missing value is neither <= nor >: it fails too
if(NOT loss LESS_EQUAL MAX_LOSS)
  message(FATAL_ERROR "held-out loss '${loss}' is not <= ${MAX_LOSS}")
endif()
message("held-out loss ${loss} <= ${MAX_LOSS}")
