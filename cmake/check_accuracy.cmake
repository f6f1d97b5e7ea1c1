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
string(REGEX MATCH "accuracy=([0-9.eE+-]+)" _ "${out}")
set(acc ${CMAKE_MATCH_1})
if(acc LESS MIN_ACCURACY)
  message(FATAL_ERROR "test accuracy ${acc} is below ${MIN_ACCURACY}")
endif()
message("test accuracy ${acc} >= ${MIN_ACCURACY}")
