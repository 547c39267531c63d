"""Address cards in the agent tree (spawners/local/protocol.md: PUT, GET; python/gasnetrun/agent):
three agents in a chain, linked in-process (no hosts, no ranks), show where a lookup goes, that
each card crosses each link once, that a lookup of a card not yet published waits for it, and
what a rank that breaks the rules gets."""
from __future__ import annotations

import pytest


@pytest.fixture
def agents_api(native):
    """The launcher's agent modules, from the optimized build (as the native fixture loads it)."""
    from gasnetrun.agent import agent, hub, protocol
    from gasnetrun import loop
    return agent, hub, protocol, loop


class Link:
    """Both ends of a parent-child connection, delivering at once; counts the questions."""

    def __init__(self, parent, child) -> None:
        self.parent, self.child = parent, child
        self.subtree = child.spec.subtree
        self.asked_down: list[int] = []
        self.asked_up: list[int] = []

    # the parent's view of the child (Downstream)
    def send_want(self, rank: int) -> None:
        self.asked_down.append(rank)
        self.child.find_card(rank, lambda flags, card: self.parent.card_found(rank, flags, card))

    # the child's view of the parent (Upstream)
    def want(self, rank: int) -> None:
        self.asked_up.append(rank)
        self.parent.find_card(rank, lambda flags, card: self.child.card_found(rank, flags, card))


class Top:
    """The launcher above the root agent."""

    def want(self, rank: int) -> None:
        raise AssertionError(f"the root asked beyond the job for rank {rank}")

    def output(self, rank: int, stream: int, data: bytes) -> None:
        pass


def agent(api, index: int, ranks: list[int], subtree: list[int]):
    agent_mod, _, _, loop_mod = api
    spec = agent_mod.AgentSpec(jobid=f"cardtest{index}", cookie="0" * 32, index=index,
                               host=f"h{index}", ranks=ranks, subtree=subtree, nranks=6,
                               argv=["true"], env={})
    return agent_mod.Agent(loop_mod.Loop(), spec, Top())


@pytest.fixture
def chain(agents_api):
    """Agent 0 (ranks 0-1) above agent 1 (ranks 2-3) above agent 2 (ranks 4-5)."""
    a0 = agent(agents_api, 0, [0, 1], list(range(6)))
    a1 = agent(agents_api, 1, [2, 3], [2, 3, 4, 5])
    a2 = agent(agents_api, 2, [4, 5], [4, 5])
    upper, lower = Link(a0, a1), Link(a1, a2)
    a0.children.append(upper)
    a1.children.append(lower)
    a1.upstream, a2.upstream = upper, lower
    yield (a0, a1, a2), (upper, lower)
    for a in (a0, a1, a2):
        a.hub.close()


def test_a_lookup_goes_to_the_ranks_agent_and_each_card_crosses_each_link_once(chain):
    (a0, a1, a2), (upper, lower) = chain
    a2._on_put(5, b"card-5")
    a0._on_put(0, b"card-0")
    got: list[tuple[int, bytes]] = []
    a0.find_card(5, lambda flags, card: got.append((flags, card)))  # down two levels
    a0.find_card(5, lambda flags, card: got.append((flags, card)))  # cached at the root
    a1.find_card(5, lambda flags, card: got.append((flags, card)))  # cached on the way
    assert got == [(0, b"card-5")] * 3
    assert upper.asked_down == [5] and lower.asked_down == [5]
    a2.find_card(0, lambda flags, card: got.append((flags, card)))  # up two levels
    a1.find_card(0, lambda flags, card: got.append((flags, card)))
    assert got[3:] == [(0, b"card-0")] * 2
    assert lower.asked_up == [0] and upper.asked_up == [0]


def test_a_lookup_of_a_card_not_yet_published_waits_for_it(chain):
    (a0, a1, a2), (upper, lower) = chain
    got: list[tuple[int, bytes]] = []
    a0.find_card(4, lambda flags, card: got.append((flags, card)))
    a0.find_card(4, lambda flags, card: got.append((flags, card)))
    assert got == [] and upper.asked_down == [4]  # one question for both
    a2._on_put(4, b"card-4")
    assert got == [(0, b"card-4")] * 2


def test_a_rank_that_ended_without_a_card_answers_its_lookups_empty(chain, agents_api):
    (a0, a1, a2), _ = chain
    CARD_ENDED = agents_api[2].CARD_ENDED
    got: list[tuple[int, bytes]] = []
    a0.find_card(3, lambda flags, card: got.append((flags, card)))
    a1.ended_ranks.add(3)
    a1.card_found(3, CARD_ENDED, b"")  # what the agent does when the rank's process ends
    a0.find_card(3, lambda flags, card: got.append((flags, card)))
    assert got == [(CARD_ENDED, b""), (CARD_ENDED, b"")]


def test_a_second_card_from_one_rank_and_a_rank_beyond_the_job(chain, agents_api):
    (a0, _, _), _ = chain
    RankProtocolError = agents_api[1].RankProtocolError
    a0._on_put(1, b"first")
    with pytest.raises(RankProtocolError, match="rank 1 published its address card twice"):
        a0._on_put(1, b"second")
    got: list[tuple[int, bytes]] = []
    a0.find_card(6, lambda flags, card: got.append((flags, card)))
    assert got == [(0, b"")]
