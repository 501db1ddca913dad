# The layer rule, checked on every quoted #include in the library's sources (a CTest test:
# LayerIncludes). Run by hand:
#   cmake -P tests/check_layers.cmake                      # checks this checkout's src/
#   cmake -DSOURCE_DIR=<dir> -P tests/check_layers.cmake   # checks <dir>/src/ (the tests' fixture)
# It fails naming file:line and the rule broken. Angle-bracket includes (the standard library,
# third-party and vendor headers) and the generated protobuf header are not checked.

cmake_minimum_required(VERSION 3.25)

# ---- The rule ---------------------------------------------------------------------------------
# Data flows one way (shared/DESIGN.md, docs/ARCHITECTURE.md):
#
#   record -> collect -> model -> analysis -> report -> render -> io -> serve -> api
#
# A layer includes its own folder, the public headers (nnprof/...), and the layers named on its
# row. Every row is the layers to its left, except that collect is a side branch of record:
# collectors write into the session, the model builds a profile from the raw snapshot alone,
# and only api, which starts collectors and hands them their session, includes collect.
set(LAYERS record collect model analysis report render io serve api)
set(MAY_INCLUDE_record   "")
set(MAY_INCLUDE_collect  record)
set(MAY_INCLUDE_model    record)
set(MAY_INCLUDE_analysis record model)
set(MAY_INCLUDE_report   record model analysis)
set(MAY_INCLUDE_render   record model analysis report)
set(MAY_INCLUDE_io       record model analysis report render)
set(MAY_INCLUDE_serve    record model analysis report render io)
set(MAY_INCLUDE_api      record collect model analysis report render io serve)

# Includes that break the rule, each allowed until the reason is gone: "<layer> -> <header>: why".
# Empty: every layer follows the rule. A new entry needs its reason and a plan to remove it.
# An entry that nothing uses any more is reported, so that it can be deleted.
set(ALLOWED_FOR_NOW)

# Headers that are no layer's own code.
set(NOT_CHECKED_REGEX "\\.pb\\.h$")  # protoc's output (io/proto/profile.pb.h)
# ------------------------------------------------------------------------------------------------

if(NOT DEFINED SOURCE_DIR)
  set(SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/..")
endif()
get_filename_component(SOURCE_DIR "${SOURCE_DIR}" ABSOLUTE)
if(NOT IS_DIRECTORY "${SOURCE_DIR}/src")
  message(FATAL_ERROR "check_layers: no src/ folder in '${SOURCE_DIR}' (set -DSOURCE_DIR to the checkout's root)")
endif()

set(allowed_keys "")
foreach(entry IN LISTS ALLOWED_FOR_NOW)
  if(NOT entry MATCHES "^([a-z_]+) -> ([^ :]+): (.+)$")
    message(FATAL_ERROR "check_layers: allow-list entry '${entry}' is not '<layer> -> <header>: why'")
  endif()
  list(APPEND allowed_keys "${CMAKE_MATCH_1}->${CMAKE_MATCH_2}")
endforeach()
set(used_keys "")

# Line number of the first line of `file` that is exactly `line`.
function(line_number_of file line out)
  file(READ "${file}" content)
  string(FIND "${content}" "${line}" at)
  string(SUBSTRING "${content}" 0 ${at} before)
  string(REGEX MATCHALL "\n" newlines "${before}")
  list(LENGTH newlines count)
  math(EXPR number "${count} + 1")
  set(${out} ${number} PARENT_SCOPE)
endfunction()

set(errors "")
set(files_checked 0)

# A folder of src/ that is not a layer has no rule: name it in LAYERS first.
file(GLOB top_entries LIST_DIRECTORIES true RELATIVE "${SOURCE_DIR}/src" "${SOURCE_DIR}/src/*")
foreach(entry IN LISTS top_entries)
  if(IS_DIRECTORY "${SOURCE_DIR}/src/${entry}" AND NOT entry IN_LIST LAYERS)
    list(APPEND errors "src/${entry}/: a folder that is no layer; add it to LAYERS with the layers it may include")
  endif()
endforeach()

foreach(layer IN LISTS LAYERS)
  file(GLOB_RECURSE sources RELATIVE "${SOURCE_DIR}"
       "${SOURCE_DIR}/src/${layer}/*.cpp" "${SOURCE_DIR}/src/${layer}/*.hpp" "${SOURCE_DIR}/src/${layer}/*.h")
  list(SORT sources)
  set(may "${layer}" ${MAY_INCLUDE_${layer}})
  foreach(source IN LISTS sources)
    math(EXPR files_checked "${files_checked} + 1")
    file(STRINGS "${SOURCE_DIR}/${source}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]+\"")
    foreach(line IN LISTS includes)
      if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\"")
        continue()  # the rest of a line that held a ';' (a trailing comment)
      endif()
      set(header "${CMAKE_MATCH_1}")
      if(header MATCHES "${NOT_CHECKED_REGEX}")
        continue()
      endif()
      if(NOT header MATCHES "/")
        continue()  # beside the including file: its own folder
      endif()
      string(REGEX REPLACE "/.*$" "" folder "${header}")
      set(broken "")
      if(folder STREQUAL "." OR folder STREQUAL "..")
        set(broken "a relative path; name the header from src/ (\"<layer>/...\") so that its layer shows")
      elseif(folder STREQUAL "nnprof" OR NOT folder IN_LIST LAYERS OR folder IN_LIST may)
        continue()
      elseif("${layer}->${header}" IN_LIST allowed_keys)
        list(APPEND used_keys "${layer}->${header}")
        continue()
      else()
        string(REPLACE ";" ", " may_text "${may}")
        set(broken "${layer}/ may include only ${may_text} and nnprof/, not ${folder}/")
      endif()
      line_number_of("${SOURCE_DIR}/${source}" "${line}" number)
      list(APPEND errors "${source}:${number}: #include \"${header}\": ${broken}")
    endforeach()
  endforeach()
endforeach()

foreach(entry IN LISTS ALLOWED_FOR_NOW)
  string(REGEX REPLACE "^([a-z_]+) -> ([^ :]+):.*$" "\\1->\\2" key "${entry}")
  string(REGEX REPLACE "->.*$" "" from "${key}")
  if(IS_DIRECTORY "${SOURCE_DIR}/src/${from}" AND NOT key IN_LIST used_keys)
    message(STATUS "check_layers: allow-list entry no longer needed, delete it: ${entry}")
  endif()
endforeach()

list(LENGTH errors error_count)
if(error_count GREATER 0)
  string(REPLACE ";" "\n  " listed "${errors}")
  message(FATAL_ERROR "Layer rule broken (tests/check_layers.cmake) in ${error_count} place(s):\n  ${listed}\n")
endif()
message(STATUS "check_layers: ${files_checked} files under src/ follow the layer rule")
