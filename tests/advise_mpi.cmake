cmake_minimum_required(VERSION 3.20)
# ddpsim ADVISE_ARGS alone and under `mpirun -np NP`: the text and the JSON
# must be byte-identical. Inputs: MPIRUN, DDPSIM, NP, WORK, ARGS (a list).
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${DDPSIM}" ${ARGS} --json "${WORK}/one.json" OUTPUT_FILE "${WORK}/one.txt"
                ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "one process exited ${rc}: ${err}")
endif()
execute_process(COMMAND "${MPIRUN}" --oversubscribe -np ${NP} "${DDPSIM}" ${ARGS} --json "${WORK}/many.json"
                OUTPUT_FILE "${WORK}/many.txt" ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "mpirun -np ${NP} exited ${rc}: ${err}")
endif()
foreach(kind txt json)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${WORK}/one.${kind}" "${WORK}/many.${kind}" RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "the ${kind} output of ${NP} processes differs from one process's")
  endif()
endforeach()
message(STATUS "${NP} processes: the same text and JSON as one")
