"""`continuousbench verify` through the real dispatcher."""

RELEASE_ID = "geminon-tiny-2026q1"


def test_verify_command(invoke, written, monkeypatch):
    root, folder = written
    result = invoke(["verify", str(folder)])
    assert result.exit_code == 0, result.output
    assert f"{RELEASE_ID}: 10 files verified" in result.output

    monkeypatch.setenv("CONTINUOUSBENCH_HOME", str(root))
    assert invoke(["verify", RELEASE_ID]).exit_code == 0

    data = bytearray((folder / "data/qa_singleton/test-00000-of-00001.parquet").read_bytes())
    data[40] ^= 0xFF
    (folder / "data/qa_singleton/test-00000-of-00001.parquet").write_bytes(bytes(data))
    result = invoke(["verify", RELEASE_ID])
    assert result.exit_code == 2
    assert "checksum mismatch" in result.stderr and "qa_singleton/test" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
