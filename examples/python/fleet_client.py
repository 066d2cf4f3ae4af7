"""A sandbox-fleet HTTP client for app pods, standard library only (urllib, json).

    from fleet_client import FleetClient, FleetError
    fleet = FleetClient("http://127.0.0.1:7400", token=None)
    fleet.provision("ws-1")
    fleet.write_file("ws-1", "src/main.py", b"print('hi')\n")

Every error answer of the API ({"error": {"code", "message", "retryable", "field"?}}) is raised
as FleetError with those fields and the HTTP status.
"""
import json
import urllib.error
import urllib.parse
import urllib.request


class FleetError(Exception):
    def __init__(self, status, code, message, retryable=False, field=None):
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code, self.message, self.retryable, self.field = status, code, message, retryable, field


class FleetClient:
    def __init__(self, base_url, token=None, timeout=120):
        self.base_url, self.token, self.timeout = base_url.rstrip("/"), token, timeout

    def _open(self, method, path, body=None, raw=None, query=None, headers=None, timeout=None):
        url = self.base_url + path + ("?" + urllib.parse.urlencode(query) if query else "")
        headers = dict(headers or {})
        data = None
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        if body is not None:
            data, headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        elif raw is not None:
            data, headers["Content-Type"] = raw, "application/octet-stream"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            return urllib.request.urlopen(request, timeout=timeout or self.timeout)
        except urllib.error.HTTPError as error:
            raise self._error(error) from None

    @staticmethod
    def _error(error):
        text = error.read()
        try:
            detail = json.loads(text)["error"]
        except (ValueError, KeyError, TypeError):
            return FleetError(error.code, "Http", text.decode(errors="replace"))
        return FleetError(error.code, detail.get("code"), detail.get("message"), detail.get("retryable", False), detail.get("field"))

    def _request(self, method, path, body=None, raw=None, query=None):
        with self._open(method, path, body, raw, query) as response:
            payload = response.read()
            if response.headers.get_content_type() == "application/json":
                return json.loads(payload)
            return payload, response.headers

    @staticmethod
    def _ws(workspace_id):
        return "/v1/workspaces/" + urllib.parse.quote(workspace_id, safe="")

    @staticmethod
    def _file(path):
        return "/files/" + urllib.parse.quote(path, safe="")

    def provision(self, workspace_id, provider=None):
        return self._request("POST", self._ws(workspace_id) + "/provision", {"provider": provider} if provider else {}, query={"wait": "true"})["result"]

    def persist(self, workspace_id, generation, delete=True, reason="turn-end", turn_id=None):
        body = {"generation": generation, "delete": delete, "reason": reason}
        if turn_id:
            body["turnId"] = turn_id
        return self._request("POST", self._ws(workspace_id) + "/persist", body, query={"wait": "true"})["result"]

    def describe(self, workspace_id):
        return self._request("GET", self._ws(workspace_id))

    def revisions(self, workspace_id):
        return self._request("GET", self._ws(workspace_id) + "/revisions")["revisions"]

    def rollback(self, workspace_id, revision):
        return self._request("POST", self._ws(workspace_id) + "/rollback", {"revision": revision}, query={"wait": "true"})["result"]

    def exec(self, workspace_id, cmd, timeout_ms=None):
        body = {"cmd": cmd}
        if timeout_ms:
            body["timeoutMs"] = timeout_ms
        return self._request("POST", self._ws(workspace_id) + "/exec", body)

    def exec_stream(self, workspace_id, cmd, stdin=None, timeout_ms=None):
        """Yields the command's events as they arrive (NDJSON): stdout/stderr chunks, heartbeats,
        then exit (or error)."""
        body = {"cmd": cmd}
        if stdin is not None:
            body["stdin"] = stdin
        if timeout_ms:
            body["timeoutMs"] = timeout_ms
        with self._open("POST", self._ws(workspace_id) + "/exec", body, headers={"Accept": "application/x-ndjson"}, timeout=(timeout_ms or 60000) / 1000 + 60) as response:
            for line in response:
                if line.strip():
                    yield json.loads(line)

    def events(self, workspace_id=None, types=None, last_event_id=None, timeout=60):
        """Yields the fleet's events (SSE) as they happen; resume with the last event's id."""
        query = {}
        if workspace_id:
            query["workspaceId"] = workspace_id
        if types:
            query["types"] = ",".join(types)
        headers = {"Accept": "text/event-stream"}
        if last_event_id:
            headers["Last-Event-ID"] = last_event_id
        with self._open("GET", "/v1/events", query=query or None, headers=headers, timeout=timeout) as response:
            data = []
            for raw in response:
                line = raw.decode().rstrip("\n")
                if line.startswith("data: "):
                    data.append(line[6:])
                elif line == "" and data:
                    yield json.loads("\n".join(data))
                    data = []

    def read_file(self, workspace_id, path, revision=None):
        content, headers = self._request("GET", self._ws(workspace_id) + self._file(path), query={"revision": revision} if revision else None)
        return content, headers.get("X-Fleet-Source")

    def write_file(self, workspace_id, path, content):
        return self._request("PUT", self._ws(workspace_id) + self._file(path), raw=content)

    def delete_file(self, workspace_id, path):
        return self._request("DELETE", self._ws(workspace_id) + self._file(path))

    def list_tree(self, workspace_id, path="", revision=None):
        query = {"path": path} if path else {}
        if revision:
            query["revision"] = revision
        return self._request("GET", self._ws(workspace_id) + "/tree", query=query or None)["entries"]

    def history(self, workspace_id, path):
        return self._request("GET", self._ws(workspace_id) + self._file(path) + "/history")["revisions"]

    def diff(self, workspace_id, from_revision, to_revision=None):
        query = {"from": from_revision}
        if to_revision:
            query["to"] = to_revision
        return self._request("GET", self._ws(workspace_id) + "/diff", query=query)

    def restore_file(self, workspace_id, path, revision):
        return self._request("POST", self._ws(workspace_id) + self._file(path) + "/restore", {"revision": revision})

    def job(self, queue, job_id):
        return self._request("GET", "/v1/jobs/" + urllib.parse.quote(queue, safe="") + "/" + urllib.parse.quote(job_id, safe=""))
