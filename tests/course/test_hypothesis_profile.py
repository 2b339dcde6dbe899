"""The property tests run under the profile ``tests/conftest.py`` loads, derandomized, even
after torch's test utilities (which load a profile of their own on import) have been imported."""
import os

import hypothesis
import torch.testing._internal.common_methods_invocations  # noqa: F401  (imports common_utils)


def test_the_course_profile_is_in_force():
    current = hypothesis.settings.default
    expected = hypothesis.settings.get_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))
    assert current.max_examples == expected.max_examples
    assert current.derandomize and current.deadline is None and current.database is None


def test_the_thorough_profile_draws_more_of_the_same():
    course, thorough = (hypothesis.settings.get_profile(name) for name in ("course", "thorough"))
    assert thorough.max_examples > course.max_examples
    assert thorough.derandomize and thorough.deadline is None
