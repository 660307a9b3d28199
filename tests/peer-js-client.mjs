#!/usr/bin/env node
// The official A2A JS SDK client (@a2a-js/sdk 1.3, A2A 1.0 JSON-RPC) against the kit's reference agent.
//
//   node tests/peer-js-client.mjs <base-url> <key> <subject> [--agent support] [--push-url http://127.0.0.1:PORT/hook]
//
// <base-url> is the reference agent's base (http://127.0.0.1:PORT; the Agent is <base>/v1/a2a/agents/<agent>)
// or an Agent endpoint itself (…/v1/a2a/agents/<id>). The client is made the way an SDK user makes one:
// ClientFactory + DefaultAgentCardResolver + JsonRpcTransportFactory, each given a fetch that adds the
// profile's headers (Authorization: Bearer <key>, Nylorun-Subject, Nylorun-Scopes: sessions:own,
// A2A-Version: 1.0). Steps: complete; ask + answer on the same task until completed; GetTask; ListTasks;
// CancelTask of `scenario slow 60000`; CreateTaskPushNotificationConfig (the agent must run with
// --push-secret and --push-allow for the --push-url host:port). Any failure exits 1 with a clear message.

import crypto from 'node:crypto';
import http from 'node:http';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver, JsonRpcTransportFactory } from '@a2a-js/sdk/client';

const USAGE =
  'usage: node tests/peer-js-client.mjs <base-url> <key> <subject> [--agent support] [--push-url URL]';

function parseArgs(argv) {
  const positional = [];
  const options = { agent: 'support', pushUrl: undefined, timeoutMs: 60000 };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--agent') options.agent = argv[++i];
    else if (arg === '--push-url') options.pushUrl = argv[++i];
    else if (arg === '--timeout-ms') options.timeoutMs = Number.parseInt(argv[++i], 10);
    else if (arg === '-h' || arg === '--help') {
      console.log(USAGE);
      process.exit(0);
    } else if (arg.startsWith('--')) fail(`unknown option ${arg}\n${USAGE}`, 2);
    else positional.push(arg);
  }
  if (positional.length !== 3) fail(USAGE, 2);
  const [base, key, subject] = positional;
  return { base: base.replace(/\/+$/, ''), key, subject, ...options };
}

class StepFailure extends Error {}

function fail(message, code = 1) {
  console.error(`peer-js-client: FAILED: ${message}`);
  process.exit(code);
}

function check(condition, message) {
  if (!condition) throw new StepFailure(message);
}

const STATE = (state) => TaskState[state] ?? String(state);

function describeError(err) {
  if (!(err instanceof Error)) return String(err);
  const parts = [`${err.name}: ${err.message}`];
  if (err.envelopeCode !== undefined) parts.push(`code ${err.envelopeCode}`);
  if (err.data !== undefined) parts.push(`data ${JSON.stringify(err.data)}`);
  if (err.cause) parts.push(`cause ${describeError(err.cause)}`);
  return parts.join('; ');
}

// ─── the SDK's shapes (ts-proto: oneof as $case, enums as numbers, every field present) ─────────────────────

function textPart(text) {
  return { content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' };
}

function userMessage(text, { taskId = '', contextId = '' } = {}) {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function sendParams(message, configuration = {}) {
  return {
    tenant: '',
    message,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      historyLength: undefined,
      returnImmediately: false,
      ...configuration,
    },
    metadata: undefined,
  };
}

function asTask(result, what) {
  check(result && typeof result === 'object', `${what}: no result`);
  check(!('messageId' in result) && 'status' in result, `${what}: expected a Task, got a Message ${JSON.stringify(result)}`);
  return result;
}

function artifactTexts(task) {
  return (task.artifacts ?? []).flatMap((a) =>
    (a.parts ?? []).filter((p) => p.content?.$case === 'text').map((p) => p.content.value),
  );
}

// ─── a webhook receiver for the push config (so deliveries land somewhere) ─────────────────────────────────

function startReceiver(pushUrl) {
  const url = new URL(pushUrl);
  const deliveries = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      deliveries.push({ path: req.url, headers: req.headers, body });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  return new Promise((resolve) => {
    server.once('error', (err) => {
      console.log(`  (push receiver not started on ${url.host}: ${err.code}; deliveries will fail, creating still counts)`);
      resolve({ deliveries, close: () => {} });
    });
    server.listen(Number(url.port), url.hostname, () => resolve({ deliveries, close: () => server.close() }));
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ─── the run ───────────────────────────────────────────────────────────────────────────────────────────────

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const agentUrl = /\/v1\/a2a\/agents\/[^/]+$/.test(args.base) ? args.base : `${args.base}/v1/a2a/agents/${args.agent}`;
  const cardUrl = `${agentUrl}/card`;
  const exchanges = [];

  // The profile's headers on every request the SDK makes (card fetch and JSON-RPC calls alike).
  const profileFetch = async (input, init = {}) => {
    const headers = new Headers(init.headers ?? {});
    headers.set('Authorization', `Bearer ${args.key}`);
    headers.set('Nylorun-Subject', args.subject);
    headers.set('Nylorun-Scopes', 'sessions:own');
    headers.set('A2A-Version', '1.0');
    const started = Date.now();
    const response = await fetch(input, { ...init, headers, signal: init.signal ?? AbortSignal.timeout(args.timeoutMs) });
    let method = init.method ?? 'GET';
    try {
      method = JSON.parse(init.body).method ?? method;
    } catch {
      /* a GET */
    }
    exchanges.push({ method, status: response.status, ms: Date.now() - started });
    if (!response.ok) {
      const text = await response.clone().text();
      console.error(`  ← HTTP ${response.status} for ${method} ${String(input)}: ${text.slice(0, 500)}`);
    }
    return response;
  };

  const factory = new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: profileFetch })],
      preferredTransports: ['JSONRPC'],
      cardResolver: new DefaultAgentCardResolver({ fetchImpl: profileFetch }),
    }),
  );

  const results = [];
  const step = async (name, fn) => {
    const started = Date.now();
    try {
      const detail = await fn();
      const ms = Date.now() - started;
      results.push({ name, ok: true, ms });
      console.log(`ok   ${name} (${ms} ms)${detail ? `: ${detail}` : ''}`);
    } catch (err) {
      const ms = Date.now() - started;
      console.log(`FAIL ${name} (${ms} ms): ${err instanceof StepFailure ? err.message : describeError(err)}`);
      throw new StepFailure(`${name}: ${err instanceof StepFailure ? err.message : describeError(err)}`);
    }
  };

  let client;
  await step('card + client (ClientFactory.createFromUrl)', async () => {
    client = await factory.createFromUrl(cardUrl, '');
    const card = await client.getAgentCard();
    check(client.protocolVersion === '1.0', `the client negotiated protocol ${client.protocolVersion}, not 1.0`);
    return `card ${JSON.stringify(card.name)}, transport ${client.transport.protocolName} ${client.protocolVersion}, pushNotifications ${card.capabilities?.pushNotifications}`;
  });

  let completed;
  await step('SendMessage scenario complete', async () => {
    completed = asTask(await client.sendMessage(sendParams(userMessage('scenario complete'))), 'complete');
    check(
      completed.status?.state === TaskState.TASK_STATE_COMPLETED,
      `scenario complete ended ${STATE(completed.status?.state)}, not TASK_STATE_COMPLETED`,
    );
    const kinds = new Set((completed.artifacts ?? []).flatMap((a) => a.parts.map((p) => p.content?.$case)));
    return `task ${completed.id}, ${completed.artifacts.length} artifacts, part kinds ${[...kinds].sort().join(',')}`;
  });

  let asked;
  await step('SendMessage scenario ask, then answer on the same task until completed', async () => {
    asked = asTask(await client.sendMessage(sendParams(userMessage('scenario ask'))), 'ask');
    check(
      asked.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED,
      `scenario ask paused as ${STATE(asked.status?.state)}, not TASK_STATE_INPUT_REQUIRED`,
    );
    let task = asked;
    for (let round = 1; task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED; round++) {
      check(round <= 3, `the task still asks after ${round - 1} answers`);
      const answer = userMessage('blue', { taskId: task.id, contextId: task.contextId });
      task = asTask(await client.sendMessage(sendParams(answer)), `answer ${round}`);
      check(task.id === asked.id, `the answer landed on task ${task.id}, not on the asking task ${asked.id}`);
      for (let i = 0; i < 100 && task.status?.state === TaskState.TASK_STATE_WORKING; i++) {
        await sleep(100);
        task = await client.getTask({ tenant: '', id: asked.id, historyLength: undefined });
      }
    }
    check(
      task.status?.state === TaskState.TASK_STATE_COMPLETED,
      `the answered task ended ${STATE(task.status?.state)}, not TASK_STATE_COMPLETED`,
    );
    check(
      artifactTexts(task).some((t) => t.includes('blue')),
      `no artifact text contains the answer: ${JSON.stringify(artifactTexts(task))}`,
    );
    asked = task;
    return `task ${task.id} completed with ${JSON.stringify(artifactTexts(task))}`;
  });

  await step('GetTask', async () => {
    const got = await client.getTask({ tenant: '', id: asked.id, historyLength: 10 });
    check(got.id === asked.id && got.contextId === asked.contextId, `GetTask answered ${got.id}/${got.contextId}`);
    check(got.status?.state === TaskState.TASK_STATE_COMPLETED, `GetTask state ${STATE(got.status?.state)}`);
    check((got.history ?? []).length <= 10, `historyLength 10 answered ${got.history.length} messages`);
    return `${STATE(got.status.state)}, ${got.history.length} history messages`;
  });

  await step('ListTasks (client.listTasks)', async () => {
    const listed = await client.listTasks({
      tenant: '',
      contextId: completed.contextId,
      status: TaskState.TASK_STATE_UNSPECIFIED,
      pageSize: 10,
      pageToken: '',
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: undefined,
    });
    const ids = listed.tasks.map((t) => t.id);
    check(ids.includes(completed.id), `ListTasks of context ${completed.contextId} lacks task ${completed.id}: ${ids}`);
    check(
      listed.tasks.every((t) => t.contextId === completed.contextId),
      'ListTasks with a contextId filter listed a task of another context',
    );
    return `${listed.tasks.length} task(s), totalSize ${listed.totalSize}, nextPageToken ${JSON.stringify(listed.nextPageToken)}`;
  });

  await step('CancelTask of scenario slow 60000', async () => {
    const slow = asTask(
      await client.sendMessage(sendParams(userMessage('scenario slow 60000'), { returnImmediately: true })),
      'slow',
    );
    check(
      ![TaskState.TASK_STATE_COMPLETED, TaskState.TASK_STATE_FAILED, TaskState.TASK_STATE_CANCELED].includes(
        slow.status?.state,
      ),
      `returnImmediately answered the slow task already ${STATE(slow.status?.state)}`,
    );
    const canceled = await client.cancelTask({ tenant: '', id: slow.id, metadata: undefined });
    check(canceled.status?.state === TaskState.TASK_STATE_CANCELED, `CancelTask answered ${STATE(canceled.status?.state)}`);
    const after = await client.getTask({ tenant: '', id: slow.id, historyLength: 0 });
    check(after.status?.state === TaskState.TASK_STATE_CANCELED, `GetTask after cancel: ${STATE(after.status?.state)}`);
    return `task ${slow.id}: ${STATE(slow.status.state)} → ${STATE(canceled.status.state)}`;
  });

  if (!args.pushUrl) {
    console.log('skip CreateTaskPushNotificationConfig: no --push-url given');
  } else {
    const receiver = await startReceiver(args.pushUrl);
    try {
      await step('CreateTaskPushNotificationConfig', async () => {
        const paused = asTask(await client.sendMessage(sendParams(userMessage('scenario ask'))), 'ask for push');
        const token = `tok-${crypto.randomUUID()}`;
        const created = await client.createTaskPushNotificationConfig({
          tenant: '',
          id: '',
          taskId: paused.id,
          url: args.pushUrl,
          token,
          authentication: undefined,
        });
        check(created.id, `the created config has no id: ${JSON.stringify(created)}`);
        check(created.url === args.pushUrl, `the created config has url ${created.url}, not ${args.pushUrl}`);
        // Clean up: cancelling the paused task also makes one update the config receives.
        await client.cancelTask({ tenant: '', id: paused.id, metadata: undefined });
        for (let i = 0; i < 30 && receiver.deliveries.length === 0; i++) await sleep(100);
        return `config ${created.id} on task ${paused.id}; ${receiver.deliveries.length} delivery(ies) seen within 3 s (not required)`;
      });
    } finally {
      receiver.close();
    }
  }

  const calls = exchanges.map((e) => `${e.method}:${e.status}`).join(' ');
  console.log(`all ${results.length} steps passed against ${agentUrl}`);
  console.log(`HTTP exchanges: ${calls}`);
}

main().catch((err) => {
  fail(err instanceof StepFailure ? err.message : describeError(err));
});
