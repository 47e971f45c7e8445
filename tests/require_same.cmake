# require_same(A B WHAT): fails the script, saying WHAT, unless files A and B
# are byte-identical. Included by the scripts that compare two runs' outputs.
function(require_same a b what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files "${a}" "${b}" RESULT_VARIABLE same)
  if(NOT same EQUAL 0)
    message(FATAL_ERROR "${what}")
  endif()
endfunction()
