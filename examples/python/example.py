"""The whole app-pod flow over HTTP: provision, write and read files, run a command, persist,
list revisions, roll back, and a typed error. Prints a JSON summary.

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
    }))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
