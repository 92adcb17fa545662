# bgnn_tools.cmake - developer tools built beside bgnnc (never part of the library):
# bgnn_graphgen (tools/graphgen.c), the synthetic graph corpus generator for the schedule
# auto-tuner (tools/graphgen_corpus.sh drives it), and its command-line test
# tests/cli/graphgen.sh (LABELS diag, like the other cli/*.sh scripts of tests/CMakeLists.txt).
add_executable(bgnn_graphgen ${PROJECT_SOURCE_DIR}/tools/graphgen.c)
target_link_libraries(bgnn_graphgen PRIVATE bgnn)

# cli/graphgen.sh: every kind at N = 1, 2, 37, 1000 passes --check (sorted, symmetric, no self
# loops or duplicates, splits sorted and disjoint) and runs through bgnnc run (CPU reference);
# two runs give the same bytes; bad arguments exit 2 with a message naming the option and leave
# no directory.
add_test(NAME diag.graphgen COMMAND bash ${PROJECT_SOURCE_DIR}/tests/cli/graphgen.sh
  $<TARGET_FILE:bgnnc> $<TARGET_FILE:bgnn_graphgen> ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/tests/tmp/graphgen)
set_tests_properties(diag.graphgen PROPERTIES LABELS diag)
