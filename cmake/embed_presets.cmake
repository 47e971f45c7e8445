# Writes OUT: a C++ array initializer of {name, YAML text} for every preset
# file DIR/*.yaml, so the ddpsim binary needs no data files.
file(GLOB files "${DIR}/*.yaml")
list(SORT files)
set(body "")
foreach(f ${files})
  get_filename_component(name "${f}" NAME_WE)
  file(READ "${f}" text)
  string(APPEND body "{\"${name}\", R\"ddpsim_preset(${text})ddpsim_preset\"},\n")
endforeach()
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
