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
