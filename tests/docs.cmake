# docs.cmake - checks that generated documentation is up to date (LABELS docs).
#   docs.diagnostics_up_to_date: regenerates docs/diagnostics.md from base/diag_codes.def
#   into the build tree and fails if the committed file differs
#   (fix: cmake -P tools/gen_diag_doc.cmake).
add_test(NAME docs.diagnostics_up_to_date
  COMMAND ${CMAKE_COMMAND}
    -DDEF=${PROJECT_SOURCE_DIR}/base/diag_codes.def
    -DOUT=${CMAKE_CURRENT_BINARY_DIR}/diagnostics.md
    -DCHECK=${PROJECT_SOURCE_DIR}/docs/diagnostics.md
    -P ${PROJECT_SOURCE_DIR}/tools/gen_diag_doc.cmake)
set_tests_properties(docs.diagnostics_up_to_date PROPERTIES LABELS docs)
#   docs.capacity_up_to_date: docs/performance.md holds bench/capacity.py's table (the largest
#   graph an H100 / H200 holds per example model, from bgnnc --stats) as this bgnnc prints it
#   (fix: python3 bench/capacity.py BUILD/bgnnc --markdown, into the section that has it).
find_package(Python3 COMPONENTS Interpreter REQUIRED)
add_test(NAME docs.capacity_up_to_date
  COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/bench/capacity.py $<TARGET_FILE:bgnnc>
    --check ${PROJECT_SOURCE_DIR}/docs/performance.md)
set_tests_properties(docs.capacity_up_to_date PROPERTIES LABELS docs)
