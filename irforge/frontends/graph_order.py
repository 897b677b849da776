"""Dependency order of a framework graph's nodes (Kahn's algorithm), shared by importers:
exporters do not always write nodes producers first, and a cycle must be named, not looped on."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Hashable, Iterable, Mapping
from typing import TypeVar

K = TypeVar("K", bound=Hashable)


def dependency_order(deps: Mapping[K, Iterable[K]]) -> tuple[list[K], list[K]]:
    """The keys of `deps`, each after the keys it depends on, and the keys left over (on a
    cycle or after one), both in the mapping's order where the dependencies leave a choice."""
    consumers: dict[K, list[K]] = defaultdict(list)
    pending: dict[K, int] = {}
    for key, needs in deps.items():
        needs = list(needs)
        pending[key] = len(needs)
        for need in needs:
            consumers[need].append(key)
    ready = deque(key for key, count in pending.items() if count == 0)
    order: list[K] = []
    while ready:
        key = ready.popleft()
        order.append(key)
        for user in consumers[key]:
            pending[user] -= 1
            if pending[user] == 0:
                ready.append(user)
    return order, [key for key, count in pending.items() if count]
