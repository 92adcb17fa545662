# bgnn_cli.cmake - the parts of bgnnc that print besides cli/bgnnc.c itself (cli/: the --json
# report, progress lines, bgnnc tune); never part of the library.
target_sources(bgnnc PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../cli/run_json.c
                             ${CMAKE_CURRENT_LIST_DIR}/../cli/progress.c
                             ${CMAKE_CURRENT_LIST_DIR}/../cli/tune.c
                             ${CMAKE_CURRENT_LIST_DIR}/../cli/variants.c)
target_include_directories(bgnnc PRIVATE ${CMAKE_CURRENT_LIST_DIR}/../cli)
