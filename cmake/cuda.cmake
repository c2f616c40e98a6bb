# Detects CUDA and NCCL for the GPU backends. DDLSIM_CUDA: AUTO builds them when nvcc and
# libnccl are found (hints: CUDA_HOME, NCCL_HOME), ON requires them, OFF skips them.
# Sets DDLSIM_HAVE_CUDA and DDLSIM_HAVE_NCCL and prints one line saying what was found.
set(DDLSIM_HAVE_CUDA OFF)
set(DDLSIM_HAVE_NCCL OFF)
if(NOT DDLSIM_CUDA STREQUAL "OFF")
  set(_cuda_hints "$ENV{CUDA_HOME}" "$ENV{CUDA_PATH}" /usr/local/cuda)
  find_program(DDLSIM_NVCC nvcc HINTS ${_cuda_hints} PATH_SUFFIXES bin)
  if(DDLSIM_NVCC)
    if(NOT CMAKE_CUDA_COMPILER)
      set(CMAKE_CUDA_COMPILER "${DDLSIM_NVCC}")
    endif()
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # CUDA 13 dropped sm_70; Ampere and Hopper are what the backends target.
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    include(CheckLanguage)
    check_language(CUDA)
    if(CMAKE_CUDA_COMPILER)
      enable_language(CUDA)
      find_package(CUDAToolkit QUIET)
      if(CUDAToolkit_FOUND)
        set(DDLSIM_HAVE_CUDA ON)
        get_filename_component(_cuda_root "${CUDAToolkit_BIN_DIR}" DIRECTORY)
        find_library(DDLSIM_NCCL_LIBRARY nccl
          HINTS "$ENV{NCCL_HOME}" "${_cuda_root}" ${CUDAToolkit_LIBRARY_DIR}
          PATH_SUFFIXES lib lib64)
        find_path(DDLSIM_NCCL_INCLUDE nccl.h
          HINTS "$ENV{NCCL_HOME}" "${_cuda_root}" ${CUDAToolkit_INCLUDE_DIRS}
          PATH_SUFFIXES include)
        if(DDLSIM_NCCL_LIBRARY AND DDLSIM_NCCL_INCLUDE)
          set(DDLSIM_HAVE_NCCL ON)
        endif()
      endif()
    endif()
  endif()
endif()

if(DDLSIM_HAVE_CUDA)
  set(_nccl_note "NCCL not found (set NCCL_HOME)")
  if(DDLSIM_HAVE_NCCL)
    set(_nccl_note "NCCL ${DDLSIM_NCCL_LIBRARY}")
  endif()
  message(STATUS "ddlsim: GPU backends ON: CUDA ${CUDAToolkit_VERSION} (${CMAKE_CUDA_COMPILER}), "
                 "archs ${CMAKE_CUDA_ARCHITECTURES}, ${_nccl_note}")
elseif(DDLSIM_CUDA STREQUAL "ON")
  message(FATAL_ERROR "ddlsim: DDLSIM_CUDA=ON but no CUDA toolkit was found: put nvcc on PATH "
                      "or set CUDA_HOME, or configure with -DDDLSIM_CUDA=OFF")
elseif(DDLSIM_CUDA STREQUAL "OFF")
  message(STATUS "ddlsim: GPU backends OFF (DDLSIM_CUDA=OFF)")
else()
  message(STATUS "ddlsim: GPU backends OFF: no nvcc found (set CUDA_HOME to enable)")
endif()
