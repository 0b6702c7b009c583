"""benchmarks/redirect_bench.py: its Go anchor answers a resolution as urnkit does (the same
302 to the same location, for any case of the URN; 404 for a URN it does not hold), and its
table gives each figure's median and range over the rounds. Nothing here measures speed."""

from __future__ import annotations

import http.client
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import redirect_bench
import resolve_bench


def _sample(system: str, server_us: float) -> dict[str, object]:
    return {
        "system": system, "keys": "hot", "round": 1, "server_us": server_us,
        "database_us": None, "wrk_us": 20.0, "rate": 1000.0, "p99_ms": 1.0, "not_3xx": 0,
        "load": 1.0,
    }  # fmt: skip


def test_the_table_gives_the_median_and_the_range_over_the_rounds() -> None:
    samples = [_sample("Go anchor, sqlite", us) for us in (90.0, 60.0, 70.0)]
    table = redirect_bench.summary(samples)
    assert "| Go anchor, sqlite | hot | 70 (60-90) | — | 20 (20-20) |" in table


def _answer(port: int, path: str) -> tuple[int, str | None]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.getheader("Location")
    finally:
        connection.close()


@pytest.mark.skipif(shutil.which("go") is None, reason="Go is not installed: no anchor to test")
def test_the_go_anchor_redirects_as_urnkit_does(tmp_path: Path) -> None:
    # RFC 8458 §3: a URN:NBN is equivalent to itself in any case.
    records = tmp_path / "records.ndjson"
    resolve_bench.write_records(records, 3)
    with resolve_bench.fresh_database("sqlite", tmp_path, "") as url:
        resolve_bench.prepare(url)
        resolve_bench.import_records("sqlite", url, records, 100)
        binary = redirect_bench.build_anchor(tmp_path)
        assert binary is not None
        port = resolve_bench.free_port()
        command = [str(binary), str(tmp_path / "bench.db"), f"127.0.0.1:{port}"]
        with redirect_bench.started("go", command, port, tmp_path / "go.log"):
            expected = (302, "https://example.org/bench/2")
            assert _answer(port, "/urn:nbn:fi:bench-2") == expected
            assert _answer(port, "/URN:NBN:FI:BENCH-2") == expected
            assert _answer(port, "/urn:nbn:fi:bench-4")[0] == 404
