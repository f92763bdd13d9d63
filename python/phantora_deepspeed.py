"""DeepSpeed's JIT-compiled ops under the simulator: a clear error instead of a build.

DeepSpeed installed with DS_BUILD_OPS=0 (cmake/setup_deepspeed.sh) compiles an op the
first time it is asked for (FusedAdam when the config names "Adam"/"AdamW" and no
client optimizer is given, CPU Adam for offload, ...): torch.utils.cpp_extension runs
ninja and nvcc for minutes inside the rank, and a rank ended meanwhile leaves a lock in
~/.cache/torch_extensions that stalls every later run without a word.  Phantora serves
no compiled DeepSpeed op, so the op builder's JIT entry point raises at once, naming the
op and what to use instead.  The patch is applied when DeepSpeed's op builder module
is imported; nothing else in DeepSpeed is touched."""

import importlib.abc
import importlib.machinery
import sys

_BUILDER = "deepspeed.ops.op_builder.builder"


def _refuse_jit(self, verbose=True):
    raise RuntimeError(
        f"DeepSpeed op '{self.name}' ({type(self).__name__}) needs JIT compilation "
        "(nvcc + ninja), which Phantora does not serve. Use a torch optimizer as DeepSpeed's "
        "client optimizer (deepspeed.initialize(optimizer=torch.optim.AdamW(...))) or "
        '"torch_adam": true in the config\'s optimizer params instead of FusedAdam; '
        "see examples/deepspeed/README.md")


def _patch(module):
    builder = getattr(module, "OpBuilder", None)
    if builder is not None:
        builder.jit_load = _refuse_jit


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _BUILDER:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        run = loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        loader.exec_module = exec_module
        return spec


def install():
    if _BUILDER in sys.modules:
        _patch(sys.modules[_BUILDER])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
