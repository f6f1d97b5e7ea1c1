# Golden test of one --dump stage: runs nnc from the source root (stable
# paths) and compares stdout with tests/dumps/<name>.<stage>; with the
# environment variable NNC_UPDATE_GOLDEN=1 it rewrites the golden file.
# STAGE is a --dump stage, or "summary" (--summary) or "dot" (--emit=dot,
# whose file is read back).
if(STAGE STREQUAL "summary")
  set(args --summary)
elseif(STAGE STREQUAL "dot")
  set(args --emit=dot -o ${OUTDIR})
else()
  set(args --dump=${STAGE})
endif()
execute_process(COMMAND ${NNC} ${MODEL} ${args} WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nnc --dump=${STAGE} failed (${rc}): ${err}")
endif()
if(STAGE STREQUAL "dot")
  file(GLOB dots ${OUTDIR}/*.dot)
  file(READ ${dots} out)
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
