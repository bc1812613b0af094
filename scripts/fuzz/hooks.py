"""Schemathesis hooks of `npm run fuzz` (loaded through the generated schemathesis.toml).

`filter_failure` drops the failures that are contract decisions, not defects: each rule names the check, the
status, the exact message the API answers, the operations, and why. Anything else a check reports stays a
failure. How many each rule dropped is written to FUZZ_ACCEPTED_FILE for the run's summary.
"""

from __future__ import annotations

import atexit
import json
import os
import re
from collections import Counter

import schemathesis

TYPED_CONFIG_UPDATES = r"^(PUT|PATCH) /api/(connectors|tools|triggers|user-triggers)/\{id\}$"
WEBHOOK_WRITES = r"^(POST /api/webhooks|(PUT|PATCH) /api/webhooks/\{id\})$"
AGENT_GRAPH_WRITES = r"^(POST /api/agents(/import)?|(PUT|PATCH) /api/agents/\{id\}|PUT /api/agents/\{id\}/graph)$"

# (name, failure code, status, message regex, operation regex, why). ST202 = "Schema-valid request rejected":
# schemathesis' positive_data_acceptance expects any request its generator drew from the document to succeed, so
# each rule below is a rule the document states in words but no JSON Schema keyword can state, or a request
# whose validity depends on what is stored. The coverage phase draws such values itself (it does not use the
# realistic values of config.ts), so they show up there.
ACCEPTED = [
    (
        "idempotency-key-reused",
        "ST202",
        422,
        r"^Idempotency-Key was already used with a different request$",
        r"^POST ",
        "The generator reuses short keys (\"0\") with other bodies; a key names one request (IETF "
        "draft-ietf-httpapi-idempotency-key-header: 422).",
    ),
    (
        "cursor-not-made-by-the-api",
        "ST202",
        400,
        r"^querystring\.cursor: is not a valid cursor$",
        r"^GET ",
        "A cursor is opaque: only one the API made (from a Link header) is valid; any other string is a 400.",
    ),
    (
        "typed-config-of-another-type",
        "ST202",
        400,
        r"^body\.configJson(\.[^:]+)?: ",
        TYPED_CONFIG_UPDATES,
        "An update's configJson is checked against the stored resource's type (or the new type's whole config when "
        "`type` changes), which a request schema cannot know: the document lists every type's patch.",
    ),
    (
        "webhook-url-not-a-url",
        "ST202",
        400,
        r"^body\.url: must be an absolute http or https URL$",
        WEBHOOK_WRITES,
        "The document says it in words (an absolute http(s) URL); what parses as one (WHATWG URL) is no JSON Schema "
        "pattern.",
    ),
    (
        "webhook-direction-stored",
        "ST202",
        400,
        r"^body\.(events(\.\d+)?: .*(not allowed for incoming webhooks|reserved for events the platform emits|"
        r"an incoming webhook cannot emit)|url: is required for outgoing webhooks)",
        r"^(PUT|PATCH) /api/webhooks/\{id\}$",
        "Which events and whether a url are required depends on the direction, which an update may leave as stored "
        "(a create's document has a variant per direction).",
    ),
    (
        "agent-graph-integrity",
        "ST202",
        400,
        r"^body\.(agent\.)?(graph\.)?(edges\.\d+\.(source|target): names missing node|nodes\.\d+\.id: duplicate node id)",
        AGENT_GRAPH_WRITES,
        "An edge must name nodes of the same graph, and node ids must not repeat: relations between array items "
        "that JSON Schema cannot state (the AgentGraph schema says so; an import's agent has one too).",
    ),
    (
        "expected-fires-window",
        "ST202",
        400,
        r"^querystring\.from: must be (before to \(and before now: [^)]+\)|within the last \d+ days \(RETENTION_DAYS\): older fires "
        r"are deleted)$",
        r"^GET /api/(triggers|user-triggers)/\{id\}/(expected-fires|timeline)$",
        "from must be before to, before now and at most RETENTION_DAYS ago: an order between two parameters and a window on "
        "the clock, stated in the operation's description (the timeline takes the same query); no JSON Schema keyword "
        "compares values.",
    ),
    (
        "usage-window",
        "ST202",
        400,
        r"^querystring(\.from: must not be after to \(\S+ > \S+\)|: from \S+ to \S+ is \d+ days; at most \d+ days per request)$",
        r"^GET /api/account/usage$",
        "from must not be after to, at most 366 days before it (to: today when omitted): an order and a span between two "
        "parameters and the clock, stated in the operation's description; no JSON Schema keyword compares values.",
    ),
    (
        "recovery-window",
        "ST202",
        400,
        r"^body\.since: must be (at most \d+ days )?before (until|now \(until omitted\))$",
        r"^POST /api/webhooks/\{id\}/recover$",
        "since must be before until (now when omitted), at most 30 days before it: an order between two fields and the "
        "clock, stated in the operation's description; no JSON Schema keyword compares values.",
    ),
    (
        "tool-parameters-not-compiling",
        "ST202",
        400,
        r"^body\.(tools\.\d+\.)?configJson\.parameters: (is not a valid JSON Schema: |must be at most 32 KiB$)",
        r"^POST /api/agents/(\{agentId\}/tools|import)$",
        "A custom tool's parameters are a JSON Schema the API compiles (draft-07, RE2 patterns, no $ref outside it, at most "
        "32 KiB): the document states their shape (an object whose type is \"object\") and this rule in words; whether a "
        "schema compiles is no JSON Schema keyword. (Updates: typed-config-of-another-type.)",
    ),
    (
        "import-secret-left-out",
        "ST202",
        400,
        r"^body\.(tools|connectors|triggers)\.\d+\.configJson\.[\s\S]*: (is a secret|are secrets) the export left out; fill in each in "
        r"full$",
        r"^POST /api/agents/import$",
        "Each name a child's `secrets` lists must be filled in its configJson: a relation between two fields, stated in the "
        "description of `secrets`; no JSON Schema keyword states it.",
    ),
    (
        "masked-secret-of-another-value",
        "ST202",
        400,
        r": a masked value can only be sent back unchanged",
        r"^(POST|PUT|PATCH) ",
        "\"••••\" + the last 4 characters (as reads show a secret) keeps the stored secret; a mask of no stored secret "
        "is refused (README: Conventions), on a create too. Whether it matches depends on what is stored; the fuzzer "
        "sends masks it read in responses.",
    ),
    (
        "agent-not-in-account",
        "ST202",
        400,
        r"^body\.agentId: no agent with this id in your account$",
        r"^(POST /api/user-triggers|(PUT|PATCH) /api/user-triggers/\{id\})$",
        "A user trigger may link to an agent of the caller's account only: a reference to stored data.",
    ),
    (
        "prototype-pollution-key",
        "ST202",
        400,
        r': "(__proto__" is not allowed as a key|prototype" is not allowed as a key inside "constructor")$',
        r"^(POST|PUT|PATCH) ",
        "Refused in any body before validation (README: Conventions; the document's 400 says so), since a merge that "
        "assigns out[key] would turn them into a change of prototype; no field needs them.",
    ),
    (
        "cron-expression-syntax",
        "ST202",
        400,
        r"^querystring\.(cronExpression|timezone): ",
        r"^GET /api/schedule-preview$",
        "A cron expression's syntax and the IANA zones are stated in words, as on a trigger's configJson (whose "
        "realistic values config.ts draws for both); the coverage phase draws its own strings.",
    ),
    (
        "approval-timeout-range",
        "ST202",
        400,
        r"^body\.(agent\.)?configJson\.approvalTimeout: must be a duration from 1m to 30d ",
        AGENT_GRAPH_WRITES,
        "The document's pattern states a duration's form; its range (1m to 30d) is stated in words, as no JSON "
        "Schema keyword can bound the value of a string (config.ts draws realistic values in positive mode).",
    ),
    (
        "unstorable-string",
        "ST202",
        400,
        r": contains a NUL character or an unpaired surrogate$",
        r"^(POST|PUT|PATCH) ",
        "Refused in any body by design (README: Conventions; the document's 400 says so): Postgres cannot store them. "
        "The generator is asked for neither; it still drew a lone surrogate into a long uniqueItems list.",
    ),
    (
        "mcp-accept-header",
        "ST202",
        406,
        r"^Not Acceptable: Client must accept both application/json and text/event-stream$",
        r"^POST /api/mcp$",
        "MCP's Streamable HTTP transport requires Accept to name both types (the operation's 406 says so); an Accept "
        "header the generator draws, or none, does not.",
    ),
    (
        "invite-the-owner",
        "ST202",
        400,
        r"^body\.email: is the account owner's own address$",
        r"^POST /api/team$",
        "The owner cannot be invited to their own account: which email is the owner's depends on the caller.",
    ),
]

# ST101 "Server error", for one answer only: 502 from GET /api/tools/{id}/functions when the tool's MCP server cannot
# be reached. The examples phase creates an mcp tool from the document's example (a public server), and the fuzz stack
# reaches no public host (README: Fuzzing): the API's answer about a third party, documented, not a fault of its own.
UPSTREAM_UNREACHABLE = (
    "mcp-server-unreachable",
    "ST101",
    502,
    r"^the MCP server could not be reached: ",
    r"^GET /api/tools/\{id\}/functions$",
)

# ST302 "Created resource not found": a create sent again with its Idempotency-Key is answered with the first
# response, the same id, even when that resource has been deleted since (Idempotent-Replayed: true; Stripe does
# the same); the fuzzer then finds it gone. Dropped only for ids that came in such a replay.
REPLAYED_CREATE = ("create-replayed-after-delete", "ST302")

_dropped: Counter[str] = Counter()
_replayed_ids: set[str] = set()


def _message(response) -> str | None:
    """The API's `message`, or a JSON-RPC error's (POST /api/mcp)."""
    try:
        body = json.loads(response.content)
    except ValueError:
        return None
    if not isinstance(body, dict):
        return None
    error = body.get("error")
    if "message" not in body and isinstance(error, dict):
        return error.get("message")
    return body.get("message")


@schemathesis.hook
def after_call(context, case, response) -> None:
    if "true" in response.headers.get("idempotent-replayed", []):
        try:
            body = json.loads(response.content)
        except ValueError:
            return
        if isinstance(body, dict) and isinstance(body.get("id"), str):
            _replayed_ids.add(body["id"])


@schemathesis.hook
def filter_failure(context, failure, case, response) -> bool:
    name, code = REPLAYED_CREATE
    if failure.code == code and set(map(str, (case.path_parameters or {}).values())) & _replayed_ids:
        _dropped[name] += 1
        return False
    message = _message(response)
    if message is None:
        return True
    label = f"{case.method.upper()} {case.operation.path}"
    name, code, status, pattern, operations = UPSTREAM_UNREACHABLE
    if failure.code == code and response.status_code == status and re.search(pattern, message) and re.search(operations, label):
        _dropped[name] += 1
        return False
    for name, code, status, pattern, operations, _why in ACCEPTED:
        if failure.code == code and response.status_code == status and re.search(pattern, message) and re.search(operations, label):
            _dropped[name] += 1
            return False
    return True


@atexit.register
def _write_counts() -> None:
    path = os.environ.get("FUZZ_ACCEPTED_FILE")
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(dict(_dropped), out)
