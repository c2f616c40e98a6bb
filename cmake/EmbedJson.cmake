# ddlsim_embed_json(OUT_VAR INPUT_DIR HEADER NAMESPACE FIND NAMES COMMENT): a generated C++ source
# (its path in OUT_VAR) that compiles every INPUT_DIR/*.json into the library, so bundled data
# (the model zoo, scenario presets, node presets) is found by name from any directory.
function(ddlsim_embed_json out_var input_dir header namespace find names comment)
  ddlsim_embed_files(output "${input_dir}" json ${header} ${namespace} ${find} ${names} "${comment}")
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()

# ddlsim_embed_files(OUT_VAR INPUT_DIR EXT HEADER NAMESPACE FIND NAMES COMMENT): the same for every
# INPUT_DIR/*.EXT file (measured tables as TSV, say).
function(ddlsim_embed_files out_var input_dir ext header namespace find names comment)
  file(GLOB files CONFIGURE_DEPENDS "${input_dir}/*.${ext}")
  get_filename_component(dir_name "${input_dir}" NAME)
  string(MAKE_C_IDENTIFIER "${find}" stem)
  set(output "${CMAKE_CURRENT_BINARY_DIR}/embedded_${stem}.cpp")
  file(RELATIVE_PATH dir_rel "${CMAKE_SOURCE_DIR}" "${input_dir}")
  add_custom_command(
    OUTPUT "${output}"
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${output} -DINPUT_DIR=${input_dir} -DINPUT_DIR_NAME=${dir_rel} -DEXT=${ext}
            -DHEADER=${header} -DNAMESPACE=${namespace} -DFIND=${find} -DNAMES=${names}
            -P "${PROJECT_SOURCE_DIR}/cmake/embed_json.cmake"
    VERBATIM
    DEPENDS ${files} "${PROJECT_SOURCE_DIR}/cmake/embed_json.cmake"
    COMMENT "${comment}")
  set(${out_var} "${output}" PARENT_SCOPE)
endfunction()
