"""The payroll example keeps the formats its definitions leave out: through the real MCP client over stdio, a value in
the shape a model would guess is refused with a message that names the shape the server wants, and the right shape
is answered (examples/payroll/README.md)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from optimizer.servers import ServerSpec, one_connection, python_command

SERVER = python_command(str(Path(__file__).resolve().parent.parent / "examples" / "payroll" / "server.py"))
GUESSED_AND_RIGHT = [
    ("get_employee", {"id": "42"}, {"id": "E-00042"}, "E- and five digits"),
    ("get_payslip", {"id": "E-00042", "month": "2026-07"}, {"id": "E-00042", "month": "07/2026"}, "MM/YYYY"),
    ("file_expense", {"id": "E-00117", "amount": 12, "category": "travel", "date": "03/11/2026"},
     {"id": "E-00117", "amount": 1250, "category": "travel", "date": "03/11/2026"}, "whole pence"),
    ("file_expense", {"id": "E-00117", "amount": 1250, "category": "taxi", "date": "03/11/2026"},
     {"id": "E-00117", "amount": 1250, "category": "travel", "date": "03/11/2026"}, "travel, meals, equipment"),
    ("file_expense", {"id": "E-00117", "amount": 1250, "category": "travel", "date": "2026-11-03"},
     {"id": "E-00117", "amount": 1250, "category": "travel", "date": "03/11/2026"}, "DD/MM/YYYY"),
    ("request_leave", {"id": "E-00623", "kind": "holiday", "start": "01/12/2026", "end": "05/12/2026"},
     {"id": "E-00623", "kind": "annual", "start": "01/12/2026", "end": "05/12/2026"}, "annual, sick, unpaid"),
    ("get_policy", {"topic": "expense"}, {"topic": "expenses"}, "expenses, leave, payroll"),
]


def test_a_guessed_shape_is_refused_naming_the_right_one_and_the_right_one_is_answered() -> None:
    async def go() -> list[tuple[bool, str, bool, str]]:
        out = []
        async with one_connection(ServerSpec.parse(SERVER)) as pool:
            for tool, guessed, right, _ in GUESSED_AND_RIGHT:
                bad, good = await pool.call(tool, guessed), await pool.call(tool, right)
                out.append((bad.is_error, bad.text, good.is_error, good.text))
            retired = await pool.call("submit_expense", {"id": "E-00117", "amount": 1250})
        out.append((retired.is_error, retired.text, False, ""))
        return out

    results = asyncio.run(go())
    for (tool, _, _, shape), (bad_error, bad_text, good_error, good_text) in zip(GUESSED_AND_RIGHT, results,
                                                                                   strict=False):
        assert bad_error and shape in bad_text, (tool, bad_text)
        assert not good_error, (tool, good_text)
    assert results[-1][0] and "file_expense" in results[-1][1]  # the retired ledger points at the one that works
