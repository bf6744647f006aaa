# jiasu.nn's cuDNN path (core/dnn/cudnn_graphs.cpp) needs NVIDIA's cudnn-frontend headers, cudnn.h and the CUDA
# runtime headers at build time (nothing is linked: libcudnn is dlopen'd). Where they come from, in order:
#   JIASU_CUDNN_FRONTEND_INCLUDE (CMake or environment): the folder that holds cudnn_frontend.h;
#   the nvidia-cudnn-frontend pip package of the Python that builds jiasu (its top-level include/);
# and cudnn.h / cuda_runtime_api.h from the nvidia-cudnn-cu13 / CUDA 13 pip packages, CUDNN_PATH, CUDA_HOME or
# /usr/local/cuda. Without them jiasu builds as well, and jiasu.nn runs its own kernels on the GPU too.
# The extension keeps its statically linked libraries' symbols private (CMakeLists.txt), so that a static libstdc++
# cannot mix with the one libcudnn brings along (docs/nn.md).
option(JIASU_WITH_CUDNN "Build jiasu.nn's cuDNN path when the cudnn-frontend headers are found" ON)
set(JIASU_CUDNN_FRONTEND_INCLUDE "$ENV{JIASU_CUDNN_FRONTEND_INCLUDE}" CACHE PATH "the folder holding cudnn_frontend.h")

set(JIASU_CUDNN_STATUS "without cuDNN (JIASU_WITH_CUDNN=OFF)")
if(JIASU_WITH_CUDNN)
  find_package(Python 3.10 COMPONENTS Interpreter QUIET)
  set(_hints "")
  if(Python_EXECUTABLE)
    # The pip packages' folders: cudnn-frontend's include/, and the folders holding cudnn.h and cuda_runtime_api.h.
    execute_process(
      COMMAND "${Python_EXECUTABLE}" -c [=[
import importlib.metadata as m
for name, sub in (("nvidia-cudnn-frontend", "include"), ("nvidia-cudnn-cu13", "nvidia/cudnn/include"),
                  ("nvidia-cuda-runtime", "nvidia/cu13/include"), ("nvidia-cuda-runtime-cu13", "nvidia/cu13/include")):
    try:
        print(m.distribution(name).locate_file(sub))
    except m.PackageNotFoundError:
        pass
]=]
      OUTPUT_VARIABLE _found OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    string(REPLACE "\n" ";" _hints "${_found}")
  endif()
  find_path(JIASU_CUDNN_FRONTEND_DIR cudnn_frontend.h HINTS ${JIASU_CUDNN_FRONTEND_INCLUDE} ${_hints} NO_DEFAULT_PATH)
  find_path(JIASU_CUDNN_HEADER_DIR cudnn.h
            HINTS ${_hints} $ENV{CUDNN_PATH}/include $ENV{CUDA_HOME}/include /usr/local/cuda/include /usr/include)
  # The CUDA runtime's headers with the crt/ folder they include (a pip package may lack it).
  find_path(JIASU_CUDART_HEADER_DIR crt/host_defines.h
            HINTS $ENV{CUDA_HOME}/include /usr/local/cuda/include ${_hints} /usr/include)
  set(_usable OFF)
  if(JIASU_CUDNN_FRONTEND_DIR AND JIASU_CUDNN_HEADER_DIR AND JIASU_CUDART_HEADER_DIR)
    include(CheckCXXSourceCompiles)
    set(CMAKE_REQUIRED_INCLUDES ${JIASU_CUDNN_HEADER_DIR} ${JIASU_CUDART_HEADER_DIR})
    check_cxx_source_compiles("#include <cuda_runtime_api.h>\n#include <cudnn.h>\nint main() { return CUDNN_MAJOR; }"
                              JIASU_CUDNN_HEADERS_COMPILE)
    unset(CMAKE_REQUIRED_INCLUDES)
    set(_usable ${JIASU_CUDNN_HEADERS_COMPILE})
  endif()
  if(_usable)
    set(JIASU_CUDNN_STATUS "cudnn-frontend from ${JIASU_CUDNN_FRONTEND_DIR}, cudnn.h from ${JIASU_CUDNN_HEADER_DIR}")
    set_source_files_properties(${CMAKE_CURRENT_SOURCE_DIR}/core/dnn/cudnn_graphs.cpp PROPERTIES
      COMPILE_DEFINITIONS "JIASU_HAVE_CUDNN_FRONTEND;NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING;CUDNN_FRONTEND_SKIP_JSON_LIB"
      COMPILE_OPTIONS "-isystem;${JIASU_CUDNN_FRONTEND_DIR};-isystem;${JIASU_CUDNN_HEADER_DIR};-isystem;${JIASU_CUDART_HEADER_DIR}")
  else()
    set(JIASU_CUDNN_STATUS "without cuDNN (headers not found: pip install nvidia-cudnn-frontend, then reinstall jiasu)")
  endif()
endif()
message(STATUS "jiasu.nn: ${JIASU_CUDNN_STATUS}")
