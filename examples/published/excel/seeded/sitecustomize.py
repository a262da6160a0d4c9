"""Read at start-up by the excel server's Python: the launcher puts this folder on its PYTHONPATH. The server writes a
random id (`uuid.uuid4`) into a workbook for every slicer, chart, shape or macro it adds; here those ids come from a
fixed seed, so a workbook saved after the same calls has the same bytes, and the same size, on every start."""

import random
import uuid

_IDS = random.Random(20261207)


def _uuid4() -> uuid.UUID:
    return uuid.UUID(int=_IDS.getrandbits(128), version=4)


uuid.uuid4 = _uuid4
