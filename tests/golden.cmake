# golden.cmake - the golden test families (bgnnc output diffed against *.expected).
#   parse/*.bgnn          --emit=ast                          -> *.ast.expected     LABELS parse
#   ../examples/*.bgnn    --emit=ir (default pipeline)        -> ir/*.ir.expected   LABELS ir
#   ../examples/*.bgnn    --passes= (lowered, no passes)      -> ir/*.lowered.expected
#   passes/<pass>/*.bgnn  --passes=<pass> --emit=ir           -> *.ir.expected      LABELS pass
#                         (a case whose first line is "# passes: a,b,c" runs --passes=a,b,c)
#   diag/*.bgnn           compile; stderr, exit 1             -> *.err.expected     LABELS diag
#   diag/*.cmdline        bgnnc with the arguments in the file; stderr -> *.err.expected
# BGNN_UPDATE_GOLDEN=1 ctest -L <label> rewrites the expectations.
set(GOLD ${CMAKE_CURRENT_SOURCE_DIR})
function(bgnn_add_golden name expected stream rc)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DBGNNC=$<TARGET_FILE:bgnnc> "-DARGS=${ARGN}"
    -DEXPECTED=${expected} -DSTREAM=${stream} -DRC=${rc} -DWORKDIR=${GOLD}
    -P ${GOLD}/run_golden.cmake)
endfunction()

file(GLOB parse_cases CONFIGURE_DEPENDS ${GOLD}/parse/*.bgnn)
foreach(f ${parse_cases})
  get_filename_component(n ${f} NAME_WE)
  bgnn_add_golden(parse.${n} ${GOLD}/parse/${n}.ast.expected stdout 0 parse/${n}.bgnn --emit=ast)
  set_tests_properties(parse.${n} PROPERTIES LABELS parse)
endforeach()

file(GLOB examples CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.bgnn)
foreach(f ${examples})
  get_filename_component(n ${f} NAME_WE)
  bgnn_add_golden(ir.${n} ${GOLD}/ir/${n}.ir.expected stdout 0 ../examples/${n}.bgnn --emit=ir)
  bgnn_add_golden(ir.${n}.lowered ${GOLD}/ir/${n}.lowered.expected stdout 0 ../examples/${n}.bgnn --passes= --emit=ir)
  set_tests_properties(ir.${n} ir.${n}.lowered PROPERTIES LABELS ir)
endforeach()

file(GLOB pass_dirs CONFIGURE_DEPENDS LIST_DIRECTORIES true ${GOLD}/passes/*)
foreach(d ${pass_dirs})
  if(IS_DIRECTORY ${d})
    get_filename_component(pass ${d} NAME)
    file(GLOB cases ${d}/*.bgnn)
    foreach(f ${cases})
      get_filename_component(n ${f} NAME_WE)
      set(list ${pass})
      file(STRINGS ${f} first LIMIT_COUNT 1)
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${f})
      if(first MATCHES "^# passes: ([a-z,-]+)$")
        set(list ${CMAKE_MATCH_1})
      endif()
      bgnn_add_golden(pass.${pass}.${n} ${d}/${n}.ir.expected stdout 0 passes/${pass}/${n}.bgnn --passes=${list} --emit=ir)
      set_tests_properties(pass.${pass}.${n} PROPERTIES LABELS pass)
    endforeach()
  endif()
endforeach()

file(GLOB diag_cases CONFIGURE_DEPENDS ${GOLD}/diag/*.bgnn)
foreach(f ${diag_cases})
  get_filename_component(n ${f} NAME_WE)
  bgnn_add_golden(diag.${n} ${GOLD}/diag/${n}.err.expected stderr 1 diag/${n}.bgnn --emit=ir)
  set_tests_properties(diag.${n} PROPERTIES LABELS diag)
endforeach()

# diag/*.cmdline: first line = expected exit status, second line = arguments (';'-separated
# CMake list, relative to tests/).  Used for data, weights and usage errors.
file(GLOB cmd_cases CONFIGURE_DEPENDS ${GOLD}/diag/*.cmdline)
foreach(f ${cmd_cases})
  get_filename_component(n ${f} NAME_WE)
  file(STRINGS ${f} lines)
  list(GET lines 0 rc)
  list(GET lines 1 args)
  string(REPLACE " " ";" args "${args}")
  bgnn_add_golden(diag.${n} ${GOLD}/diag/${n}.err.expected stderr ${rc} ${args})
  set_tests_properties(diag.${n} PROPERTIES LABELS diag)
endforeach()

# codegen/<example>.cu.expected: the generated CUDA (--emit=cuda --arch=sm_90)   LABELS codegen
# (indgcn_full: standardize and absmean with their lanes(32) row sums; saint_bin: the head's
# bmm_ff_tile in its last row group)
foreach(n gcn_bin gcn_fp32 indgcn_full saint_bin)
  bgnn_add_golden(codegen.${n} ${GOLD}/codegen/${n}.cu.expected stdout 0 ../examples/${n}.bgnn --emit=cuda --arch=sm_90)
  set_tests_properties(codegen.${n} PROPERTIES LABELS codegen)
endforeach()

# the per-graph kernel of a batched GIN (examples/tu): add_scl steps, warp rows, staged tables
# and the graph stage (plan.h)
bgnn_add_golden(codegen.gin_bin_mutag ${GOLD}/codegen/gin_bin_mutag.cu.expected stdout 0 ../examples/tu/gin_bin_mutag.bgnn --emit=cuda --arch=sm_90)
set_tests_properties(codegen.gin_bin_mutag PROPERTIES LABELS codegen)
# a batched GCN: its two adjacencies of one pattern share a CSR, so its per-graph kernel has the
# graph stage too; the classifier's split-k products spread over the block (bmm_ff_block) and
# its graph-row values in shared memory
bgnn_add_golden(codegen.gcn_bin_mutag ${GOLD}/codegen/gcn_bin_mutag.cu.expected stdout 0 ../examples/tu/gcn_bin_mutag.bgnn --emit=cuda --arch=sm_90)
set_tests_properties(codegen.gcn_bin_mutag PROPERTIES LABELS codegen)

# the Reddit-sized float GCN (bench/): its 128-wide aggregation a warp a row (spmm_warp_rows up to
# BG_PLAN_ROWS_MAX_COLS, the per-edge weights read with the neighbours) and both float products on
# the tiled kernel with f32 weights (602 -> 128 and 128 -> 41: BG_PLAN_FBT_FF_MIN_K)
bgnn_add_golden(codegen.gcn_fp32_reddit ${GOLD}/codegen/gcn_fp32_reddit.cu.expected stdout 0 ../bench/gcn_fp32_reddit.bgnn --emit=cuda --arch=sm_90)
set_tests_properties(codegen.gcn_fp32_reddit PROPERTIES LABELS codegen)
# the Reddit-sized binary GCN: its second aggregation (bspmm.BBF of 128 bits under norm sym) in
# the order slots(8,16,4096) (fp_order.c; templates/spmm_bits_slots.cuh)
bgnn_add_golden(codegen.gcn_bin_reddit ${GOLD}/codegen/gcn_bin_reddit.cu.expected stdout 0 ../bench/gcn_bin_reddit.bgnn --emit=cuda --arch=sm_90)
set_tests_properties(codegen.gcn_bin_reddit PROPERTIES LABELS codegen)

# bgnnc --stats (kernels, launches, compulsory bytes per launch at Cora's sizes).
foreach(n gcn_bin gcn_fp32)
  bgnn_add_golden(stats.${n} ${GOLD}/codegen/${n}.stats.expected stdout 0 ../examples/${n}.bgnn --stats)
  set_tests_properties(stats.${n} PROPERTIES LABELS codegen)
endforeach()

# bgnnc --stats --json: the same numbers as one JSON object.
bgnn_add_golden(stats_json.gcn_bin ${GOLD}/codegen/gcn_bin.stats.json.expected stdout 0 ../examples/gcn_bin.bgnn --stats --json)
set_tests_properties(stats_json.gcn_bin PROPERTIES LABELS codegen)
# the floor line of a batched model (per-graph kernel) and of an arch with no reference GPU
bgnn_add_golden(stats.mutag_gcn_bin ${GOLD}/codegen/mutag_gcn_bin.stats.expected stdout 0 ../examples/mutag_gcn_bin.bgnn --stats)
set_tests_properties(stats.mutag_gcn_bin PROPERTIES LABELS codegen)
bgnn_add_golden(stats.gcn_bin_sm80 ${GOLD}/codegen/gcn_bin_sm80.stats.expected stdout 0 ../examples/gcn_bin.bgnn --stats --arch=sm_80)
set_tests_properties(stats.gcn_bin_sm80 PROPERTIES LABELS codegen)
