"""``warn_once`` (``c10/exception.py``, torch's ``TORCH_WARN_ONCE``): once per place and process,
whatever the threads; a reset lets a place warn again."""
import sys
import threading
import warnings

from internals.c10.exception import reset_warn_once, warn_once


def test_a_place_warns_once_among_many_threads():
    site = ("test", "many threads")
    reset_warn_once(site)
    start = threading.Barrier(8)
    answers = []

    def warn():
        start.wait()
        answers.append(warn_once(site, "the message"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        threads = [threading.Thread(target=warn) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert sorted(answers) == [False] * 7 + [True]
    assert [str(w.message) for w in caught] == ["the message"]


def test_places_are_apart_and_a_reset_lets_one_warn_again():
    first, second = ("test", "first"), ("test", "second")
    for site in (first, second):
        reset_warn_once(site)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warn_once(first, "one", DeprecationWarning)
        warn_once(first, "one again")
        warn_once(second, "two")
        reset_warn_once(first)
        warn_once(first, "one after the reset")
    assert [(w.category, str(w.message)) for w in caught] == [
        (DeprecationWarning, "one"), (UserWarning, "two"), (UserWarning, "one after the reset")]


def test_the_warning_points_at_the_caller_of_the_place():
    site = ("test", "stacklevel")
    reset_warn_once(site)

    def place():
        warn_once(site, "here", stacklevel=2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        place()
    assert (caught[0].filename, caught[0].lineno) == (__file__, line)
