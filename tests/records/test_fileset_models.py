"""The fileset-ingest seed's types, serialised to its JSON."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from sandcrawler.records.fileset import (
    ArchiveStrategyResult,
    FilesetIngestResult,
    FilesetManifestFile,
    FilesetPlatformItem,
    IngestRequest,
    IngestStrategy,
)


def test_the_six_strategies_and_their_parts() -> None:
    assert [s.value for s in IngestStrategy] == [
        "web-file", "web-fileset", "web-fileset-bundled",
        "archiveorg-file", "archiveorg-fileset", "archiveorg-fileset-bundled"]
    s = IngestStrategy("archiveorg-fileset-bundled")
    assert (s.backend, s.entity, s.bundled) == ("archiveorg", "fileset", True)
    assert (IngestStrategy.WEB_FILE.backend, IngestStrategy.WEB_FILE.entity,
            IngestStrategy.WEB_FILE.bundled) == ("web", "file", False)
    with pytest.raises(ValueError):
        IngestStrategy("web-bundle")


def test_manifest_file_json_leaves_out_what_is_unknown() -> None:
    f = FilesetManifestFile(path="data/table.csv", size=12, sha1="a" * 40)
    assert f.to_json() == {"path": "data/table.csv", "size": 12, "sha1": "a" * 40}
    assert FilesetManifestFile.model_validate(f.to_json()) == f
    for bad in ({"path": ""}, {"path": "x", "size": -1}, {"path": "x", "colour": "red"}):
        with pytest.raises(ValidationError):
            FilesetManifestFile.model_validate(bad)


def test_platform_item_and_strategy_result_round_trip() -> None:
    item = FilesetPlatformItem(
        platform_name="zenodo", platform_status="success", platform_domain="zenodo.org",
        platform_id="5678", manifest=[FilesetManifestFile(path="a.zip", size=3, md5="b" * 32)],
        archiveorg_item_name="zenodo.org-5678-v1", web_bundle_url=None)
    data = item.to_json()
    assert data["manifest"] == [{"path": "a.zip", "size": 3, "md5": "b" * 32}]
    assert "web_bundle_url" not in data
    assert FilesetPlatformItem.model_validate(data) == item
    result = ArchiveStrategyResult(ingest_strategy=IngestStrategy.WEB_FILESET_BUNDLED,
                                   status="success", bundle_archiveorg_path="x.zip")
    assert result.to_json() == {"ingest_strategy": "web-fileset-bundled", "status": "success",
                                "manifest": [], "bundle_archiveorg_path": "x.zip"}


def test_request_keeps_unknown_fields_and_result_has_the_seed_fields() -> None:
    req = IngestRequest.model_validate({
        "ingest_type": "dataset", "base_url": "https://zenodo.org/record/5678",
        "ext_ids": {"doi": "10.5281/zenodo.5678"}, "producer_note": "kept"})
    assert req.to_json()["producer_note"] == "kept"
    with pytest.raises(ValidationError):
        IngestRequest.model_validate({"ingest_type": "dataset"})
    file_meta = {"size_bytes": 10, "sha1hex": "c" * 40, "sha256hex": "d" * 64,
                 "md5hex": "e" * 32, "mimetype": "text/csv"}
    result = FilesetIngestResult(
        hit=True, status="success-file", request=req.to_json(), platform_name="zenodo",
        ingest_strategy="web-file", file_count=1, total_size=10,
        fileset_file={"file_meta": file_meta})
    out = result.to_json()
    assert out["ingest_strategy"] == "web-file"
    assert out["fileset_file"] == {"file_meta": file_meta}
    assert set(FilesetIngestResult.model_fields) >= {
        "hit", "status", "request", "terminal", "file_meta", "cdx", "revisit_cdx",
        "html_biblio", "manifest", "platform_name", "platform_domain", "platform_id",
        "platform_base_url", "ingest_strategy", "archiveorg_item_name", "file_count",
        "total_size", "fileset_bundle", "fileset_file"}
    with pytest.raises(ValidationError, match="ingest_strategy"):
        FilesetIngestResult(hit=True, status="success", request={}, ingest_strategy="web-zip")
    # a status is a member of a status enum (a lower layer's too), not any string
    assert FilesetIngestResult(hit=False, status="fetch-error", request={}).status == "fetch-error"
    with pytest.raises(ValidationError, match="status"):
        FilesetIngestResult(hit=True, status="x", request={})
