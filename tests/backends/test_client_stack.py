"""ClientStack: one call per client at a time, the last given back lent first, closed clients never lent."""

from __future__ import annotations

import multiprocessing
import threading

from lyra_lab.backends._client_stack import ClientStack


class FakeClient:
    """A fake HTTP client: counts the calls using it at once and whether it was closed."""

    def __init__(self, number: int):
        self.number = number
        self.closed = False
        self.using = 0
        self.most_at_once = 0

    def close(self) -> None:
        self.closed = True


def _stack() -> tuple[ClientStack[FakeClient], list[FakeClient]]:
    made: list[FakeClient] = []

    def make() -> FakeClient:
        made.append(FakeClient(len(made)))
        return made[-1]

    return ClientStack(make), made


def test_calls_one_after_another_share_one_client():
    stack, made = _stack()
    for _ in range(5):
        with stack.client() as client:
            assert client is made[0]
    assert len(made) == 1 and len(stack) == 1


def test_calls_at_once_each_get_their_own_client_and_no_more_are_made_than_were_in_flight():
    stack, made = _stack()
    at_once = 6
    barrier = threading.Barrier(at_once)

    def call() -> None:
        for _ in range(20):
            with stack.client() as client:
                client.using += 1
                client.most_at_once = max(client.most_at_once, client.using)
                barrier.wait(timeout=5)  # all six hold a client at the same moment
                client.using -= 1

    threads = [threading.Thread(target=call) for _ in range(at_once)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == at_once
    assert all(client.most_at_once == 1 for client in made)


def test_the_client_given_back_last_is_lent_first():
    stack, made = _stack()
    with stack.client() as first, stack.client() as second:
        pass  # second is given back first, then first
    with stack.client() as again:
        assert again is first
    assert second is made[1]


def test_close_closes_every_client_and_one_lent_then_is_not_lent_again():
    stack, made = _stack()
    with stack.client() as lent:
        with stack.client() as idle:
            pass  # given back while the other is still lent
        stack.close()
        assert idle.closed and lent.closed
    with stack.client() as fresh:
        assert fresh is made[2] and not fresh.closed
    assert len(stack) == 1


def _number_lent_in_child(stack: ClientStack[FakeClient], made: list[FakeClient], out: multiprocessing.Queue) -> None:
    with stack.client() as client:
        out.put((client.number, len(made), client is made[0]))


def test_a_forked_child_makes_its_own_clients_and_leaves_its_parents_open():
    stack, made = _stack()
    with stack.client():
        pass  # the parent has one idle client
    out: multiprocessing.Queue = multiprocessing.get_context("fork").Queue()
    child = multiprocessing.get_context("fork").Process(target=_number_lent_in_child, args=(stack, made, out))
    child.start()
    number, made_in_child, parents = out.get(timeout=30)
    child.join(timeout=30)
    assert (number, made_in_child, parents) == (1, 2, False)  # a second client, made in the child
    assert not made[0].closed and len(stack) == 1  # the parent's, untouched
