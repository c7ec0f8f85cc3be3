"""A provenance circuit as the representation of a model: one node per fact, one gate per derivation.

The evaluator computes the Boolean closure and records, for every rule instance it finds,
a gate: the fact it derives (its head) and the facts of its body. A fact holds when an
assertion stating it survives, when it is background knowledge, or when every body fact of
one of its gates holds; on a cycle that is read as a least fixpoint (a fact stands only on
a well-founded derivation). The circuit is exact: nothing is capped. Its size is the join
output, whatever the number of alternative derivations, so provenance costs what the
closure costs; sums of products (``gate_labels.py``) are a display computed on demand.

Nodes are numbers ``0 .. size-1``. Gates live in flat arrays (heads, end offsets, bodies,
and the rule each instantiates) so that a circuit of millions of derivations is a few bytes
per derivation.
Variables (assertion ids) are numbers of a ``VariableTable``.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping

from polygraph_logic.provenance.circuit import settle


class Circuit:
    """Facts as nodes, derivations as gates, assertions as the variables stating leaves."""

    __slots__ = ("table", "flags", "stated", "heads", "ends", "bodies", "rules", "rounds", "_by_head", "_by_body")

    BASE = 1  # flag: the fact holds outright (background knowledge, or a gate with an empty body)

    def __init__(self, table):
        self.table = table  # VariableTable: assertion id <-> number
        self.flags = bytearray()  # per node
        self.stated: dict[int, list[int]] = {}  # node -> numbers of the assertions stating it
        self.heads = array("i")
        self.ends = array("q")
        self.bodies = array("i")
        self.rules = array("i")  # per gate: the number of the rule it instantiates (-1: not said)
        self.rounds = array("q")  # the first node each round of an evaluation made, in order
        self._by_head = None  # CSR (offsets, gates), built on first use
        self._by_body = None

    @property
    def size(self) -> int:
        """Returns the number of nodes."""
        return len(self.flags)

    @property
    def gate_count(self) -> int:
        """Returns the number of gates (derivations recorded)."""
        return len(self.heads)

    def node(self) -> int:
        """Returns a new node (a fact not known before)."""
        self.flags.append(0)
        return len(self.flags) - 1

    def nodes(self, n: int) -> range:
        """Returns ``n`` new consecutive nodes."""
        start = len(self.flags)
        self.flags.extend(bytes(n))
        return range(start, start + n)

    def hold(self, node: int) -> None:
        """Marks a node as background knowledge: it holds whatever is deleted."""
        self.flags[node] |= self.BASE

    def state(self, node: int, assertion: str) -> None:
        """Records that assertion ``assertion`` states the fact of ``node``."""
        number = self.table.intern(assertion)
        found = self.stated.get(node)
        if found is None:
            self.stated[node] = [number]
        elif number not in found:
            found.append(number)

    def forget_indexes(self) -> None:
        """Drops the indexes ``by_head`` and ``by_body`` built so far: gates are about to be
        appended to ``heads``, ``bodies`` and ``ends`` (a gate's body nodes end at its ``ends``)."""
        self._by_head = self._by_body = None

    def gate_body(self, gate: int) -> array:
        """Returns the body nodes of a gate."""
        return self.bodies[self.ends[gate - 1] if gate else 0:self.ends[gate]]

    def by_head(self) -> tuple[array, array]:
        """Returns (offsets, gates): the gates of node ``n`` are ``gates[offsets[n]:offsets[n+1]]``."""
        if self._by_head is None:
            self._by_head = _csr(self.size, ((h, g) for g, h in enumerate(self.heads)), len(self.heads))
        return self._by_head

    def by_body(self) -> tuple[array, array]:
        """Returns (offsets, gates): the gates whose body holds node ``n``, as ``by_head``."""
        if self._by_body is None:
            heads, ends, bodies = self.heads, self.ends, self.bodies

            def pairs():
                start = 0
                for g in range(len(heads)):
                    end = ends[g]
                    for i in range(start, end):
                        yield bodies[i], g
                    start = end

            self._by_body = _csr(self.size, pairs(), len(bodies))
        return self._by_body

    def roots(self, deleted: frozenset[int]) -> list[int]:
        """Returns the nodes a deleted assertion (by number) states."""
        return [node for node, numbers in self.stated.items() if not deleted.isdisjoint(numbers)]

    def cone(self, starts: Iterable[int]) -> list[int]:
        """Returns every node whose derivations reach one of ``starts`` (``starts`` included)."""
        offsets, gates = self.by_body()
        heads = self.heads
        seen = bytearray(self.size)
        out = []
        stack = list(starts)
        while stack:
            node = stack.pop()
            if seen[node]:
                continue
            seen[node] = 1
            out.append(node)
            for i in range(offsets[node], offsets[node + 1]):
                head = heads[gates[i]]
                if not seen[head]:
                    stack.append(head)
        return out

    def holding(self, cone: list[int], deleted: frozenset[int]) -> set[int]:
        """Returns the nodes of ``cone`` that still hold when the ``deleted`` assertions are false.

        Nodes outside the cone hold (none of their derivations reaches a deleted assertion);
        inside it, the least fixpoint by counting (``circuit.settle``): linear in the gates of
        the cone."""
        flags, stated = self.flags, self.stated
        outright = {node for node in cone if flags[node] & self.BASE
                    or any(n not in deleted for n in stated.get(node, ()))}
        return settle(cone, set(cone), outright, _Gates(self))


class _Gates(Mapping):
    """A circuit's gates as ``{node: [body, ...]}``, read from its index by head."""

    def __init__(self, circuit: Circuit):
        self.circuit = circuit
        self.offsets, self.gates = circuit.by_head()

    def __getitem__(self, node: int) -> list:
        body = self.circuit.gate_body
        return [body(self.gates[i]) for i in range(self.offsets[node], self.offsets[node + 1])]

    def get(self, node: int, default=()):
        return self[node]

    def __iter__(self):
        return iter(range(self.circuit.size))

    def __len__(self) -> int:
        return self.circuit.size


def _csr(size: int, pairs, count: int) -> tuple[array, array]:
    """Groups ``(node, gate)`` pairs by node: offsets of ``size + 1`` and the gates in order."""
    pairs = list(pairs)
    offsets = array("q", bytes(8 * (size + 1)))
    for node, _ in pairs:
        offsets[node + 1] += 1
    for n in range(size):
        offsets[n + 1] += offsets[n]
    fill = array("q", offsets)
    gates = array("i", bytes(4 * count))
    for node, gate in pairs:
        gates[fill[node]] = gate
        fill[node] += 1
    return offsets, gates


__all__ = ["Circuit"]
