"""Reads AG-UI events on stdin, JSON lines or SSE `data:` frames, and validates each against
the published event models of PyPI `ag-ui-protocol` (the `Event` union). Those models allow
extra fields, so any field the model does not declare is an error here. Prints the number of
events read."""

import sys

from ag_ui.core import Event
from pydantic import BaseModel, TypeAdapter

EVENT = TypeAdapter(Event)


def undeclared(model, path):
    found = []
    if model.model_extra:
        found.append(f"{path}: {sorted(model.model_extra)}")
    for name in type(model).model_fields:
        value = getattr(model, name)
        items = value if isinstance(value, list) else [value]
        for i, item in enumerate(items):
            if isinstance(item, BaseModel):
                found += undeclared(item, f"{path}.{name}[{i}]")
    return found


count = 0
for line in sys.stdin:
    line = line.rstrip("\n")
    if not line:
        continue
    if line.startswith("data: "):
        line = line[len("data: "):]
    event = EVENT.validate_json(line)
    extra = undeclared(event, event.type.value)
    assert not extra, f"undeclared fields {extra}: {line}"
    count += 1
print(count)
