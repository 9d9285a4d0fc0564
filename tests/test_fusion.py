"""Unit tests of the headline fusion: strength-gated RRF, its floors, weights and tie-breaks."""

from __future__ import annotations

import pytest

from crib_plugin.core.records import ChannelHit, ChannelResult
from crib_plugin.read.fusion import RRF_K, fit_budget, fuse, item_cost


def result(channel: str, *hits: tuple[int, float], ran: bool = True, floor: set[int] = frozenset()) -> ChannelResult:
    """A channel's report: (entry id, strength) pairs, best first; ids in ``floor`` failed the floor."""
    return ChannelResult(channel=channel, ran=ran, hits=[
        ChannelHit(entry_id=i, rank=r, score=s, channel=channel, passed_floor=i not in floor, strength=s)
        for r, (i, s) in enumerate(hits, start=1)
    ])


def test_score_is_the_sum_of_strength_over_k_plus_rank() -> None:
    fused = fuse([result("fts", (1, 1.0), (2, 0.5)), result("vector", (2, 1.0))])
    scores = {f.entry_id: f.score for f in fused}
    assert scores[1] == pytest.approx(1 / (RRF_K + 1))
    assert scores[2] == pytest.approx(0.5 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert [f.entry_id for f in fused] == [2, 1]  # agreement beats one strong channel
    assert set(fused[0].channels) == {"fts", "vector"}


def test_a_weak_neighbour_barely_counts_and_strength_is_clamped() -> None:
    fused = {f.entry_id: f.score for f in fuse([result("vector", (1, 0.01), (2, 7.0), (3, -1.0))])}
    assert fused[1] == pytest.approx(0.01 / (RRF_K + 1))
    assert fused[2] == pytest.approx(1.0 / (RRF_K + 2))  # above 1 counts as 1
    assert fused[3] == 0.0  # below 0 counts as 0


def test_the_facts_channel_takes_no_part_in_the_order_but_counts_as_evidence() -> None:
    """The order leaves the facts channel out (RANKING_WEIGHTS); the evidence the per-entry cut
    judges on is the plain strength-gated sum of every channel, as before."""
    fused = fuse([result("facts", (1, 1.0), (2, 1.0)), result("fts", (2, 0.5), (3, 1.0))], weights={"facts": 2.0})
    assert [f.entry_id for f in fused] == [3, 2, 1]
    by_id = {f.entry_id: f for f in fused}
    assert by_id[1].score == 0.0 and by_id[1].evidence == pytest.approx(2 / (RRF_K + 1))
    assert by_id[2].score == pytest.approx(0.5 / (RRF_K + 1))
    assert by_id[2].evidence == pytest.approx(2 / (RRF_K + 2) + 0.5 / (RRF_K + 1))
    assert by_id[3].evidence == by_id[3].score == pytest.approx(1 / (RRF_K + 2))
    assert "facts" in by_id[1].channels  # still found by it (the gate and --explain read that)


def test_weights_scale_a_channel_and_unknown_channels_weigh_one() -> None:
    fused = {f.entry_id: f.score for f in fuse([result("fts", (1, 1.0)), result("plugin", (2, 1.0))], weights={"fts": 2.0})}
    assert fused[1] == pytest.approx(2 / (RRF_K + 1)) and fused[2] == pytest.approx(1 / (RRF_K + 1))


def test_ties_break_on_best_single_rank_then_newer_entry() -> None:
    # 5 and 9 both score 1/(k+1) + 1/(k+2): the same score and the same best rank
    a = result("fts", (5, 1.0), (9, 1.0))
    b = result("vector", (9, 1.0), (5, 1.0))
    fused = fuse([a, b])
    assert fused[0].score == pytest.approx(fused[1].score)
    assert [f.entry_id for f in fused] == [9, 5]  # same best rank (1): the newer (larger id) first
    c = fuse([result("fts", (4, 1.0)), result("vector", (7, 0.0), (8, 1.0)), result("plugin", (6, 0.5))])
    # 7 has strength 0 (score 0): last; 4 (rank 1) is ahead of 8 (rank 2) on score
    ordered = [f.entry_id for f in c]
    assert ordered.index(4) < ordered.index(8) and ordered[-1] == 7
    same_score_diff_rank = fuse([result("fts", (1, 0.0)), result("vector", (3, 0.0), (2, 0.0))])
    assert [f.entry_id for f in same_score_diff_rank] == [3, 1, 2]  # all 0: rank 1 first (newer first), then rank 2


def test_fit_budget_is_greedy_in_rank_order_and_skips_what_does_not_fit() -> None:
    contents = ["a" * 100, "b" * 5000, "c" * 50]
    kept, dropped = fit_budget(contents, 200 + item_cost(contents[0]) + item_cost(contents[2]))
    assert kept == [0, 2] and dropped == [1]
    assert fit_budget(contents, 10_000, max_items=1) == ([0], [1, 2])
