# The symmetric fast path is exact: the scenario run with it (the default)
# and with --per-rank (every rank simulated) gives byte-identical JSON and
# table. Inputs: DDPSIM, SCENARIO, STEM, WORK.
file(MAKE_DIRECTORY "${WORK}")
foreach(variant fast per_rank)
  set(extra "")
  if(variant STREQUAL "per_rank")
    set(extra --per-rank)
  endif()
  execute_process(COMMAND "${DDPSIM}" run "${SCENARIO}" ${extra} --json "${WORK}/${STEM}.${variant}.json"
                  OUTPUT_FILE "${WORK}/${STEM}.${variant}.txt" ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${variant} run exited ${rc}: ${err}")
  endif()
endforeach()
foreach(kind json txt)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/${STEM}.fast.${kind}" "${WORK}/${STEM}.per_rank.${kind}"
                  RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "the fast path and the per-rank simulation of ${STEM} differ in their ${kind} output")
  endif()
endforeach()
