# Golden test of one scenario: runs it and diffs the table, CSV and JSON with
# tests/golden/<stem>.{txt,csv,json}. With UPDATE_GOLDEN=1 in the environment
# it rewrites the golden files instead (commit them with the reason).
# Inputs: DDPSIM, SCENARIO, STEM (the golden files' name), GOLDEN_DIR, WORK.
set(stem "${STEM}")
file(MAKE_DIRECTORY "${WORK}")
set(out "${WORK}/${stem}")
execute_process(
  COMMAND "${DDPSIM}" run "${SCENARIO}" --json "${out}.json" --csv "${out}.csv"
  OUTPUT_FILE "${out}.txt" ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ddpsim run ${SCENARIO} exited ${rc}: ${err}")
endif()
# The commit changes with every commit, not with the prediction: masked.
file(READ "${out}.json" json)
string(REGEX REPLACE "\"git_commit\": \"[^\"]*\"" "\"git_commit\": \"(masked)\"" json "${json}")
file(WRITE "${out}.json" "${json}")
set(failed "")
foreach(ext txt csv json)
  set(golden "${GOLDEN_DIR}/${stem}.${ext}")
  if("$ENV{UPDATE_GOLDEN}" STREQUAL "1")
    file(COPY_FILE "${out}.${ext}" "${golden}")
    continue()
  endif()
  if(NOT EXISTS "${golden}")
    message(FATAL_ERROR "no golden file ${golden}; run scripts/update_golden.sh and commit it")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${golden}" "${out}.${ext}" RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    execute_process(COMMAND diff -u "${golden}" "${out}.${ext}" OUTPUT_VARIABLE d)
    message("--- ${golden} differs from this build's prediction:\n${d}")
    list(APPEND failed "${ext}")
  endif()
endforeach()
if(failed)
  message(FATAL_ERROR "prediction changed for ${stem} (${failed}). If intended: "
                      "UPDATE_GOLDEN=1 ctest -R golden, and explain the change in the commit message.")
endif()
