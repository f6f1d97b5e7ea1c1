# Evaluates a trained model on the test split and fails below MIN_ACCURACY.
# INPUTS names the test inputs in DATA (default x_test.npy).
if(NOT INPUTS)
  set(INPUTS x_test.npy)
endif()
execute_process(
  COMMAND ${DRIVER} eval --weights ${WEIGHTS} --inputs ${DATA}/${INPUTS} --labels ${DATA}/y_test.npy
  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "eval failed (exit ${rc})")
endif()
string(REGEX MATCH "(^|\n)accuracy=([0-9.eE+-]+)" _ "${out}")
set(acc ${CMAKE_MATCH_2})
# a missing value or NaN is neither >= nor <: it fails too
if(NOT acc GREATER_EQUAL MIN_ACCURACY)
  message(FATAL_ERROR "test accuracy '${acc}' is not >= ${MIN_ACCURACY}")
endif()
message("test accuracy ${acc} >= ${MIN_ACCURACY}")
