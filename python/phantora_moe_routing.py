"""Mixture-of-experts routing for simulated runs: `[workload] moe_routing` in a scenario.

Under the simulator kernels compute nothing, so a router's top-k choice, the per-expert
token counts summed from it and the all-to-all splits derived from them all read back as
zeros: no expert gets a token and the all-to-alls move nothing.  This module gives the
values the program reads back from its routing a chosen distribution instead, without
editing the training script.  phantora-cluster loads it into every Python rank (through
python/sitecustomize.py on PYTHONPATH) when the scenario asks for it, with

    PHANTORA_MOE_ROUTING = balanced | skew
    PHANTORA_MOE_SKEW    = the Zipf exponent s of "skew": expert e gets a share of the
                           token-expert pairs proportional to (e + 1) ** -s

How: Megatron-core's all-to-all token dispatcher (MoEAlltoAllTokenDispatcher) still runs
all its own kernels and collectives (the router, routing_map.sum, the count all-gather,
masked_select and its device-to-host count read), so the simulated timeline keeps them.
Then the values the host reads back are replaced at their source, on the device:

  * the per-expert counts and the all-to-all splits (input_splits, output_splits,
    output_splits_tp, num_global_tokens_per_local_expert, tokens_per_expert) become
    device tensors written by small host-to-device copies, whose bytes the interposer
    keeps (its value shadow), so the dispatcher's own device-to-host reads at its sync
    point return them;
  * the permutation (the top-k indices, expert-major) is written the same way, and the
    tokens and probabilities are gathered with it (index_select), so every tensor has the
    row count the splits say.

Every rank computes the same global plan from the same inputs (tokens per rank, experts,
top-k, the distribution), so senders and receivers agree on every split without talking.
Each rank's tokens pick top-k distinct experts; an expert's tokens are a contiguous
(cyclic) run of the rank's tokens.

Megatron-core's "allgather" dispatcher (MoEAllGatherTokenDispatcher: every rank gathers
the tokens of its TP x EP group, its experts take theirs with a mask) is served the same
way: its dispatch_postprocess runs as written, then the per-expert counts it returns (a
host tensor), the tokens (gathered with the plan's permutation, which its unpermute
scatters back) and the local probabilities become the plan's, every gathered source
rank's tokens routed as above.

Where it stops: only Megatron-core's "alltoall" and "allgather" dispatchers without
fused permutation (Transformer Engine's) and, for "alltoall", without token dropping
(capacity factor: that path already has static sizes and needs no switch); the "flex"
dispatcher and other MoE libraries read zeros as before (a warning names the former).
The extra host-to-device copies (a few per MoE layer and micro-batch, tens of bytes
except the permutation's 8 x tokens x top-k bytes) and index_selects are work a real run
does not do.
"""

import functools
import os
import sys
import warnings

_ROUTING = os.environ.get("PHANTORA_MOE_ROUTING", "")
_SKEW = float(os.environ.get("PHANTORA_MOE_SKEW", "0") or 0)


def expert_counts(tokens, experts, topk, skew):
    """Token-expert pairs per expert for one rank's `tokens` tokens: tokens x topk pairs
    shared in proportion to (e + 1) ** -skew, no expert above `tokens` (a token picks
    distinct experts), rounded by largest remainder so that they sum exactly."""
    if topk > experts:
        raise ValueError(f"top-{topk} routing over {experts} experts")
    pairs = tokens * topk
    weights = [(e + 1) ** -skew for e in range(experts)]
    counts = [0] * experts
    free = list(range(experts))
    left = pairs
    # Water-filling: experts whose share exceeds `tokens` are capped, the rest re-shared.
    while left > 0 and free:
        total = sum(weights[e] for e in free)
        shares = {e: left * weights[e] / total for e in free}
        capped = [e for e in free if counts[e] + shares[e] >= tokens]
        if capped:
            for e in capped:
                left -= tokens - counts[e]
                counts[e] = tokens
                free.remove(e)
            continue
        floors = {e: int(shares[e]) for e in free}
        for e in free:
            counts[e] += floors[e]
        rest = left - sum(floors.values())
        for e in sorted(free, key=lambda e: (-(shares[e] - floors[e]), e))[:rest]:
            counts[e] += 1
        left = 0
    return counts


def expert_major_indices(tokens, counts):
    """The permutation Megatron's permute() builds from the routing map: for each expert
    in order, the ids of the tokens routed to it, ascending.  Expert e takes the next
    counts[e] tokens of a cyclic walk over the rank's tokens, so each token is taken
    exactly topk times and never twice by one expert."""
    indices = []
    start = 0
    for count in counts:
        run = sorted((start + i) % tokens for i in range(count))
        indices.extend(run)
        start = (start + count) % tokens
    return indices


class _Plan:
    """One dispatch: what this rank sends and receives, as the chosen distribution says."""

    def __init__(self, dispatcher, tokens):
        d = dispatcher
        experts, local = d.num_experts, d.num_local_experts
        counts = expert_counts(tokens, experts, d.config.moe_router_topk, _SKEW)
        self.tokens = tokens
        self.counts = counts
        first = d.local_expert_indices[0]
        mine = counts[first:first + local]
        # Every rank of the TP x EP group routes the same shape, so the same counts.
        self.input_splits = [sum(counts[r * local:(r + 1) * local]) for r in range(d.ep_size)]
        self.output_splits = [sum(mine)] * d.ep_size
        self.output_splits_tp = [sum(mine) * d.ep_size] * d.tp_size
        self.per_local_expert = [mine] * (d.tp_size * d.ep_size)
        self.tokens_per_local_expert = [c * d.tp_size * d.ep_size for c in mine]
        self.indices = expert_major_indices(tokens, counts)
        # The same pairs in probs.T flattened ([experts, tokens]): expert e, token t.
        self.prob_indices = []
        i = 0
        for e, count in enumerate(counts):
            self.prob_indices.extend(e * tokens + t for t in self.indices[i:i + count])
            i += count


class _GatherPlan:
    """One allgather dispatch: the tokens of the TP x EP group gathered on every member,
    each source rank's routed as the distribution says (as _Plan routes them); what this
    rank's experts take of them, in the order Megatron's permute() lists them."""

    def __init__(self, dispatcher, gathered):
        d = dispatcher
        sources = d.tp_size * d.ep_size
        tokens = gathered // sources
        counts = expert_counts(tokens, d.config.num_moe_experts, d.config.moe_router_topk, _SKEW)
        order = expert_major_indices(tokens, counts)
        runs, i = [], 0  # runs[e]: one source's token ids routed to expert e, ascending
        for count in counts:
            runs.append(order[i:i + count])
            i += count
        local = list(d.local_expert_indices)
        self.gathered = gathered
        self.tokens_per_local_expert = [counts[e] * sources for e in local]
        # Expert-major over the gathered tokens: source r's token t is row r * tokens + t.
        self.indices = [r * tokens + t for e in local for r in range(sources) for t in runs[e]]
        # The same pairs in the local probabilities transposed ([local experts, gathered]).
        self.prob_indices = [j * gathered + r * tokens + t for j, e in enumerate(local)
                             for r in range(sources) for t in runs[e]]


_device_tensors = {}


def _device_tensor(values, device, dtype):
    """A tensor whose bytes reach the device by an asynchronous copy from pinned memory,
    as data does; the interposer keeps small ones (its value shadow), so reading it back
    returns them.  Made once per distinct content and kept: the rank's CPU time is its
    simulated host time, and a real run spends none on this."""
    import torch

    key = (tuple(values) if not values or not isinstance(values[0], list)
           else tuple(map(tuple, values)), str(device), dtype)
    tensor = _device_tensors.get(key)
    if tensor is None:
        host = torch.tensor(values, dtype=dtype).pin_memory()
        tensor = host.to(device, non_blocking=True)
        _device_tensors[key] = tensor
    return tensor


_plans = {}


def _plan_for(dispatcher, tokens):
    d = dispatcher
    key = (tokens, d.num_experts, d.num_local_experts, d.local_expert_indices[0],
           d.config.moe_router_topk, d.ep_size, d.tp_size)
    plan = _plans.get(key)
    if plan is None:
        plan = _plans[key] = _Plan(d, tokens)
    return plan


_current_plan = None


def _patch_dispatcher(module):
    import torch

    cls = module.MoEAlltoAllTokenDispatcher
    original_preprocess = cls.preprocess
    original_permute = module.permute

    @functools.wraps(original_preprocess)
    def preprocess(self, routing_map):
        global _current_plan
        result = original_preprocess(self, routing_map)
        _current_plan = None
        if self.drop_and_pad or self.config.moe_permute_fusion:
            return result
        plan = _plan_for(self, routing_map.size(0))
        device = routing_map.device
        if self.ep_size > 1 or self.tp_size > 1:
            self.input_splits = _device_tensor(plan.input_splits, device, torch.long)
            self.output_splits = _device_tensor(plan.output_splits, device, torch.long)
            self.output_splits_tp = _device_tensor(plan.output_splits_tp, device, torch.long)
        if self.num_local_experts > 1:
            self.num_global_tokens_per_local_expert = _device_tensor(
                plan.per_local_expert, device, torch.long)
        _current_plan = plan
        return _device_tensor(plan.tokens_per_local_expert, device, torch.long)

    @functools.wraps(original_permute)
    def permute(tokens, routing_map, probs=None, num_out_tokens=None, fused=False,
                drop_and_pad=False):
        global _current_plan
        # The program's own permutation first: its kernels and its count read stay on
        # the timeline (it reads zero rows).
        out = original_permute(tokens, routing_map, probs=probs, num_out_tokens=num_out_tokens,
                               fused=fused, drop_and_pad=drop_and_pad)
        plan, _current_plan = _current_plan, None
        if plan is None or fused or drop_and_pad or plan.tokens != tokens.size(0):
            return out
        sorted_indices = _device_tensor(plan.indices, tokens.device, torch.long)
        permuted = tokens.index_select(0, sorted_indices)
        permuted_probs = None
        if probs is not None:
            permuted_probs = probs.T.contiguous().view(-1).index_select(
                0, _device_tensor(plan.prob_indices, tokens.device, torch.long))
        return permuted, permuted_probs, sorted_indices

    cls.preprocess = preprocess
    module.permute = permute

    gather_cls = getattr(module, "MoEAllGatherTokenDispatcher", None)
    if gather_cls is not None:
        _patch_gather_dispatcher(gather_cls)

    for name in ("MoEFlexTokenDispatcher",):
        other = getattr(module, name, None)
        if other is None:
            continue
        original_init = other.__init__

        @functools.wraps(original_init)
        def init(self, *args, _name=name, _init=original_init, **kwargs):
            warnings.warn(f"phantora: [workload] moe_routing does not reach Megatron-core's "
                          f"{_name}; its routing reads zeros (use moe_token_dispatcher_type="
                          f"'alltoall')", stacklevel=2)
            _init(self, *args, **kwargs)

        other.__init__ = init


_gather_plans = {}


def _patch_gather_dispatcher(cls):
    """MoEAllGatherTokenDispatcher: every rank gathers all tokens of its TP x EP group and
    its experts take theirs with a mask.  Its dispatch_postprocess runs as written (the
    mask slice, routing_map.sum and its device-to-host read, permute's masked_select and
    its count read, all on the timeline, all reading zeros); then what it returns is that
    of the plan: the per-expert counts (a host tensor, as its own .cpu() gives), the
    tokens gathered with the plan's permutation, which combine_preprocess's unpermute
    scatters back, and the local probabilities gathered the same way."""
    import torch

    original = cls.dispatch_postprocess

    @functools.wraps(original)
    def dispatch_postprocess(self, hidden_states, probs):
        result = original(self, hidden_states, probs)
        gathered = hidden_states.size(0)
        sources = self.tp_size * self.ep_size
        if self.config.moe_permute_fusion or gathered % sources:
            return result
        key = (gathered, self.config.num_moe_experts, tuple(self.local_expert_indices),
               self.config.moe_router_topk, self.ep_size, self.tp_size)
        plan = _gather_plans.get(key)
        if plan is None:
            plan = _gather_plans[key] = _GatherPlan(self, gathered)
        device = hidden_states.device
        sorted_indices = _device_tensor(plan.indices, device, torch.long)
        permuted = hidden_states.index_select(0, sorted_indices)
        first, last = self.local_expert_indices[0], self.local_expert_indices[-1]
        self.local_probs = probs[:, first:last + 1].T.contiguous().view(-1).index_select(
            0, _device_tensor(plan.prob_indices, device, torch.long))
        self.reversed_local_input_permutation_mapping = sorted_indices
        tokens_per_expert = torch.tensor(plan.tokens_per_local_expert, dtype=torch.long)
        return permuted, tokens_per_expert, self.local_probs

    cls.dispatch_postprocess = dispatch_postprocess


_TARGET = "megatron.core.transformer.moe.token_dispatcher"


class _PatchOnImport:
    """A meta-path finder that patches the dispatcher module right after it is loaded."""

    def find_spec(self, name, path=None, target=None):
        if name != _TARGET:
            return None
        import importlib.machinery

        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original_exec = loader.exec_module

        def exec_module(module):
            original_exec(module)
            _patch_dispatcher(module)

        loader.exec_module = exec_module
        return spec


def install():
    if _ROUTING not in ("balanced", "skew"):
        if _ROUTING:
            raise SystemExit(f"phantora: PHANTORA_MOE_ROUTING={_ROUTING!r}: expected "
                             f"'balanced' or 'skew'")
        return
    if _TARGET in sys.modules:
        _patch_dispatcher(sys.modules[_TARGET])
    else:
        sys.meta_path.insert(0, _PatchOnImport())
