# run_golden.cmake - runs one bgnnc command and diffs its output with an expected file.
#   cmake -DBGNNC=... -DARGS="a;b" -DEXPECTED=file -DSTREAM=stdout|stderr -DRC=0 -DWORKDIR=dir -P run_golden.cmake
# With the environment variable BGNN_UPDATE_GOLDEN=1 the expected file is rewritten
# instead (review the git diff).  The exit status must equal RC either way.
execute_process(COMMAND ${BGNNC} ${ARGS}
  WORKING_DIRECTORY ${WORKDIR}
  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(STREAM STREQUAL "stderr")
  set(got "${err}")
else()
  set(got "${out}")
endif()
if(NOT rc STREQUAL RC)
  message(FATAL_ERROR "exit status ${rc}, expected ${RC}\nstdout:\n${out}\nstderr:\n${err}")
endif()
if("$ENV{BGNN_UPDATE_GOLDEN}" STREQUAL "1")
  file(WRITE ${EXPECTED} "${got}")
  message(STATUS "updated ${EXPECTED}")
  return()
endif()
if(NOT EXISTS ${EXPECTED})
  message(FATAL_ERROR "missing ${EXPECTED} (run with BGNN_UPDATE_GOLDEN=1 to create it)\ngot:\n${got}")
endif()
file(READ ${EXPECTED} want)
if(NOT got STREQUAL want)
  file(WRITE ${EXPECTED}.actual "${got}")
  execute_process(COMMAND diff -u ${EXPECTED} ${EXPECTED}.actual)
  message(FATAL_ERROR "output differs from ${EXPECTED} (actual output in ${EXPECTED}.actual)")
endif()
file(REMOVE ${EXPECTED}.actual)
