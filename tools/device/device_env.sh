# Usage: . "$(dirname "$0")/device_env.sh"  (in a script of tools/device/ run from the
# repository root on the GPU machine; sets B, G, LD_LIBRARY_PATH and NCCL_NVLS_ENABLE=0)
# Sourced by the record_*_on_device.sh scripts, from the repository root on the GPU machine:
# the binaries built here and carried in build-devbin/ (gpu_profiler, gpu_profiler_gpu,
# libphantora_recorder.so, lib/), the CUDA and CUPTI libraries they load, and NVLink
# multicast off, as the device notes ask (KINDS.md).
B=$PWD/build-devbin
export LD_LIBRARY_PATH=$B/lib:/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64:${LD_LIBRARY_PATH:-}
export NCCL_NVLS_ENABLE=0
G=$B/gpu_profiler
