"""Folded runs (docs/folding.md): a gloo process group with absent members fails at once.

Folded, only replica 0 of each model-parallel coordinate runs.  NCCL groups with absent
members are simulated by the bridge, but gloo connects every member of a group to every
other over TCP when the group is created, and an absent member never connects: the live
ranks would wait in the constructor until torch's timeout, the bridge seeing nothing but a
rank busy on its CPU.  This guard makes that creation raise, naming the group and its
absent ranks.  PHANTORA_FOLD is "REPLICAS STRIDE", set by
phantora-cluster --fold."""

import importlib.abc
import importlib.machinery
import os
import sys

_C10D = "torch.distributed.distributed_c10d"


def _layout():
    replicas, stride = (int(v) for v in os.environ["PHANTORA_FOLD"].split())
    return replicas, stride


def _absent(ranks):
    replicas, stride = _layout()
    return [r for r in ranks if (r // stride) % replicas != 0]


def _patch(module):
    helper = getattr(module, "_new_process_group_helper", None)
    if helper is None or getattr(helper, "_phantora_fold_guard", False):
        return

    def guarded(group_size, group_rank, global_ranks_in_group, backend, *args, **kwargs):
        ranks = list(global_ranks_in_group) or list(range(group_size))
        # Every rank calls it for every group; only a member's call connects.
        if "gloo" in str(backend).lower() and group_rank is not None and group_rank >= 0:
            absent = _absent(ranks)
            if absent:
                raise RuntimeError(
                    f"phantora: cannot fold: a gloo process group over ranks {ranks[:16]}"
                    f"{'...' if len(ranks) > 16 else ''} has absent members ({absent[:8]}"
                    f"{'...' if len(absent) > 8 else ''}), which never connect to it; use NCCL "
                    "groups only or run unfolded (docs/folding.md)")
        return helper(group_size, group_rank, global_ranks_in_group, backend, *args, **kwargs)

    guarded._phantora_fold_guard = True
    module._new_process_group_helper = guarded


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != _C10D:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path, target)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _patch(module)

        spec.loader.exec_module = exec_module
        return spec


def install():
    if _C10D in sys.modules:
        _patch(sys.modules[_C10D])
    elif not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
