# Libraries with the sonames the torch wheel links against or dlopens, put where
# torch's RUNPATH looks for the NVIDIA wheels' libraries (site-packages/nvidia/...).
# Each needs libphantora_interposer.so, so that inside a simulation a symbol looked
# up through its handle (dlsym) is the interposer's; on its own it answers nothing.

# Libraries no toolkit here ships: every function torch imports from them fails
# loudly, naming itself.
function(phantora_soname_stub target soname regex)
  set(src ${CMAKE_CURRENT_BINARY_DIR}/${target}.cc)
  add_custom_command(
    OUTPUT ${src}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/generate_soname_stubs.sh ${src} "${regex}"
            ${PHANTORA_TORCH_LIB_DIR}
    DEPENDS ${PHANTORA_TORCH_STAMP} ${CMAKE_CURRENT_SOURCE_DIR}/generate_soname_stubs.sh
    COMMENT "Generating ${soname} stubs from the torch wheel's imports")
  phantora_soname_library(${target} ${soname} ${src})
endfunction()

function(phantora_soname_library target soname)
  add_library(${target} SHARED ${ARGN})
  target_include_directories(${target} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${target} PRIVATE phantora_interposer)
  # The soname must be exactly the one torch names; --no-as-needed keeps the
  # dependency on the interposer even where nothing of it is referenced.
  target_link_options(${target} PRIVATE -Wl,-soname,${soname} -Wl,--no-as-needed)
  set_target_properties(${target} PROPERTIES
      OUTPUT_NAME ${soname} PREFIX "" SUFFIX ""
      LIBRARY_OUTPUT_DIRECTORY ${PHANTORA_TORCH_NVIDIA_LIB_DIR})
  add_dependencies(${target} phantora-torch-venv)
  set_property(GLOBAL APPEND PROPERTY PHANTORA_TORCH_STUB_SONAMES ${target})
endfunction()

phantora_soname_stub(phantora-stub-cufile libcufile.so.0 "cuFile[A-Za-z0-9_]*")
phantora_soname_stub(phantora-stub-cusparselt libcusparseLt.so.0 "cusparseLt[A-Za-z0-9_]*")
phantora_soname_stub(phantora-stub-nvshmem libnvshmem_host.so.3 "nvshmem[A-Za-z0-9_]*")
# The driver and NVML: the interposer defines their functions (driver_api_hooks.cc,
# nvml_hooks.cc, generated loud stubs for the rest of the driver); these only give
# dlopen("libcuda.so.1") / dlopen("libnvidia-ml.so.1") something to open.
phantora_soname_library(phantora-stub-cuda libcuda.so.1 ${CMAKE_CURRENT_SOURCE_DIR}/soname_only.cc)
phantora_soname_library(phantora-stub-nvml libnvidia-ml.so.1 ${CMAKE_CURRENT_SOURCE_DIR}/soname_only.cc)

get_property(_stubs GLOBAL PROPERTY PHANTORA_TORCH_STUB_SONAMES)
add_custom_target(phantora-torch-support ALL DEPENDS ${_stubs} phantora-torch-venv)
