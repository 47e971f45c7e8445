# Same scenario and seed, twice: the JSON result and the trace must be
# byte-identical. Inputs: DDPSIM, SCENARIO, STEM, WORK, EXTRA (more arguments, optional).
set(stem "${STEM}")
file(MAKE_DIRECTORY "${WORK}")
foreach(i 1 2)
  execute_process(
    COMMAND "${DDPSIM}" run "${SCENARIO}" ${EXTRA} --json "${WORK}/${stem}.${i}.json" --trace "${WORK}/${stem}.${i}.trace.json"
    OUTPUT_FILE "${WORK}/${stem}.${i}.txt" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "run ${i} exited ${rc}")
  endif()
endforeach()
foreach(kind json trace.json txt)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/${stem}.1.${kind}" "${WORK}/${stem}.2.${kind}"
                  RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "two runs of ${stem} differ in their ${kind} output")
  endif()
endforeach()
