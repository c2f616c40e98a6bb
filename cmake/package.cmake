# Makes the build an installable package: `cmake --install` puts the `ddlsim` command in bin/, the
# libraries in lib/, each library's public include/ tree in include/, the bundled scenarios, model
# zoo and plot scripts in share/ddlsim/, and a CMake package (find_package(ddlsim), targets
# ddlsim::core, ddlsim::sim, ...) and a pkg-config file (ddlsim.pc) in lib/.
#
# The libraries are found by walking the source folders, so a library added later is installed
# and exported without an edit here. Each library keeps declaring `PUBLIC include` as usual; the
# walk below makes those folders relative to the install prefix in the exported targets.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DDLSIM_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/ddlsim"
    CACHE STRING "Where the CMake package files go, relative to the install prefix")
set(DDLSIM_INSTALL_DATADIR "${CMAKE_INSTALL_DATADIR}/ddlsim")

# ddlsim_collect_libraries(OUT DIR...): the ddlsim_* libraries defined in DIRs and below.
function(ddlsim_collect_libraries out)
  set(found "")
  set(pending ${ARGN})
  while(pending)
    list(POP_FRONT pending dir)
    get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      if(target MATCHES "^ddlsim_" AND type MATCHES "^(STATIC|SHARED)_LIBRARY$")
        list(APPEND found ${target})
      endif()
    endforeach()
    get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    list(APPEND pending ${subdirs})
  endwhile()
  set(${out} ${found} PARENT_SCOPE)
endfunction()

# ddlsim_link_order(OUT TARGET...): the TARGETs ordered so that each comes before the ones it links
# (the order a static link line needs), following LINK_LIBRARIES among TARGETs only.
function(_ddlsim_visit lib)
  get_property(done GLOBAL PROPERTY _ddlsim_link_order)
  if(NOT lib IN_LIST done)
    get_target_property(deps ${lib} LINK_LIBRARIES)
    foreach(dep IN LISTS deps)
      if(dep IN_LIST _ddlsim_libraries) # the caller's list
        _ddlsim_visit(${dep})
      endif()
    endforeach()
    # Post-order: a library is appended once everything it links is.
    set_property(GLOBAL APPEND PROPERTY _ddlsim_link_order ${lib})
  endif()
endfunction()
function(ddlsim_link_order out)
  set(_ddlsim_libraries ${ARGN})
  set_property(GLOBAL PROPERTY _ddlsim_link_order "")
  foreach(lib IN LISTS _ddlsim_libraries)
    _ddlsim_visit(${lib})
  endforeach()
  get_property(ordered GLOBAL PROPERTY _ddlsim_link_order)
  list(REVERSE ordered)
  set(${out} ${ordered} PARENT_SCOPE)
endfunction()

ddlsim_collect_libraries(DDLSIM_LIBRARIES core topologies collectives models sim scenario calibrate
                         planning jobs real apps)
ddlsim_link_order(DDLSIM_LIBRARIES_LINK_ORDER ${DDLSIM_LIBRARIES})

set(_ddlsim_header_dirs "")
foreach(lib IN LISTS DDLSIM_LIBRARIES)
  string(REGEX REPLACE "^ddlsim_" "" short_name ${lib})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${short_name})
  add_library(ddlsim::${short_name} ALIAS ${lib})
  # Source-tree include folders are for the build only; installed, the headers are in include/.
  get_target_property(includes ${lib} INTERFACE_INCLUDE_DIRECTORIES)
  if(NOT includes) # a library without public headers (ddlsim_chakra_proto)
    set(includes "")
  endif()
  set(relocatable "")
  foreach(dir IN LISTS includes)
    if(dir MATCHES "^\\$<" OR NOT IS_ABSOLUTE "${dir}")
      list(APPEND relocatable "${dir}")
    else()
      list(APPEND relocatable "$<BUILD_INTERFACE:${dir}>")
      list(APPEND _ddlsim_header_dirs "${dir}")
    endif()
  endforeach()
  set_target_properties(${lib} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${relocatable}")
endforeach()
list(REMOVE_DUPLICATES _ddlsim_header_dirs)

# The warning flags of our own build. The static libraries name it in their link interface
# ($<LINK_ONLY:...>), so it is exported, but it gives consumers no flags.
set_target_properties(ddlsim_warnings PROPERTIES EXPORT_NAME build_warnings)
set_target_properties(ddlsim PROPERTIES EXPORT_NAME ddlsim)

install(TARGETS ${DDLSIM_LIBRARIES} ddlsim_warnings ddlsim
        EXPORT ddlsimTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(dir IN LISTS _ddlsim_header_dirs)
  install(DIRECTORY "${dir}/" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

# Data: the bundled scenarios (presets, examples, papers, validation, schema), the node presets,
# the model zoo and the plot scripts `ddlsim validate --plot` runs. (The presets and the zoo are
# also compiled in; these copies are for people to read and start from.) The build tree mirrors this layout under
# share/ddlsim (links into the sources), so the command finds its data the same way in both.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/scenarios/" DESTINATION ${DDLSIM_INSTALL_DATADIR}/scenarios)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/topologies/presets/"
        DESTINATION ${DDLSIM_INSTALL_DATADIR}/node-presets)
install(DIRECTORY "${PROJECT_SOURCE_DIR}/models/zoo/" DESTINATION ${DDLSIM_INSTALL_DATADIR}/zoo)
set(DDLSIM_PLOT_SCRIPTS plot.py plot_validation.py)
foreach(script IN LISTS DDLSIM_PLOT_SCRIPTS)
  install(PROGRAMS "${PROJECT_SOURCE_DIR}/scripts/${script}"
          DESTINATION ${DDLSIM_INSTALL_DATADIR}/scripts)
endforeach()
set(_build_data "${PROJECT_BINARY_DIR}/${DDLSIM_INSTALL_DATADIR}")
file(MAKE_DIRECTORY "${_build_data}/scripts")
file(CREATE_LINK "${PROJECT_SOURCE_DIR}/scenarios" "${_build_data}/scenarios" SYMBOLIC)
file(CREATE_LINK "${PROJECT_SOURCE_DIR}/topologies/presets" "${_build_data}/node-presets" SYMBOLIC)
file(CREATE_LINK "${PROJECT_SOURCE_DIR}/models/zoo" "${_build_data}/zoo" SYMBOLIC)
foreach(script IN LISTS DDLSIM_PLOT_SCRIPTS)
  file(CREATE_LINK "${PROJECT_SOURCE_DIR}/scripts/${script}" "${_build_data}/scripts/${script}"
       SYMBOLIC)
endforeach()
# The command looks for its data at <its folder>/../share/ddlsim: <prefix>/bin/../share/ddlsim once
# installed, <build>/apps/../share/ddlsim in the build tree.

# The CMake package: targets, their dependencies, the version.
install(EXPORT ddlsimTargets NAMESPACE ddlsim:: DESTINATION ${DDLSIM_INSTALL_CMAKEDIR})
configure_package_config_file("${PROJECT_SOURCE_DIR}/cmake/ddlsimConfig.cmake.in"
                              "${PROJECT_BINARY_DIR}/ddlsimConfig.cmake"
                              INSTALL_DESTINATION ${DDLSIM_INSTALL_CMAKEDIR}
                              PATH_VARS DDLSIM_INSTALL_DATADIR)
write_basic_package_version_file("${PROJECT_BINARY_DIR}/ddlsimConfigVersion.cmake"
                                 COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/ddlsimConfig.cmake"
              "${PROJECT_BINARY_DIR}/ddlsimConfigVersion.cmake"
        DESTINATION ${DDLSIM_INSTALL_CMAKEDIR})

# pkg-config: every library on one line, in link order (the libraries are static), and what they
# link by its own .pc file: nlohmann_json (in the public headers), SimGrid (the flow engine),
# Open MPI's C library where `ddlsim plan` was built with it.
set(DDLSIM_PC_LIBS "")
foreach(lib IN LISTS DDLSIM_LIBRARIES_LINK_ORDER)
  string(APPEND DDLSIM_PC_LIBS " -l${lib}")
endforeach()
# Open MPI before SimGrid, whose SMPI also defines MPI_Init and friends (apps/CMakeLists.txt).
set(DDLSIM_PC_REQUIRES "nlohmann_json")
if(DDLSIM_HAVE_MPI)
  string(APPEND DDLSIM_PC_REQUIRES " ompi-c")
endif()
string(APPEND DDLSIM_PC_REQUIRES " simgrid protobuf")
if(DDLSIM_HAVE_CUDA)
  string(APPEND DDLSIM_PC_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart")
endif()
if(DDLSIM_HAVE_NCCL)
  string(APPEND DDLSIM_PC_LIBS " ${DDLSIM_NCCL_LIBRARY}")
endif()
# The prefix is found from the .pc file's own place, so `cmake --install --prefix` anywhere works.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(DDLSIM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH _up "/root/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/root")
  set(DDLSIM_PC_PREFIX "\${pcfiledir}/${_up}")
  string(REGEX REPLACE "/$" "" DDLSIM_PC_PREFIX "${DDLSIM_PC_PREFIX}")
endif()
configure_file("${PROJECT_SOURCE_DIR}/cmake/ddlsim.pc.in" "${PROJECT_BINARY_DIR}/ddlsim.pc" @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/ddlsim.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
