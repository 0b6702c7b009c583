"""The benchmark's URN mix (benchmarks/parse_bench.py) is what it claims to be, and the benchmark
runs. Nothing here measures or asserts speed."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

import urnkit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import parse_bench

from urnkit.namespaces import nbn

SEED = 20240817


@pytest.fixture(scope="module")
def samples() -> list[parse_bench.Sample]:
    return parse_bench.generate_samples(1000, SEED)


def test_generation_is_deterministic(samples: list[parse_bench.Sample]) -> None:
    assert parse_bench.generate_samples(1000, SEED) == samples
    assert parse_bench.generate(1000, SEED) == [sample.text for sample in samples]
    assert parse_bench.generate(1000, SEED + 1) != parse_bench.generate(1000, SEED)
    assert parse_bench.generate(50) == parse_bench.generate(50, parse_bench.SEED)


def test_intended_validity_is_what_urnkit_decides(samples: list[parse_bench.Sample]) -> None:
    disagreements = [
        (sample.text, sample.mistake)
        for sample in samples
        if urnkit.is_valid(sample.text) != sample.valid
    ]
    assert disagreements == []


def test_about_ten_percent_are_invalid_with_every_kind_of_mistake(
    samples: list[parse_bench.Sample],
) -> None:
    invalid = [sample for sample in samples if not sample.valid]
    assert 80 <= len(invalid) <= 120
    assert sum(not urnkit.is_valid(sample.text) for sample in samples) == len(invalid)
    assert {sample.mistake for sample in invalid} == set(parse_bench._MISTAKES)


def test_about_fifteen_percent_carry_components(samples: list[parse_bench.Sample]) -> None:
    with_components = [sample for sample in samples if sample.components]
    assert 120 <= len(with_components) <= 180
    for sample in samples:
        if not sample.valid:
            continue
        urn = urnkit.URN.parse(sample.text)
        parsed = (urn.r_component, urn.q_component, urn.f_component)
        assert (parsed != (None, None, None)) == sample.components, sample.text
    kinds = {
        tuple(part is not None for part in (u.r_component, u.q_component, u.f_component))
        for u in (urnkit.URN.parse(sample.text) for sample in with_components)
    }
    assert (True, False, False) in kinds
    assert (False, True, False) in kinds
    assert (False, False, True) in kinds
    assert (True, True, True) in kinds


def test_the_mix_has_several_namespaces_and_case_variants(
    samples: list[parse_bench.Sample],
) -> None:
    valid = [urnkit.URN.parse(sample.text) for sample in samples if sample.valid]
    nids = {urn.nid.lower() for urn in valid}
    assert {"nbn", "isbn", "uuid", "ietf", "oid", "example"} <= nids
    countries = {sample.family for sample in samples if sample.family.startswith("nbn:")}
    assert len(countries) >= 8
    assert {urn.scheme for urn in valid} >= {"urn", "URN"}
    assert any(urn.nid.isupper() for urn in valid)
    escapes = "".join(urn.nss for urn in valid if urn.nid.lower() == "example")
    assert "%C3" in escapes
    assert "%c3" in escapes


def test_isbn_and_dnb_check_digits(samples: list[parse_bench.Sample]) -> None:
    assert nbn.dnb_check_digit("urn:nbn:de:gbv:089-332175294") == "5"
    assert nbn.dnb_check_digit("urn:nbn:de:bvb:19-14664") == "2"
    for urn in (urnkit.URN.parse(sample.text) for sample in samples if sample.valid):
        if urn.nid.lower() == "nbn" and urn.nss.startswith("de:"):
            expected = nbn.dnb_check_digit(f"urn:nbn:{urn.nss[:-1]}")
            assert urn.nss[-1] == expected
        if urn.nid.lower() == "isbn":
            digits = [10 if d == "X" else int(d) for d in urn.nss.replace("-", "")]
            if len(digits) == 10:
                assert sum(d * w for d, w in zip(digits, range(10, 0, -1), strict=True)) % 11 == 0
            else:
                assert sum(d * (3 if i % 2 else 1) for i, d in enumerate(digits)) % 10 == 0


def test_main_prints_a_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_bench.main(["--count", "2000", "--rounds", "2"]) == 0
    out = capsys.readouterr().out
    assert "URNs/s" in out
    assert "CPU µs/URN" in out
    assert "the garbage collector on" in out
    assert "Rust: no URN crate compared" in out
    assert ("Go: go-urn" in out) != ("go-urn: skipped" in out)
    assert "urnkit.is_valid(s)" in out
    assert "urnkit.URN.parse(s)" in out
    assert "Targets (URNs per CPU second):" in out
    assert "agrees with the generator's intent on 2,000 of 2,000" in out


def test_main_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_bench.main(["--count", "300", "--rounds", "3", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["count"] == 300
    assert report["rounds"] == 3
    for row in report["results"]:
        assert len(row["cpu_seconds"]) == 3
        assert row["cpu_us_min"] <= row["cpu_us_median"] <= row["cpu_us_max"]
    assert report["intended_valid"] == 270
    operations = {row["operation"] for row in report["results"]}
    assert {"urnkit.is_valid(s)", "urnkit.URN.parse(s)"} <= operations
    assert {target["status"] for target in report["targets"]} <= {"PASS", "MISS", "SKIPPED"}


def test_the_rounds_alternate_the_systems() -> None:
    calls: list[str] = []

    def system(name: str) -> tuple[str, int, parse_bench.Timed]:
        def timed() -> float:
            calls.append(name)
            return 0.5

        return name, 1, timed

    results = parse_bench.alternated([system("a"), system("b"), system("c")], 3)
    assert calls == ["a", "b", "c", "c", "b", "a", "a", "b", "c"]
    assert [result.seconds for result in results] == [(0.5, 0.5, 0.5)] * 3


def test_the_go_anchor_parses_the_same_texts(tmp_path: Path) -> None:
    if shutil.which("go") is None or parse_bench.go_path() is None:
        pytest.skip("needs go and go-urn's source (Debian: golang-github-leodido-go-urn-dev)")
    binary, built = parse_bench.build_go_anchor(tmp_path)
    assert binary is not None, built
    texts = ["urn:nbn:fi-fe2024", "urn:nbn:fi:hulib-1?=lang=fi", "urn:a:b", "urn:nbn:fi fe"]
    anchor = parse_bench.GoAnchor(binary, texts, tmp_path)
    try:
        # go-urn 1.2 follows RFC 2141: no q-component (RFC 8141 §2), but a one-letter NID
        # (RFC 2141 §2; RFC 8141 §2 wants two letters at least); a space in neither.
        assert anchor.verdicts() == [True, False, True, False]
        assert anchor.run() >= 0
    finally:
        anchor.close()


def test_start_bench_runs_each_command(capsys: pytest.CaptureFixture[str]) -> None:
    import start_bench

    status = start_bench.main(["--rounds", "1"])
    out = capsys.readouterr().out
    assert status in (0, 1)  # a smoke test: the verdict is the benchmark's, not the test's
    assert {name for name, _ in start_bench.COMMANDS} <= {
        line.split(" | ")[0].removeprefix("| ") for line in out.splitlines()
    }
