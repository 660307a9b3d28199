"""The kit's reference Agent: serves Nylorun's A2A Profile v2 on JSON-RPC, persists to SQLite.

Where the profile's pages leave a detail open, the reference agent takes one reading; the kit's checks
accept every reading the pages allow (see each requirement's ``decision`` in suites/requirements.toml).
The reference agent's readings:

- HTTP: every JSON-RPC answer is HTTP 200 ``application/json``; refusals before JSON-RPC are 401 (no or
  unknown key), 404 (unknown Agent), 429 (rate limit, with ``Retry-After``), 400 (no ``Nylorun-Subject``),
  403 (a subject or scope the key does not grant), 413 (a body over 8 MiB); a 401 carries
  ``WWW-Authenticate: Bearer``. The card is public.
- JSON-RPC: a request without ``id`` is a notification: it is served and answered HTTP 204 with no body
  (JSON-RPC 2.0 §4.1: no reply); a batch is ``-32600``; invalid params are ``-32602`` with a
  ``google.rpc.BadRequest`` naming each field; every A2A error carries ``google.rpc.ErrorInfo`` with domain
  ``a2a-protocol.org`` (A2A §9.5).
- The card is answered with ``Cache-Control: public, max-age=300`` and an ``ETag`` made from a digest of its
  body (A2A §8.6.1); ``If-None-Match`` with that tag is answered 304.
- A message whose ``contextId`` differs from its task's is ``-32602``; a message to an ended task is
  ``-32004`` reason ``TASK_TERMINAL``; a message naming a task that is still running is ``-32004`` reason
  ``CONTEXT_BUSY``.
- A new message to a busy conversation (one whose task is SUBMITTED or WORKING, or which has messages
  waiting) is queued in SQLite and answered at once, blocking or not, with a task under the message's own
  id, ``TASK_STATE_SUBMITTED``. When the running turn ends or pauses, the oldest queued message gets its
  turn; once taken, its id leads GetTask to the taking task. ``delivery: "reject"`` in the message's
  metadata (or else the request's) is ``-32004`` reason ``CONTEXT_BUSY`` with ``taskId`` and ``contextId``
  in the ErrorInfo metadata. CancelTask on a queued message is ``-32002``. An inline push config of a
  queued message is created when a turn takes it; configs created on the queued id follow it there.
- ``pageSize`` outside 1..100 is ``-32602``; a page token is bound to the subject and filters it was issued
  for, and any other token is ``-32602``.
- History is answered only when ``historyLength`` asks for it, on GetTask, ListTasks and SendMessage.
- Task ids are ``t-`` and a digest of Agent, subject, context and turn number.
- Status timestamps have millisecond precision and strictly increase, so "latest status change first"
  never ties.
- A turn left running when the process stopped is taken up again from its stored stage at start.
"""
