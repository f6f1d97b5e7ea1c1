# Golden test of one --dump stage: runs nnc from the source root (stable
# paths) and compares stdout with tests/dumps/<name>.<stage>; with the
# environment variable NNC_UPDATE_GOLDEN=1 it rewrites the golden file.
execute_process(COMMAND ${NNC} ${MODEL} --dump=${STAGE} WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nnc --dump=${STAGE} failed (${rc}): ${err}")
endif()
if("$ENV{NNC_UPDATE_GOLDEN}" STREQUAL "1")
  file(WRITE ${GOLDEN} "${out}")
  return()
endif()
file(READ ${GOLDEN} want)
if(NOT out STREQUAL want)
  file(WRITE ${GOLDEN}.actual "${out}")
  message(FATAL_ERROR "--dump=${STAGE} differs from ${GOLDEN}; see ${GOLDEN}.actual (NNC_UPDATE_GOLDEN=1 rewrites it)")
endif()
