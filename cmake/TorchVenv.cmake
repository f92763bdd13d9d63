# The Python environment with the stock PyPI torch wheel that simulated PyTorch
# runs use (build/venv).  Creating it downloads ~530 MB once (then pip's cache);
# -DPHANTORA_WITH_TORCH=OFF leaves PyTorch out of the build and the tests.
option(PHANTORA_WITH_TORCH "Install torch into build/venv and build the PyTorch support and tests" ON)

if(PHANTORA_WITH_TORCH)
  find_package(Python3 3.10 REQUIRED COMPONENTS Interpreter)
  set(PHANTORA_TORCH_VENV ${CMAKE_BINARY_DIR}/venv)
  set(PHANTORA_TORCH_PYTHON ${PHANTORA_TORCH_VENV}/bin/python)
  set(PHANTORA_TORCH_SITE_PACKAGES
      ${PHANTORA_TORCH_VENV}/lib/python${Python3_VERSION_MAJOR}.${Python3_VERSION_MINOR}/site-packages)
  set(PHANTORA_TORCH_LIB_DIR ${PHANTORA_TORCH_SITE_PACKAGES}/torch/lib)
  # torch's RUNPATH looks here for the NVIDIA wheels' libraries: our stub sonames go here.
  set(PHANTORA_TORCH_NVIDIA_LIB_DIR ${PHANTORA_TORCH_SITE_PACKAGES}/nvidia/cu13/lib)
  set(PHANTORA_TORCH_STAMP ${PHANTORA_TORCH_VENV}/.phantora-torch-installed)
  add_custom_command(
    OUTPUT ${PHANTORA_TORCH_STAMP}
    COMMAND ${CMAKE_SOURCE_DIR}/cmake/setup_torch_venv.sh ${Python3_EXECUTABLE}
            ${PHANTORA_TORCH_VENV} ${PHANTORA_TORCH_STAMP}
    DEPENDS ${CMAKE_SOURCE_DIR}/cmake/setup_torch_venv.sh
    COMMENT "Installing torch==2.11.0 (PyPI wheel, no NVIDIA wheels) into ${PHANTORA_TORCH_VENV}"
    USES_TERMINAL)
  add_custom_target(phantora-torch-venv ALL DEPENDS ${PHANTORA_TORCH_STAMP})
endif()

# A framework installed into the torch venv by cmake/setup_<script>.sh VENV STAMP, with a
# stamp of its own so that turning it on later does not reinstall torch.  Each waits for
# the one before it: one pip at a time in one venv.
set(PHANTORA_VENV_LAST_STAMP ${PHANTORA_TORCH_STAMP})
function(phantora_venv_addon option name script what)
  if(NOT ${option})
    return()
  endif()
  if(NOT PHANTORA_WITH_TORCH)
    message(FATAL_ERROR "${option} needs PHANTORA_WITH_TORCH (${name} runs on torch)")
  endif()
  set(stamp ${PHANTORA_TORCH_VENV}/.phantora-${name}-installed)
  add_custom_command(
    OUTPUT ${stamp}
    COMMAND ${CMAKE_SOURCE_DIR}/cmake/${script} ${PHANTORA_TORCH_VENV} ${stamp}
    DEPENDS ${CMAKE_SOURCE_DIR}/cmake/${script} ${PHANTORA_VENV_LAST_STAMP}
    COMMENT "Installing ${what} into ${PHANTORA_TORCH_VENV}"
    USES_TERMINAL)
  # Not in ALL: `./ns3 build --frameworks` (target phantora-frameworks) or `./ns3 test`.
  add_custom_target(phantora-${name}-venv DEPENDS ${stamp})
  add_dependencies(phantora-frameworks phantora-${name}-venv)
  set(PHANTORA_VENV_LAST_STAMP ${stamp} PARENT_SCOPE)
endfunction()

# The frameworks below, installed by one step (`./ns3 build --frameworks`, and `./ns3 test`
# before it runs their tests): a first run of the bundled example or of a torch script
# needs none of them, and DeepSpeed builds from source.
add_custom_target(phantora-frameworks)

# Megatron-core (PyPI wheel, no Transformer Engine or Apex) for examples/megatron/.
option(PHANTORA_WITH_MEGATRON "Install megatron-core into build/venv for examples/megatron and its tests" ON)
phantora_venv_addon(PHANTORA_WITH_MEGATRON megatron setup_megatron.sh
  "megatron-core==0.16.1 (PyPI wheel, no Transformer Engine/Apex)")

# DeepSpeed (PyPI sdist built with DS_BUILD_OPS=0: no compiled ops) for examples/deepspeed/
# and its tests (label deepspeed).  The install takes about half a minute with pip's cache
# warm (examples/deepspeed/README.md).
option(PHANTORA_WITH_DEEPSPEED "Install deepspeed into build/venv for examples/deepspeed and its tests" ON)
phantora_venv_addon(PHANTORA_WITH_DEEPSPEED deepspeed setup_deepspeed.sh
  "deepspeed==0.19.8 (PyPI sdist, DS_BUILD_OPS=0)")

# TorchTitan 0.2.2 (PyPI wheel and its pinned requirements, triton included) for
# examples/torchtitan/: the newest release that imports on torch 2.11.0.
option(PHANTORA_WITH_TORCHTITAN "Install torchtitan into build/venv for examples/torchtitan and its tests" ON)
phantora_venv_addon(PHANTORA_WITH_TORCHTITAN torchtitan setup_torchtitan.sh
  "torchtitan==0.2.2 (PyPI wheel, with triton and its pinned requirements)")
