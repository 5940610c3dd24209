"""Reads OTLP/JSON export requests, one per line, on stdin and parses each into the official
`ExportTraceServiceRequest` protobuf message (PyPI `opentelemetry-proto`) with
`json_format.Parse(..., ignore_unknown_fields=False)`: an unknown field, a wrong type or a bad
enum fails. OTLP/JSON writes trace and span ids as hex where the protobuf JSON mapping has
base64, so ids are turned from hex to base64 first, as the Collector does, and their decoded
lengths checked. Prints the number of spans read."""

import base64
import json
import sys

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

IDS = {"traceId": 16, "spanId": 8, "parentSpanId": 8}


def rebase(span):
    for key, size in IDS.items():
        if key in span:
            raw = bytes.fromhex(span[key])
            assert len(raw) == size, f"{key} {span[key]!r} is not {size} bytes"
            assert any(raw), f"{key} is all zero"
            span[key] = base64.b64encode(raw).decode()


spans = 0
for n, line in enumerate(sys.stdin, 1):
    doc = json.loads(line)
    for rs in doc.get("resourceSpans", []):
        for ss in rs.get("scopeSpans", []):
            for span in ss.get("spans", []):
                rebase(span)
    message = json_format.Parse(json.dumps(doc), ExportTraceServiceRequest(), ignore_unknown_fields=False)
    for rs in message.resource_spans:
        for ss in rs.scope_spans:
            for span in ss.spans:
                assert span.start_time_unix_nano <= span.end_time_unix_nano, f"line {n}: {span.name} ends before it starts"
                spans += 1
print(spans)
