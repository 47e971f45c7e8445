# ddpsim_test: the one way to register a test that runs a command and checks
# its exit code and its output together (ctest alone ignores the exit code of
# a test with PASS_REGULAR_EXPRESSION, and WILL_FAIL passes a crash).
#
#   ddpsim_test(NAME name COMMAND cmd [args...]
#               [RC code[,code]]     expected exit code (default 0); a comma list accepts any of them
#               [REGEX ere]          the output (stdout and stderr) must match
#               [NOT_REGEX ere]      ... and must not match
#               [NEEDS what...]      torch, chromium, netns, mpi, gpu: exit 77 is then "Not Run", and
#                                    the test is labelled needs_<what>; CI fails a Not Run
#                                    whose prerequisites are installed (scripts/check_not_run.sh)
#               [PROPERTIES ...])    passed to set_tests_properties (its LABELS are kept)
#
# The runner is tests/expect.sh (POSIX extended regexes over the whole output,
# as CMake's: '.' matches a newline).
set(DDPSIM_EXPECT ${CMAKE_CURRENT_LIST_DIR}/../tests/expect.sh)
function(ddpsim_test)
  # PARSE_ARGV keeps the semicolons inside arguments (sh -c scripts, ENVIRONMENT lists).
  cmake_parse_arguments(PARSE_ARGV 0 T "" "NAME;RC;REGEX;NOT_REGEX" "NEEDS;COMMAND;PROPERTIES")
  if(NOT T_NAME OR NOT T_COMMAND)
    message(FATAL_ERROR "ddpsim_test needs NAME and COMMAND")
  endif()
  if(NOT DEFINED T_RC)
    set(T_RC 0)
  endif()
  set(args --rc ${T_RC})
  # A ';' inside a regex stays in it (escaped, or the list would split it into two arguments).
  if(DEFINED T_REGEX)
    string(REPLACE ";" "\\;" regex "${T_REGEX}")
    list(APPEND args --regex "${regex}")
  endif()
  if(DEFINED T_NOT_REGEX)
    string(REPLACE ";" "\\;" not_regex "${T_NOT_REGEX}")
    list(APPEND args --not-regex "${not_regex}")
  endif()
  if(T_NEEDS)
    list(APPEND args --skip 77)
  endif()
  add_test(NAME ${T_NAME} COMMAND bash ${DDPSIM_EXPECT} ${args} -- ${T_COMMAND})
  if(T_PROPERTIES)
    set_tests_properties(${T_NAME} PROPERTIES ${T_PROPERTIES})
  endif()
  if(T_NEEDS)
    set_tests_properties(${T_NAME} PROPERTIES SKIP_RETURN_CODE 77)
    foreach(n ${T_NEEDS})
      if(NOT n MATCHES "^(torch|chromium|netns|mpi|gpu)$")
        message(FATAL_ERROR "ddpsim_test ${T_NAME}: NEEDS ${n}: expected torch, chromium, netns, mpi or gpu")
      endif()
      set_property(TEST ${T_NAME} APPEND PROPERTY LABELS needs_${n})
    endforeach()
  endif()
endfunction()
