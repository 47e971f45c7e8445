cmake_minimum_required(VERSION 3.20)  # IN_LIST
# One scenario run twice, with argument lists A and B: the outputs named in
# KINDS (json, txt: the table, trace.json) must be byte-identical. Used for
# determinism (A = B), the symmetric fast path (B = --per-rank) and threads
# (A = --threads 1, B = --threads 4).
# Inputs: DDPSIM, SCENARIO, STEM, WORK, A, B (lists, may be empty), KINDS, WHAT (for the message);
# COMMAND: the subcommand (run unless given; advise writes no trace).
if(NOT DEFINED COMMAND)
  set(COMMAND run)
endif()
file(MAKE_DIRECTORY "${WORK}")
foreach(run A B)
  set(outputs --json "${WORK}/${STEM}.${run}.json")
  if("trace.json" IN_LIST KINDS)
    list(APPEND outputs --trace "${WORK}/${STEM}.${run}.trace.json")
  endif()
  execute_process(COMMAND "${DDPSIM}" ${COMMAND} "${SCENARIO}" ${${run}} ${outputs}
                  OUTPUT_FILE "${WORK}/${STEM}.${run}.txt" ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${run} (${${run}}) exited ${rc}: ${err}")
  endif()
endforeach()
include(${CMAKE_CURRENT_LIST_DIR}/require_same.cmake)
foreach(kind ${KINDS})
  require_same("${WORK}/${STEM}.A.${kind}" "${WORK}/${STEM}.B.${kind}" "${STEM}: ${WHAT}: the ${kind} outputs differ")
endforeach()
