# docs/scenario-format.md's key tables are generated from the schema
# (loader/schema.cpp): fails when the committed doc's generated part
# differs from what ddpsim_schema_doc prints. Inputs: TOOL, DOC.
# Mend with: bash scripts/gen_docs.sh
execute_process(COMMAND "${TOOL}" OUTPUT_VARIABLE generated RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TOOL} exited with ${rc}")
endif()
file(READ "${DOC}" doc)
set(begin_marker "<!-- generated from loader/schema.cpp by scripts/gen_docs.sh: edit the schema, not this part -->\n")
set(end_marker "<!-- end of the generated part -->")
string(FIND "${doc}" "${begin_marker}" b)
string(FIND "${doc}" "${end_marker}" e)
if(b EQUAL -1 OR e EQUAL -1)
  message(FATAL_ERROR "${DOC}: the generated part's markers are missing")
endif()
string(LENGTH "${begin_marker}" blen)
math(EXPR start "${b} + ${blen}")
math(EXPR len "${e} - ${start}")
string(SUBSTRING "${doc}" ${start} ${len} committed)
if(NOT committed STREQUAL generated)
  file(WRITE "${CMAKE_CURRENT_BINARY_DIR}/scenario-format.generated.md" "${generated}")
  message(FATAL_ERROR "${DOC}'s key tables differ from the schema's (loader/schema.cpp); "
                      "run: bash scripts/gen_docs.sh (generated text: ${CMAKE_CURRENT_BINARY_DIR}/scenario-format.generated.md)")
endif()
