# The version ddlsim reports: the project's VERSION (project() in the top CMakeLists.txt, the one
# place it is written) and, in a git checkout, `git describe` of the commit it was configured at
# (DDLSIM_GIT_DESCRIBE, empty without git). A new commit or checkout re-runs the configuration, so
# the description follows the checkout.
set(DDLSIM_GIT_DESCRIBE "")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND "${GIT_EXECUTABLE}" describe --always --dirty --tags
                  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                  OUTPUT_VARIABLE _describe OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _describe_status ERROR_QUIET)
  execute_process(COMMAND "${GIT_EXECUTABLE}" rev-parse --absolute-git-dir
                  WORKING_DIRECTORY "${PROJECT_SOURCE_DIR}"
                  OUTPUT_VARIABLE _git_dir OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE _git_dir_status ERROR_QUIET)
  if(_describe_status EQUAL 0 AND _git_dir_status EQUAL 0)
    set(DDLSIM_GIT_DESCRIBE "${_describe}")
    # logs/HEAD changes with every commit, checkout and reset of this checkout.
    if(EXISTS "${_git_dir}/logs/HEAD")
      set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_git_dir}/logs/HEAD")
    endif()
  endif()
endif()
if(DDLSIM_GIT_DESCRIBE)
  message(STATUS "ddlsim: version ${PROJECT_VERSION} (git ${DDLSIM_GIT_DESCRIBE})")
else()
  message(STATUS "ddlsim: version ${PROJECT_VERSION} (not a git checkout)")
endif()
