"""A clinic records MCP server whose records no tool can list — ON PURPOSE.

Every tool looks a record up by an id the caller must already know: patients `P-` and four digits (`P-0042`),
doctors `D-` and two digits, appointments `A-` and five digits, prescriptions `RX-` and five digits, lab orders `L-`
and four digits, invoices `INV-2026-` and four digits, insurance numbers `KV-` and `ddd-ddd`. There is no list, no
search by name, and a wrong value gets only "invalid value", as many internal services answer. A generator that
explores it blind learns nothing; one told a few records (`known.txt`) reaches most tools.

All tools only read, and every result is a pure function of the arguments.

Run: `python server.py` (stdio) or `python server.py --http 8933` (http://127.0.0.1:8933/mcp).
"""

from __future__ import annotations

import argparse

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("clinic", log_level="WARNING")
READ = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)

# id: (name, born, insurance number, doctor, allergies)
PATIENTS = {
    "P-0042": ("Lena Vogt", "1984-03-12", "KV-884-201", "D-17", "penicillin"),
    "P-0117": ("Tomasz Wójcik", "1957-11-02", "KV-310-775", "D-23", "none recorded"),
    "P-0203": ("Amira Haddad", "1991-06-30", "KV-552-918", "D-31", "latex"),
    "P-0318": ("Jonas Berg", "1968-01-19", "KV-127-460", "D-23", "none recorded"),
    "P-0421": ("Chiara Rossi", "2002-09-08", "KV-903-344", "D-17", "ibuprofen"),
}
INSURANCE = {number: pid for pid, (_, _, number, _, _) in PATIENTS.items()}
PLANS = {"KV-884-201": "standard", "KV-310-775": "senior", "KV-552-918": "standard", "KV-127-460": "basic",
         "KV-903-344": "student"}
# id: (name, specialty, room, weekday slots)
DOCTORS = {
    "D-17": ("Dr. Ines Kranz", "cardiology", "2.14", ("08:30", "10:00", "14:30")),
    "D-23": ("Dr. Paul Meyer", "general practice", "1.03", ("09:00", "11:30", "16:00")),
    "D-31": ("Dr. Sara Lund", "dermatology", "3.07", ("10:30", "13:00")),
}
# id: (patient, doctor, date, time, procedure code, reason)
APPOINTMENTS = {
    "A-50012": ("P-0042", "D-17", "2026-12-09", "10:00", "PR-210", "stress ECG"),
    "A-50019": ("P-0042", "D-23", "2027-01-14", "09:00", "PR-110", "annual check-up"),
    "A-50031": ("P-0117", "D-23", "2026-12-11", "11:30", "PR-110", "blood pressure review"),
    "A-50044": ("P-0203", "D-31", "2026-12-15", "13:00", "PR-330", "mole screening"),
    "A-50058": ("P-0421", "D-17", "2026-12-18", "08:30", "PR-210", "palpitations follow-up"),
}
PROCEDURES = {"PR-110": ("consultation", 45.00), "PR-210": ("stress ECG", 180.00), "PR-330": ("skin screening", 95.00)}
COVERED = {"standard": {"PR-110": 10.0, "PR-210": 20.0, "PR-330": 15.0}, "senior": {"PR-110": 0.0, "PR-210": 10.0},
           "basic": {"PR-110": 15.0}, "student": {"PR-110": 5.0, "PR-210": 25.0, "PR-330": 15.0}}
# number: (patient, drug, dose, refills left, prescriber)
PRESCRIPTIONS = {
    "RX-58213": ("P-0042", "atorvastatin", "20 mg once daily", 2, "D-17"),
    "RX-58240": ("P-0117", "ramipril", "5 mg once daily", 4, "D-23"),
    "RX-58266": ("P-0203", "tretinoin cream", "apply at night", 1, "D-31"),
    "RX-58291": ("P-0042", "metoprolol", "25 mg twice daily", 0, "D-17"),
}
# order: (patient, test, value, unit, collected)
LABS = {
    "L-7731": ("P-0042", "HbA1c", "5.9", "%", "2026-11-20"),
    "L-7748": ("P-0117", "potassium", "4.6", "mmol/L", "2026-11-24"),
    "L-7760": ("P-0318", "TSH", "2.1", "mU/L", "2026-11-27"),
}
# number: (patient, appointment, amount in euro cents, status, due)
INVOICES = {
    "INV-2026-0031": ("P-0042", "A-50012", 3_600, "open", "2026-12-31"),
    "INV-2026-0047": ("P-0117", "A-50031", 0, "settled by insurance", "2026-12-20"),
    "INV-2026-0052": ("P-0203", "A-50044", 1_425, "open", "2027-01-05"),
}


def _known(table: dict[str, object], value: str) -> str:
    key = value.strip()
    if key not in table:
        raise ToolError("invalid value")
    return key


@server.tool(annotations=READ, structured_output=False)
def get_patient(patient_id: str) -> str:
    """Get a patient's record."""
    pid = _known(PATIENTS, patient_id)
    name, born, insurance, doctor, allergies = PATIENTS[pid]
    return (f"Patient {pid}: {name}\nBorn: {born}\nInsurance number: {insurance}\nPrimary doctor: {doctor}\n"
            f"Allergies: {allergies}")


@server.tool(annotations=READ, structured_output=False)
def find_patient_by_insurance(insurance_number: str) -> str:
    """Find the patient an insurance number belongs to."""
    number = _known(INSURANCE, insurance_number)
    pid = INSURANCE[number]
    return f"Insurance number {number} ({PLANS[number]} plan) belongs to patient {pid}, {PATIENTS[pid][0]}."


@server.tool(annotations=READ, structured_output=False)
def get_doctor(doctor_id: str) -> str:
    """Get a doctor's details."""
    did = _known(DOCTORS, doctor_id)
    name, specialty, room, _ = DOCTORS[did]
    return f"Doctor {did}: {name}\nSpecialty: {specialty}\nRoom: {room}"


@server.tool(annotations=READ, structured_output=False)
def list_appointments(patient_id: str) -> str:
    """A patient's appointments."""
    pid = _known(PATIENTS, patient_id)
    rows = [f"{aid}: {day} {time} with {doctor} ({reason})"
            for aid, (p, doctor, day, time, _, reason) in APPOINTMENTS.items() if p == pid]
    return "\n".join(rows) if rows else f"No appointments for {pid}."


@server.tool(annotations=READ, structured_output=False)
def get_appointment(appointment_id: str) -> str:
    """Get an appointment."""
    aid = _known(APPOINTMENTS, appointment_id)
    pid, doctor, day, time, code, reason = APPOINTMENTS[aid]
    return (f"Appointment {aid}\nPatient: {pid}\nDoctor: {doctor}\nDate: {day}\nTime: {time}\n"
            f"Procedure code: {code}\nReason: {reason}")


@server.tool(annotations=READ, structured_output=False)
def free_slots(doctor_id: str, day: str) -> str:
    """A doctor's free slots on a day."""
    did = _known(DOCTORS, doctor_id)
    if len(day.strip()) != 10 or not day.strip()[:4].isdigit():
        raise ToolError("invalid value")
    taken = {time for _, d, on, time, _, _ in APPOINTMENTS.values() if d == did and on == day.strip()}
    free = [slot for slot in DOCTORS[did][3] if slot not in taken]
    return f"Free slots for {did} on {day.strip()}: {', '.join(free) if free else 'none'}"


@server.tool(annotations=READ, structured_output=False)
def list_prescriptions(patient_id: str) -> str:
    """A patient's prescriptions."""
    pid = _known(PATIENTS, patient_id)
    rows = [f"{rx}: {drug}, {dose}" for rx, (p, drug, dose, _, _) in PRESCRIPTIONS.items() if p == pid]
    return "\n".join(rows) if rows else f"No prescriptions for {pid}."


@server.tool(annotations=READ, structured_output=False)
def get_prescription(rx_number: str) -> str:
    """Get a prescription."""
    rx = _known(PRESCRIPTIONS, rx_number)
    pid, drug, dose, refills, doctor = PRESCRIPTIONS[rx]
    return (f"Prescription {rx}\nPatient: {pid}\nDrug: {drug}\nDose: {dose}\nRefills left: {refills}\n"
            f"Prescriber: {doctor}")


@server.tool(annotations=READ, structured_output=False)
def get_lab_result(lab_order: str) -> str:
    """Get a lab result."""
    order = _known(LABS, lab_order)
    pid, test, value, unit, collected = LABS[order]
    return f"Lab order {order}\nPatient: {pid}\nTest: {test}\nResult: {value} {unit}\nCollected: {collected}"


@server.tool(annotations=READ, structured_output=False)
def get_invoice(invoice_number: str) -> str:
    """Get an invoice."""
    number = _known(INVOICES, invoice_number)
    pid, appointment, cents, status, due = INVOICES[number]
    return (f"Invoice {number}\nPatient: {pid}\nAppointment: {appointment}\nAmount due: €{cents / 100:.2f}\n"
            f"Status: {status}\nDue: {due}")


@server.tool(annotations=READ, structured_output=False)
def check_coverage(patient_id: str, procedure_code: str) -> str:
    """Whether a patient's insurance covers a procedure."""
    pid = _known(PATIENTS, patient_id)
    code = _known(PROCEDURES, procedure_code)
    plan = PLANS[PATIENTS[pid][2]]
    name, price = PROCEDURES[code]
    if code not in COVERED[plan]:
        return f"{code} ({name}) is not covered by the {plan} plan: the patient pays €{price:.2f}."
    return f"{code} ({name}) is covered by the {plan} plan; copay €{COVERED[plan][code]:.2f} of €{price:.2f}."


@server.tool(annotations=READ, structured_output=False)
def get_procedure(procedure_code: str) -> str:
    """Get a procedure's name and price."""
    code = _known(PROCEDURES, procedure_code)
    name, price = PROCEDURES[code]
    return f"Procedure {code}\nName: {name}\nPrice: €{price:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description="Clinic records MCP server (no tool lists its records, on purpose)")
    parser.add_argument("--http", type=int, metavar="PORT", help="serve HTTP on 127.0.0.1:PORT/mcp")
    args = parser.parse_args()
    if args.http:
        server.run("streamable-http", host="127.0.0.1", port=args.http)
    else:
        server.run()


if __name__ == "__main__":
    main()
