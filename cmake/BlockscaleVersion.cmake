# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The version has one source: project(blockscale VERSION ...) in the top-level
# CMakeLists.txt. This writes <build>/include/blockscale/Version.h with it and
# the git commit of the checkout at configure time ("unknown" outside git),
# and makes CMake re-run the configure step when HEAD moves, so that a build
# does not report a stale commit. Only lib/Version/Version.cpp includes the
# header (the tools and the C API get the string from it), so a new commit
# recompiles that one file and relinks. The Python wheel's metadata reads the same
# project() line (python/_build_backend).
set(BLOCKSCALE_GIT_COMMIT "unknown")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(
    COMMAND "${GIT_EXECUTABLE}" rev-parse --short HEAD
    WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
    OUTPUT_VARIABLE _bs_commit OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE _bs_rc ERROR_QUIET)
  if(_bs_rc EQUAL 0 AND _bs_commit)
    set(BLOCKSCALE_GIT_COMMIT "${_bs_commit}")
    # Watch HEAD, the branch it points to (a loose ref) and packed-refs.
    execute_process(
      COMMAND "${GIT_EXECUTABLE}" rev-parse --symbolic-full-name HEAD
      WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
      OUTPUT_VARIABLE _bs_branch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    foreach(_bs_path HEAD ${_bs_branch} packed-refs)
      execute_process(
        COMMAND "${GIT_EXECUTABLE}" rev-parse --git-path "${_bs_path}"
        WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
        OUTPUT_VARIABLE _bs_file OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
      if(_bs_file AND NOT IS_ABSOLUTE "${_bs_file}")
        set(_bs_file "${PROJECT_SOURCE_DIR}/${_bs_file}")
      endif()
      if(_bs_file AND EXISTS "${_bs_file}")
        set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_bs_file}")
      endif()
    endforeach()
  endif()
endif()
set(BLOCKSCALE_VERSION "${PROJECT_VERSION}")
set(BLOCKSCALE_VERSION_STRING "blockscale ${PROJECT_VERSION} (${BLOCKSCALE_GIT_COMMIT})")
message(STATUS "blockscale version: ${BLOCKSCALE_VERSION_STRING}")
configure_file(${PROJECT_SOURCE_DIR}/include/blockscale/Version.h.in
               ${PROJECT_BINARY_DIR}/include/blockscale/Version.h @ONLY)
