"""The whole app-pod flow over HTTP: provision, write and read files, run a command (whole, and
streamed with stdin), persist, learn of it from the event stream, list revisions, diff, history,
restore one file, roll back, and a typed error. Prints a JSON summary.

    python3 examples/python/example.py http://127.0.0.1:7400 [token]
"""
import json
import sys

from fleet_client import FleetClient, FleetError


def main(base_url, token=None):
    fleet = FleetClient(base_url, token)
    ws = "py-example"
    live = fleet.provision(ws)
    fleet.write_file(ws, "app/hello.py", b"print('hello from python')\n")
    ran = fleet.exec(ws, ["sh", "-c", "cat app/hello.py && echo v1 > state.txt"])
    first = fleet.persist(ws, live["generation"])
    fleet.write_file(ws, "state.txt", b"v2\n")
    second = fleet.persist(ws, live["generation"])
    content, source = fleet.read_file(ws, "state.txt")
    old, _ = fleet.read_file(ws, "state.txt", revision=first["revision"])
    streamed = list(fleet.exec_stream(ws, ["sh", "-c", "cat; echo to-err >&2"], stdin="piped\n"))
    # The event stream from its start ("0-0"): the second turn's persist is among what it kept.
    told = next(e for e in fleet.events(ws, ["persisted"], last_event_id="0-0") if e["revision"] == second["revision"] and e["reason"] == "turn-end")
    diff = fleet.diff(ws, first["revision"], second["revision"])
    history = fleet.history(ws, "state.txt")
    restored = fleet.restore_file(ws, "state.txt", first["revision"])
    restored_content, _ = fleet.read_file(ws, "state.txt")
    fleet.write_file(ws, "state.txt", b"v2\n")
    tree = [entry["path"] for entry in fleet.list_tree(ws)]
    rolled = fleet.rollback(ws, first["revision"])
    after, _ = fleet.read_file(ws, "state.txt")
    try:
        fleet.persist(ws, live["generation"] + 9)
        stale = None
    except FleetError as error:
        stale = {"status": error.status, "code": error.code, "retryable": error.retryable}
    print(json.dumps({
        "generation": live["generation"],
        "exitCode": ran["exitCode"],
        "stdout": ran["stdout"],
        "revisions": len(fleet.revisions(ws)),
        "changed": second["revision"] != first["revision"],
        "read": content.decode(),
        "source": source,
        "readOld": old.decode(),
        "tree": tree,
        "rolledBackTo": rolled["restoredFrom"] == first["revision"],
        "afterRollback": after.decode(),
        "stale": stale,
        "streamed": "".join(e["data"] for e in streamed if e["type"] == "stdout"),
        "streamedErr": "".join(e["data"] for e in streamed if e["type"] == "stderr"),
        "streamExit": streamed[-1]["type"] == "exit" and streamed[-1]["exitCode"] == 0,
        "told": told["type"],
        "diffChanged": [e["path"] for e in diff["changed"]],
        "historyChanges": [h["change"] for h in history][-1],
        "restored": restored_content.decode(),
        "restoredFrom": restored["revision"] == first["revision"],
    }))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
