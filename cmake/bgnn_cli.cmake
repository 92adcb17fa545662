# bgnn_cli.cmake - the parts of bgnnc that print besides compiler/bgnnc.c itself
# (compiler/cli/: the --json report, progress lines); never part of the library.
target_sources(bgnnc PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../compiler/cli/run_json.c
                             ${CMAKE_CURRENT_LIST_DIR}/../compiler/cli/progress.c)
target_include_directories(bgnnc PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../compiler/cli)
