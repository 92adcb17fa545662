# run_fuzz.cmake - one fuzz.<target> CTest test: FUZZER on a fresh copy of CORPUS (the
# committed seeds stay untouched) for SECONDS; fails on any crash, leak, UBSan report,
# timeout (> 10 s per input) or out-of-memory (> 2 GiB).  Crashing inputs: ARTIFACTS/NAME-*.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
file(GLOB seeds ${CORPUS}/*)
file(COPY ${seeds} DESTINATION ${WORK})
set(args ${WORK} -max_total_time=${SECONDS} -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
  -artifact_prefix=${ARTIFACTS}/${NAME}-)
if(DICT)
  list(APPEND args -dict=${DICT})
endif()
execute_process(COMMAND ${FUZZER} ${args} RESULT_VARIABLE rc
  ERROR_VARIABLE log OUTPUT_VARIABLE log2)
string(REGEX MATCHALL "stat::[a-z_]+: *[0-9]+" stats "${log}")
string(REPLACE ";" "\n  " stats "${stats}")
message("fuzz_${NAME}: exit ${rc}\n  ${stats}")
if(NOT rc EQUAL 0)
  string(LENGTH "${log}" n)
  if(n GREATER 20000)
    math(EXPR start "${n} - 20000")
    string(SUBSTRING "${log}" ${start} 20000 log)
  endif()
  message(FATAL_ERROR "fuzz_${NAME} failed (exit ${rc}); crashing input under ${ARTIFACTS}/${NAME}-*\n${log}")
endif()
