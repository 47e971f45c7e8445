# A sweep's runs go to several threads; the output must not depend on how
# many: --threads 1 and --threads 4 give byte-identical JSON and table.
# Inputs: DDPSIM, SCENARIO, STEM, WORK.
file(MAKE_DIRECTORY "${WORK}")
foreach(n 1 4)
  execute_process(COMMAND "${DDPSIM}" run "${SCENARIO}" --threads ${n} --json "${WORK}/${STEM}.t${n}.json"
                  OUTPUT_FILE "${WORK}/${STEM}.t${n}.txt" ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "--threads ${n} exited ${rc}: ${err}")
  endif()
endforeach()
foreach(kind json txt)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/${STEM}.t1.${kind}" "${WORK}/${STEM}.t4.${kind}"
                  RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "${STEM}: --threads 1 and --threads 4 differ in their ${kind} output")
  endif()
endforeach()
