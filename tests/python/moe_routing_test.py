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


if __name__ == "__main__":
    unittest.main()
