"""The MoE routing plans of python/phantora_moe_routing.py (no torch needed): every token
picks top-k distinct experts, the counts follow the distribution and sum exactly."""

import itertools
import os
import sys
import unittest
from collections import Counter

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import phantora_moe_routing as routing  # noqa: E402


class Plans(unittest.TestCase):
    def check(self, tokens, experts, topk, skew):
        counts = routing.expert_counts(tokens, experts, topk, skew)
        self.assertEqual(sum(counts), tokens * topk)
        self.assertTrue(all(0 <= c <= tokens for c in counts), counts)
        indices = routing.expert_major_indices(tokens, counts)
        # each token exactly top-k times, never twice for one expert
        self.assertEqual(Counter(indices), {t: topk for t in range(tokens)})
        start = 0
        for c in counts:
            run = indices[start:start + c]
            self.assertEqual(len(set(run)), c)
            self.assertEqual(run, sorted(run))
            start += c
        return counts

    def test_balanced_is_even(self):
        self.assertEqual(self.check(2048, 8, 2, 0.0), [512] * 8)
        counts = self.check(100, 8, 3, 0.0)
        self.assertLessEqual(max(counts) - min(counts), 1)

    def test_skew_falls_with_the_expert_index(self):
        counts = self.check(4096, 16, 2, 1.0)
        self.assertEqual(counts, sorted(counts, reverse=True))
        self.assertGreater(counts[0], 3 * counts[-1])

    def test_a_popular_expert_is_capped_at_one_pair_per_token(self):
        self.assertEqual(self.check(128, 4, 2, 1.5), [128, 67, 37, 24])
        self.assertEqual(self.check(10, 2, 2, 5.0), [10, 10])

    def test_many_shapes(self):
        for tokens, experts, topk, skew in itertools.product(
                [1, 7, 64, 1000], [2, 5, 8], [1, 2], [0.0, 0.5, 2.0]):
            if topk <= experts:
                self.check(tokens, experts, topk, skew)

    def test_more_experts_per_token_than_experts_is_refused(self):
        with self.assertRaises(ValueError):
            routing.expert_counts(10, 2, 3, 0.0)


class _Config:
    def __init__(self, experts, topk):
        self.num_moe_experts = experts
        self.moe_router_topk = topk


class _GatherDispatcher:
    """What _GatherPlan reads of Megatron's MoEAllGatherTokenDispatcher."""

    def __init__(self, experts, topk, ep, tp, ep_rank):
        self.config = _Config(experts, topk)
        self.ep_size, self.tp_size = ep, tp
        local = experts // ep
        self.local_expert_indices = list(range(ep_rank * local, (ep_rank + 1) * local))


class GatherPlans(unittest.TestCase):
    def test_the_permutation_is_what_permute_makes_of_the_gathered_routing_map(self):
        tokens, experts, topk, ep, tp = 48, 8, 2, 2, 2
        sources, gathered = ep * tp, 48 * ep * tp
        saved = routing._SKEW
        self.addCleanup(setattr, routing, "_SKEW", saved)
        for skew, ep_rank in itertools.product([0.0, 1.5], range(ep)):
            routing._SKEW = skew
            d = _GatherDispatcher(experts, topk, ep, tp, ep_rank)
            plan = routing._GatherPlan(d, gathered)
            # The routing map every source rank holds under the plan, gathered.
            counts = routing.expert_counts(tokens, experts, topk, skew)
            order = routing.expert_major_indices(tokens, counts)
            chosen, start = set(), 0
            for e, c in enumerate(counts):
                chosen |= {(t, e) for t in order[start:start + c]}
                start += c
            local = d.local_expert_indices
            # permute(): for each local expert, the gathered rows routed to it, ascending.
            per_expert = [[g for g in range(gathered) if (g % tokens, e) in chosen]
                          for e in local]
            self.assertEqual(plan.indices, [g for rows in per_expert for g in rows])
            self.assertEqual(plan.tokens_per_local_expert, [len(rows) for rows in per_expert])
            # probs[:, local].T flattened: local expert j's row g is j * gathered + g.
            self.assertEqual(plan.prob_indices, [j * gathered + g
                                                 for j, rows in enumerate(per_expert)
                                                 for g in rows])

if __name__ == "__main__":
    unittest.main()
