"""The costs of hashing a staff password (``urnkit.resolver.domain.PasswordHashing``), as a
property over every memory, pass count and lane count: taken within RFC 9106 §3.1's bounds
and at no less work than the least the settings allow, refused otherwise, naming the setting."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from urnkit.resolver.domain import DEFAULT_HASHING, PasswordHashing
from urnkit.resolver.domain.accounts import LEAST_HASHING_WORK

LARGEST = 2**32 - 1  # RFC 9106 §3.1: memory size and number of passes are 32-bit numbers
MOST_LANES = 2**24 - 1  # RFC 9106 §3.1: degree of parallelism p, 1 to 2^24-1


def test_the_default_is_rfc_9106s_second_recommended_option() -> None:
    # RFC 9106 §4: "If much less memory is available, a uniformly safe option is Argon2id with
    # t=3 iterations, p=4 lanes, m=2^(16) (64 MiB of RAM)".
    assert PasswordHashing(memory_kib=2**16, passes=3, lanes=4) == DEFAULT_HASHING


def test_the_least_work_is_owasps_weakest_one_lane_configuration() -> None:
    # OWASP's Password Storage Cheat Sheet: m=7168 (7 MiB), t=5, p=1 is the last of its list.
    assert LEAST_HASHING_WORK == 7168 * 5


@given(
    memory=st.integers(-1, 2**33),
    passes=st.integers(-1, 2**33),
    lanes=st.integers(-1, 2**25),
)
@example(memory=7168, passes=5, lanes=1)  # the least work, in OWASP's configuration
@example(memory=7167, passes=5, lanes=1)  # a KiB less
@example(memory=8, passes=4480, lanes=1)  # the least memory a lane may have, the least work
@example(memory=15, passes=2390, lanes=2)  # less than 8 KiB a lane
@example(memory=16, passes=2240, lanes=2)
@example(memory=LARGEST, passes=1, lanes=MOST_LANES)
@example(memory=LARGEST + 1, passes=1, lanes=1)
@example(memory=7168, passes=LARGEST + 1, lanes=1)
@example(memory=2**28, passes=1, lanes=MOST_LANES + 1)
@example(memory=35840, passes=0, lanes=1)
@example(memory=35840, passes=1, lanes=0)
def test_costs_are_taken_within_rfc_9106_at_the_least_work_or_refused_naming_a_setting(
    memory: int, passes: int, lanes: int
) -> None:
    allowed = (
        1 <= lanes <= MOST_LANES
        and 8 * lanes <= memory <= LARGEST
        and 1 <= passes <= LARGEST
        and memory * passes >= LEAST_HASHING_WORK
    )
    if not allowed:
        with pytest.raises(ValueError, match=r"^password_"):  # the setting's name
            PasswordHashing(memory_kib=memory, passes=passes, lanes=lanes)
        return
    hashing = PasswordHashing(memory_kib=memory, passes=passes, lanes=lanes)
    assert (hashing.memory_kib, hashing.passes, hashing.lanes) == (memory, passes, lanes)
