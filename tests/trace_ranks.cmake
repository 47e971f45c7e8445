# --trace-ranks bounds a trace: jitter_stragglers' 64- and 256-rank runs
# traced with --trace-ranks 8 name ranks 0 to 7 of each run and no other,
# and ddpsim says so. Inputs: DDPSIM, SCENARIO, WORK.
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${DDPSIM}" run "${SCENARIO}" --trace "${WORK}/bounded.trace.json" --trace-ranks 8
                OUTPUT_QUIET ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "exited ${rc}: ${err}")
endif()
if(NOT err MATCHES "the trace has ranks 0 to 7 of each run")
  message(FATAL_ERROR "no note of the bounded trace on stderr: ${err}")
endif()
file(STRINGS "${WORK}/bounded.trace.json" rank7 REGEX "\"W=256 rank 7\"")
file(STRINGS "${WORK}/bounded.trace.json" rank8 REGEX "\"W=256 rank 8\"")
file(STRINGS "${WORK}/bounded.trace.json" pids REGEX "\"pid\":(2[5-9]|[3-9][0-9]|[0-9][0-9][0-9]+),")
list(LENGTH rank7 n7)
list(LENGTH rank8 n8)
list(LENGTH pids npids)
# Four runs (W = 1, 8, 64, 256) of at most 8 ranks each: pids 0 to 24 only.
if(NOT n7 EQUAL 1 OR NOT n8 EQUAL 0 OR NOT npids EQUAL 0)
  message(FATAL_ERROR "rank 7 named ${n7} times, rank 8 ${n8} times, ${npids} events on pids past the bound")
endif()
