# Writes the hostile input file INPUT for cli.hostile.<kind> (a FIXTURES_SETUP
# test): HOSTILE=deep (20,000 nesting levels), longline (a 3 MB line), binary
# (text with control bytes), bomb (an alias bomb).
if(DEFINED HOSTILE)
  if(HOSTILE STREQUAL "deep")
    # 20,000 nested flow sequences, one bracket a line (so no line is long).
    string(REPEAT "[\n" 20000 open)
    string(REPEAT "]\n" 20000 close)
    file(WRITE "${INPUT}" "world_size:\n${open}${close}")
  elseif(HOSTILE STREQUAL "longline")
    string(REPEAT "x" 3000000 big)
    file(WRITE "${INPUT}" "name: ${big}\n")
  elseif(HOSTILE STREQUAL "binary")
    string(RANDOM LENGTH 4096 RANDOM_SEED 7 ALPHABET "\t\n !#$%&()*+,-./0123456789" noise)
    string(ASCII 1 2 3 4 5 control)
    file(WRITE "${INPUT}" "${noise}${control}${noise}")
  elseif(HOSTILE STREQUAL "bomb")
    # Billion laughs inside a known key: 10^40 leaves if anything expanded it.
    set(text "world_size: [\n  &a0 [x, x, x, x, x, x, x, x, x, x],\n")
    foreach(i RANGE 1 40)
      math(EXPR p "${i} - 1")
      string(APPEND text "  &a${i} [*a${p}, *a${p}, *a${p}, *a${p}, *a${p}, *a${p}, *a${p}, *a${p}, *a${p}, *a${p}],\n")
    endforeach()
    file(WRITE "${INPUT}" "${text}  *a40]\n")
  endif()
endif()
