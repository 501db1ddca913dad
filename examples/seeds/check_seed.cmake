# Runs one seed program and checks what it did: `cmake -DPROGRAM=... -DSPEC=... -DWORK_DIR=... -P check_seed.cmake`.
#
# SPEC (written by nnprof_seed_test in CMakeLists.txt) sets:
#   ARGS    the program's arguments
#   EXPECT  regular expressions that must all match its standard output
#   FORBID  regular expressions that must not match its standard output or error
#   FILES   "path:kind" entries: files the program must leave in WORK_DIR, non-empty and of their
#           kind: json (parses as JSON), html (starts with <!DOCTYPE html>), markdown (starts with
#           a heading and holds a table), text (no markup at the start)
#   FILE_EXPECT  "path|regex" entries: the file's contents must match the regular expression
# The program must exit with status 0. It runs in a fresh WORK_DIR, so no file of an earlier run counts.
cmake_minimum_required(VERSION 3.25)
include(${SPEC})

file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
execute_process(COMMAND "${PROGRAM}" ${ARGS}
  WORKING_DIRECTORY "${WORK_DIR}"
  RESULT_VARIABLE status
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  TIMEOUT 30)
message("---- stdout of ${PROGRAM} ${ARGS}\n${out}---- stderr\n${err}----")

set(failures "")
if(NOT status STREQUAL "0")
  string(APPEND failures "exit status ${status}, expected 0\n")
endif()
foreach(re IN LISTS EXPECT)
  if(NOT out MATCHES "${re}")
    string(APPEND failures "stdout does not match: ${re}\n")
  endif()
endforeach()
foreach(re IN LISTS FORBID)
  if("${out}${err}" MATCHES "${re}")
    string(APPEND failures "output matches what it must not: ${re} (matched '${CMAKE_MATCH_0}')\n")
  endif()
endforeach()

foreach(entry IN LISTS FILES)
  string(REGEX MATCH "^(.*):([a-z]+)$" parsed "${entry}")
  set(name "${CMAKE_MATCH_1}")  # kept: every MATCHES below overwrites CMAKE_MATCH_<n>
  set(kind "${CMAKE_MATCH_2}")
  set(path "${WORK_DIR}/${name}")
  if(NOT EXISTS "${path}")
    string(APPEND failures "${name} was not written\n")
    continue()
  endif()
  file(SIZE "${path}" size)
  if(size EQUAL 0)
    string(APPEND failures "${name} is empty\n")
    continue()
  endif()
  file(READ "${path}" content)
  if(kind STREQUAL "json")
    string(JSON type ERROR_VARIABLE json_error TYPE "${content}")
    if(json_error)
      string(APPEND failures "${name} is not JSON: ${json_error}\n")
    elseif(NOT type STREQUAL "OBJECT")
      string(APPEND failures "${name} is JSON ${type}, expected an object\n")
    endif()
  elseif(kind STREQUAL "html")
    if(NOT content MATCHES "^<!DOCTYPE html>" OR NOT content MATCHES "</html>[ \n]*$")
      string(APPEND failures "${name} is not a whole HTML page (<!DOCTYPE html> ... </html>)\n")
    endif()
  elseif(kind STREQUAL "markdown")
    if(NOT content MATCHES "^# " OR NOT content MATCHES "\n\\|[^\n]*\\|\n\\|[ :|-]+\\|\n")
      string(APPEND failures "${name} is not Markdown with a heading and a table\n")
    endif()
  elseif(kind STREQUAL "text")
    if(content MATCHES "^[ \n]*[<{#]")
      string(APPEND failures "${name} starts with markup, expected plain text\n")
    endif()
  else()
    string(APPEND failures "${entry}: unknown file kind '${kind}'\n")
  endif()
endforeach()

foreach(entry IN LISTS FILE_EXPECT)
  string(REGEX MATCH "^([^|]+)[|](.*)$" parsed "${entry}")
  set(path "${CMAKE_MATCH_1}")
  set(re "${CMAKE_MATCH_2}")
  if(NOT EXISTS "${WORK_DIR}/${path}")
    string(APPEND failures "${path} was not written\n")
    continue()
  endif()
  file(READ "${WORK_DIR}/${path}" content)
  if(NOT content MATCHES "${re}")
    string(APPEND failures "${path} does not match: ${re}\n")
  endif()
endforeach()

if(failures)
  message(FATAL_ERROR "${failures}")
endif()
