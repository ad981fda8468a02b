"""The multipart body streamed from disk, read back by Django's own parser."""

import io

import pytest
from django.http.multipartparser import MultiPartParser
from django.test import RequestFactory
from puc_client.multipart import MultipartBody


def parse(body: MultipartBody, data: bytes):
    request = RequestFactory().post("/", data=b"", content_type=body.content_type)
    meta = {**request.META, "CONTENT_LENGTH": str(len(data)), "CONTENT_TYPE": body.content_type}
    return MultiPartParser(meta, io.BytesIO(data), request.upload_handlers).parse()


def test_body_parses_as_the_fields_and_the_file(tmp_path):
    payload = bytes(range(256)) * 1000  # every byte value, 256 kB
    path = tmp_path / "predictions.zip"
    path.write_bytes(payload)
    seen = []
    body = MultipartBody(
        {"challenge": "live", "method": 'GP "curl" – ünïcode'},
        file_field="file",
        path=path,
        filename="predictions.zip",
        on_read=seen.append,
    )
    chunks = []
    while chunk := body.read(8192):
        assert len(chunk) <= 8192
        chunks.append(chunk)
    data = b"".join(chunks)
    assert len(data) == len(body)
    # The file is read a block at a time, never whole.
    assert sum(seen) == len(payload) and max(seen) <= 8192
    fields, files = parse(body, data)
    assert fields["challenge"] == "live"
    assert fields["method"] == 'GP "curl" – ünïcode'
    assert files["file"].name == "predictions.zip"
    assert files["file"].read() == payload


def test_empty_file_and_read_all(tmp_path):
    path = tmp_path / "empty.zip"
    path.write_bytes(b"")
    body = MultipartBody({}, file_field="file", path=path, filename="empty.zip")
    data = body.read()
    assert len(data) == len(body) and body.read(10) == b""
    _, files = parse(body, data)
    assert files["file"].read() == b""


def test_a_file_that_shrinks_while_sent_is_an_error(tmp_path):
    path = tmp_path / "p.zip"
    path.write_bytes(b"x" * 100)
    body = MultipartBody({}, file_field="file", path=path, filename="p.zip")
    path.write_bytes(b"x" * 10)
    with pytest.raises(OSError, match="got shorter while it was being sent"):
        body.read()
