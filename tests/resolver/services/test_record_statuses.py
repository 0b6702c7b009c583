"""Records by status over time (``OverviewService.record_statuses``), in process, on SQLite and
PostgreSQL: how many records were reserved, active and deactivated at the end of each day, as
derived from the records' creation and their history, with the clock set to chosen days."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from services_support import HERE, Principals, all_records

from urnkit.resolver.domain import STATUSES, UnacceptableError
from urnkit.resolver.services import Services
from urnkit.resolver.services import overview as overview_module
from urnkit.resolver.services import records as records_module
from urnkit.resolver.store.queries import records as record_queries

FIRST = date(2026, 3, 1)
Clock = Callable[[date], None]


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """Set the day (UTC, at noon) that registration, history and the statistics take as now."""

    def set_day(day: date) -> None:
        moment = datetime(day.year, day.month, day.day, 12, tzinfo=UTC)
        for module in (records_module, record_queries, overview_module):
            monkeypatch.setattr(module, "now", lambda: moment)

    return set_day


def by_day(counts: list[tuple[str, date, int]]) -> dict[date, tuple[int, ...]]:
    """(status, day, records) as {day: (reserved, active, deactivated)}."""
    days: dict[date, dict[str, int]] = {}
    for status, day, count in counts:
        days.setdefault(day, {})[status] = count
    return {day: tuple(counts[s] for s in STATUSES) for day, counts in days.items()}


def test_statuses_at_the_end_of_each_day(services: Services, who: Principals, clock: Clock) -> None:
    day = [FIRST + timedelta(days=n) for n in range(5)]
    clock(day[0])
    services.records.put(who.demo, "urn:nbn:fi:demo-a", HERE, {})
    services.records.put(who.demo, "urn:nbn:fi:demo-b", HERE, {})
    (first_reserved,) = services.records.generate(who.other, "fi:demox")
    clock(day[1])
    services.records.deactivate(who.demo, "urn:nbn:fi:demo-a", None, [])
    clock(day[2])
    services.records.put(who.other, first_reserved.urn, HERE, {})  # reserved -> active
    services.records.generate(who.other, "fi:demox")
    services.records.patch(who.demo, "urn:nbn:fi:demo-b", {"metadata": {"title": "B"}})
    clock(day[3])
    services.records.deactivate(who.demo, "urn:nbn:fi:demo-b", None, [])
    clock(day[4])
    services.records.put(who.demo, "urn:nbn:fi:demo-c", HERE, {})

    statuses = services.overview.record_statuses(7)
    newest_first = [day[4] - timedelta(n) for n in range(7) for _ in STATUSES]
    assert [d for _, d, _ in statuses] == newest_first
    assert by_day(statuses) == {
        day[0] - timedelta(2): (0, 0, 0),
        day[0] - timedelta(1): (0, 0, 0),
        day[0]: (1, 2, 0),
        day[1]: (1, 1, 1),
        day[2]: (1, 2, 1),
        day[3]: (1, 1, 2),
        day[4]: (1, 2, 2),
    }
    # Fewer days: those before them count as they were when the days began.
    assert by_day(services.overview.record_statuses(2)) == {
        day[3]: (1, 1, 2),
        day[4]: (1, 2, 2),
    }
    # Today is what there is now.
    assert by_day(services.overview.record_statuses(1))[day[4]] == tuple(
        services.overview.record_counts().get(s, 0) for s in STATUSES
    )


def test_no_records_are_zeros_every_day(services: Services, who: Principals) -> None:
    statuses = services.overview.record_statuses(3)
    assert len(statuses) == 3 * len(STATUSES)
    assert {count for _, _, count in statuses} == {0}


@pytest.mark.parametrize("days", [0, 367])
def test_days_out_of_range_are_refused(services: Services, days: int) -> None:
    with pytest.raises(UnacceptableError, match="days is 1 to 366"):
        services.overview.record_statuses(days)


# Each step: a day (0 to 5) and what happens on it to the record of that number (0 to 3):
# registered (or a reserved one taken into use), reserved, deactivated or patched.
STEPS = st.lists(
    st.tuples(
        st.integers(0, 5),
        st.integers(0, 3),
        st.sampled_from(["put", "reserve", "deactivate", "patch"]),
    ),
    max_size=12,
).map(sorted)


@settings(
    max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=STEPS, days=st.integers(1, 8))
def test_statuses_agree_with_each_records_history(
    services: Services, who: Principals, clock: Clock, steps: list[tuple[int, int, str]], days: int
) -> None:
    """Whatever happens on which day, each day's counts are the statuses each record's own
    history gives at the end of that day (every record: the examples share the database)."""
    urns: dict[int, str] = {}
    name = secrets.token_hex(4)

    def status(number: int) -> str | None:
        return services.records.get(urns[number]).status if number in urns else None

    for offset, number, action in steps:
        clock(FIRST + timedelta(days=offset))
        if action == "reserve" and number not in urns:
            urns[number] = services.records.generate(who.demo, "fi:demo")[0].urn
        elif action == "put" and status(number) != "deactivated":
            urns.setdefault(number, f"urn:nbn:fi:demo-{name}{number}")
            services.records.put(who.demo, urns[number], HERE, {})
        elif action == "deactivate" and number in urns:
            services.records.deactivate(who.demo, urns[number], None, [])
        elif action == "patch" and status(number) == "active":
            services.records.patch(who.demo, urns[number], {"metadata": {"n": offset}})
    today = FIRST + timedelta(days=6)
    clock(today)
    expected = {today - timedelta(n): [0] * len(STATUSES) for n in range(days)}
    for record in all_records(services):
        entries = services.records.history(record.urn)
        for day, counts in expected.items():
            then = [e for e in entries if e.at.date() <= day]
            if then:
                counts[STATUSES.index(then[-1].record["status"])] += 1
    assert by_day(services.overview.record_statuses(days)) == {
        day: tuple(counts) for day, counts in expected.items()
    }


def test_the_counts_are_reused_for_statistics_cache_seconds(
    services: Services, who: Principals, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each count reads every record: a process reuses it for ``statistics_cache`` seconds."""
    cached = Services(services.store, statistics_cache=60)
    today = datetime.now(UTC).date()
    services.records.put(who.demo, "urn:nbn:fi:demo-a", HERE, {})
    assert cached.overview.record_counts() == {"active": 1}
    assert by_day(cached.overview.record_statuses(1))[today][1] == 1
    services.records.put(who.demo, "urn:nbn:fi:demo-b", HERE, {})
    assert cached.overview.record_counts() == {"active": 1}
    assert by_day(cached.overview.record_statuses(1))[today][1] == 1
    assert services.overview.record_counts() == {"active": 2}  # statistics_cache 0
    later = time.monotonic() + 60
    monkeypatch.setattr(overview_module, "time", SimpleNamespace(monotonic=lambda: later))
    assert cached.overview.record_counts() == {"active": 2}
    assert by_day(cached.overview.record_statuses(1))[today][1] == 2
