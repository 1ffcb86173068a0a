"""Data contracts: writers cast to them, readers check them, and the docs are made from them."""

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from knowprobe import contracts
from knowprobe.io import KnowprobeError

from conftest import ROOT


def prompts_frame():
    return pd.DataFrame(
        {"relation": ["P19"], "template": ["[X] was born in [Y] ."], "source": ["manual"], "rank": [0], "score": [None]}
    )


def test_writers_cast_to_the_contract_and_record_it(tmp_path):
    path = tmp_path / "prompts.parquet"
    frame = prompts_frame()[["score", "rank", "source", "template", "relation"]]  # any column order
    contracts.write(frame, path, contracts.PROMPTS)
    schema = pq.read_schema(path)
    assert schema.names == contracts.PROMPTS.columns
    assert schema.field("rank").type == pa.int32() and schema.field("template").type == pa.string()
    assert schema.metadata[b"knowprobe.contract"] == b"prompts" and schema.metadata[b"knowprobe.version"] == b"1"
    assert contracts.read(path, contracts.PROMPTS).equals(contracts.read(path, contracts.PROMPTS))
    with pytest.raises(ValueError, match="missing columns \\['score'\\], unexpected \\['extra'\\]"):
        contracts.write(prompts_frame().drop(columns="score").assign(extra=1), path, contracts.PROMPTS)


def test_a_wrong_file_is_one_line_naming_file_and_column(tmp_path):
    path = tmp_path / "facts.parquet"
    contracts.write(prompts_frame(), path, contracts.PROMPTS)
    with pytest.raises(KnowprobeError, match=f"{path}: expected a facts table \\(version 1\\), found contract prompts"):
        contracts.read(path, contracts.FACTS)
    table = contracts.to_table(prompts_frame(), contracts.PROMPTS)
    pq.write_table(table.drop_columns(["score"]), path)
    with pytest.raises(KnowprobeError, match=f"{path}: column 'score' missing \\(prompts table\\)"):
        contracts.read(path, contracts.PROMPTS)
    pq.write_table(table.set_column(3, "rank", pa.array(["0"])), path)
    with pytest.raises(KnowprobeError, match=f"{path}: column 'rank' is string, expected int32"):
        contracts.read(path, contracts.PROMPTS)
    pq.write_table(pa.table({"x": [1]}), path)
    with pytest.raises(KnowprobeError, match="found no knowprobe contract"):
        contracts.read(path, contracts.PROMPTS)
    other = tmp_path / "other.parquet"
    other.write_text("not parquet")
    with pytest.raises(KnowprobeError, match="not a Parquet file"):
        contracts.read(other, contracts.PROMPTS)
    with pytest.raises(KnowprobeError, match="file not found"):
        contracts.read(tmp_path / "nowhere.parquet", contracts.PROMPTS)


def test_parts_are_concatenated_and_checked(tmp_path):
    parts = []
    for i in range(3):
        parts.append(tmp_path / f"part-{i}.parquet")
        contracts.write(prompts_frame().assign(rank=i), parts[-1], contracts.PROMPTS)
    assert contracts.concat(parts, tmp_path / "all.parquet", contracts.PROMPTS) == 3
    assert contracts.read(tmp_path / "all.parquet", contracts.PROMPTS)["rank"].tolist() == [0, 1, 2]
    contracts.write(pd.DataFrame({"word": ["a"], "token_id": [1]}), parts[1], contracts.CANDIDATES)
    with pytest.raises(KnowprobeError, match="part-1.parquet: expected a prompts table"):
        contracts.concat(parts, tmp_path / "all.parquet", contracts.PROMPTS)


def flip(path, at: float = 0.5, size: int = 64) -> None:
    """``size`` bytes of a file inverted, from ``at`` (a fraction of its length) on."""
    data = bytearray(path.read_bytes())
    start = int(len(data) * at)
    data[start : start + size] = bytes(b ^ 0xFF for b in data[start : start + size])
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["flip", "footer", "truncate"])
def test_a_table_damaged_after_it_was_written_is_one_line_naming_it(tmp_path, damage):
    """Issue 44 item 9: tables passed between rules carried no digest, so damage to one changed
    the numbers downstream without a word. Every writer records its SHA-256 beside the table
    (and a mark in its metadata); every reader verifies it."""
    frame = pd.DataFrame({"word": [f"w{i}" for i in range(2000)], "token_id": range(2000)})
    path = tmp_path / "candidates.parquet"
    contracts.write(frame, path, contracts.CANDIDATES)
    assert pq.read_schema(path).metadata[b"knowprobe.digest"] == b"sha256"
    record = (tmp_path / "candidates.parquet.sha256").read_text()
    assert record.endswith("  candidates.parquet\n") and len(record.split()[0]) == 64
    assert contracts.read(path, contracts.CANDIDATES)["token_id"].tolist() == list(range(2000))
    if damage == "flip":
        flip(path, 0.3)
    elif damage == "footer":
        flip(path, 0.97, 16)
    else:
        path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
    with pytest.raises(KnowprobeError) as error:
        contracts.read(path, contracts.CANDIDATES)
    message = str(error.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert "changed since its rule wrote it" in message and "delete it to have it made anew" in message


def test_every_writer_records_a_digest_and_a_table_without_one_reads_as_before(tmp_path):
    parts = []
    for i in range(2):
        parts.append(tmp_path / f"part-{i}.parquet")
        writer = contracts.PartWriter(parts[-1], contracts.PROMPTS)
        writer.write(contracts.to_table(prompts_frame().assign(rank=i), contracts.PROMPTS))
        writer.close(True)
    contracts.concat(parts, tmp_path / "all.parquet", contracts.PROMPTS)
    for path in [*parts, tmp_path / "all.parquet"]:
        assert (tmp_path / f"{path.name}.sha256").is_file()
        flip(path, 0.2, 8)
        with pytest.raises(KnowprobeError, match="changed since its rule wrote it"):
            contracts.read(path, contracts.PROMPTS)
    # a table no knowprobe writer wrote (a test's fixture, an older run) says it has no digest
    plain = tmp_path / "plain.parquet"
    pq.write_table(contracts.to_table(prompts_frame(), contracts.PROMPTS), plain)
    assert len(contracts.read(plain, contracts.PROMPTS)) == 1
    # one that says it has, but whose record is gone, is refused
    contracts.write(prompts_frame(), plain, contracts.PROMPTS)
    (tmp_path / "plain.parquet.sha256").unlink()
    with pytest.raises(KnowprobeError, match=r"plain.parquet: no digest recorded beside it \(plain.parquet.sha256\)"):
        contracts.read(plain, contracts.PROMPTS)


def test_every_column_is_documented_and_the_docs_are_made_from_the_contracts():
    for contract in contracts.CONTRACTS.values():
        assert contract.paths and contract.description
        assert all(field.metadata and field.metadata[b"doc"] for field in contract.schema), contract.name
    docs = (ROOT / "docs" / "contracts.md").read_text()
    assert contracts.markdown() in docs, "docs/contracts.md is stale: python -m knowprobe.contracts"
