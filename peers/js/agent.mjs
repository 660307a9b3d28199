#!/usr/bin/env node
// A peer Agent built on the official A2A JS SDK (@a2a-js/sdk 1.3, A2A 1.0) and Express, for checking the
// kit against an implementation the kit did not write. It uses the SDK's stock pieces only:
//   agentCardHandler + jsonRpcHandler (Express), DefaultRequestHandler, InMemoryTaskStore,
//   InMemoryPushNotificationStore, DefaultPushNotificationSender, UserBuilder.noAuthentication.
// It implements the kit's scenario contract (docs/scenario-contract.md) on the core tier: no extensions.
//
//   node peers/js/agent.mjs --port 0        # prints "listening http://127.0.0.1:PORT/" first
//
// --plain runs instead a plain agent as a user would build it on the official SDK: the same stock handler, stores
// and push sender, but no scenario contract on the card or in behaviour, jsonRpcHandler at /a2a (not the origin),
// the card only at the origin's /.well-known/agent-card.json (A2A §8.2), streaming: true with the SDK's own SSE
// answers (SendStreamingMessage, SubscribeToTask), and an ordinary executor: every message becomes a Task that goes
// WORKING, works --work-ms (default 50 ms) and COMPLETES with a text artifact echoing the message's text;
// CancelTask cancels it while it works.
//
//   node peers/js/agent.mjs --plain --port 0   # prints "listening http://127.0.0.1:PORT/a2a" first
//
// Authentication is ignored: every caller is the SDK's unauthenticated user (Authorization, Nylorun-Subject
// and Nylorun-Scopes are accepted and not read), so all callers share one task space.

import crypto from 'node:crypto';
import express from 'express';
import { AGENT_CARD_PATH, Role, TaskState } from '@a2a-js/sdk';
import {
  AgentEvent,
  DefaultPushNotificationSender,
  DefaultRequestHandler,
  InMemoryPushNotificationStore,
  InMemoryTaskStore,
} from '@a2a-js/sdk/server';
import { UserBuilder, agentCardHandler, jsonRpcHandler } from '@a2a-js/sdk/server/express';

const CONTRACT_TAG = 'scenario-contract/v1';
// Scenarios this peer runs. Skipped (they need a Nylorun profile extension, which a core agent does not have):
// approve, connect (interactions/v1), uncertain (effects/v1), plan (progress/v1), file (files/v1 data),
// tool (its point is what telemetry/v1 reveals).
const SCENARIOS = ['complete', 'echo', 'ask', 'slow', 'fail', 'inspect'];
const DEFAULT_SLOW_MS = 2000;
const MAX_SLOW_MS = 10 * 60 * 1000;
const INSPECT_LIMIT = 8 * 1024 * 1024;
const PLAIN_RPC_PATH = '/a2a';
const DEFAULT_WORK_MS = 50;

function parseArgs(argv) {
  const args = { port: 0, host: '127.0.0.1', pushTimeoutMs: 5000, plain: false, workMs: DEFAULT_WORK_MS };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--plain') {
      args.plain = true;
      continue;
    }
    if (flag === '--port') args.port = Number.parseInt(value, 10);
    else if (flag === '--work-ms') args.workMs = Number.parseInt(value, 10);
    else if (flag === '--host') args.host = value;
    else if (flag === '--push-timeout-ms') args.pushTimeoutMs = Number.parseInt(value, 10);
    else if (flag === '--help' || flag === '-h') {
      process.stdout.write(
        'usage: node peers/js/agent.mjs [--plain [--work-ms 50]] [--port N] [--host 127.0.0.1] [--push-timeout-ms 5000]\n',
      );
      process.exit(0);
    } else {
      process.stderr.write(`unknown argument ${flag}\n`);
      process.exit(2);
    }
    i++;
  }
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) {
    process.stderr.write('--port must be 0..65535\n');
    process.exit(2);
  }
  if (!Number.isInteger(args.workMs) || args.workMs < 0) {
    process.stderr.write('--work-ms must be a whole number\n');
    process.exit(2);
  }
  return args;
}

// ─── SDK object builders (the SDK's internal, ts-proto shapes) ──────────────────────────────────────────────

function textPart(text, mediaType = 'text/plain') {
  return { content: { $case: 'text', value: text }, mediaType, filename: '', metadata: undefined };
}

function rawPart(bytes, filename, mediaType) {
  return { content: { $case: 'raw', value: Buffer.from(bytes) }, mediaType, filename, metadata: undefined };
}

function urlPart(url, filename, mediaType) {
  return { content: { $case: 'url', value: url }, mediaType, filename, metadata: undefined };
}

function dataPart(data) {
  return { content: { $case: 'data', value: data }, mediaType: 'application/json', filename: '', metadata: undefined };
}

function agentMessage(taskId, contextId, text) {
  return {
    messageId: crypto.randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

function now() {
  return new Date().toISOString();
}

function derivedFile(taskId, name) {
  const digest = crypto.createHash('sha256').update(`${taskId}/${name}`).digest('hex');
  return Buffer.from(`js peer agent file ${name} for task ${taskId}\n${digest}\n`);
}

// ─── the scenario contract ─────────────────────────────────────────────────────────────────────────────────

function parseScenario(message) {
  const first = message.parts?.[0];
  const text = first?.content?.$case === 'text' ? first.content.value : '';
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length < 2 || words[0].toLowerCase() !== 'scenario' || !SCENARIOS.includes(words[1].toLowerCase())) {
    return { name: 'echo', args: [], plain: true };
  }
  return { name: words[1].toLowerCase(), args: words.slice(2) };
}

function wholeNumber(value, fallback) {
  return typeof value === 'string' && /^[0-9]+$/.test(value) ? Number.parseInt(value, 10) : fallback;
}

function echoParts(message) {
  let parts = [...(message.parts ?? [])];
  const first = parts[0];
  if (first?.content?.$case === 'text' && first.content.value.trim().split(/\s+/)[0]?.toLowerCase() === 'scenario') {
    parts = parts.slice(1);
  }
  return parts.length ? structuredClone(parts) : [textPart('')];
}

class Cancelled extends Error {}

class ScenarioExecutor {
  constructor(files) {
    this.files = files; // taskId -> Map(name -> {bytes, mediaType})
    this.running = new Map(); // taskId -> {contextId, cancel()}
    this.paused = new Map(); // taskId -> {contextId, scenario}
  }

  async execute(requestContext, eventBus) {
    const { taskId, contextId, userMessage } = requestContext;
    const existing = requestContext.task;
    const publish = (event) => eventBus.publish(event);
    const status = (state, text) =>
      publish(
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, message: text ? agentMessage(taskId, contextId, text) : undefined, timestamp: now() },
          metadata: undefined,
        }),
      );
    const artifact = (name, parts) =>
      publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId: crypto.randomUUID(),
            name,
            description: '',
            parts,
            metadata: undefined,
            extensions: [],
          },
          append: false,
          lastChunk: true,
          metadata: undefined,
        }),
      );

    // Every execute call publishes the Task first (the SDK requires a task or message event first).
    if (existing) {
      publish(AgentEvent.task(existing));
    } else {
      publish(AgentEvent.task(submittedTask(taskId, contextId, userMessage)));
    }

    // A message on a paused `ask` task answers it.
    const paused = this.paused.get(taskId);
    if (existing && paused) {
      this.paused.delete(taskId);
      const answer = (userMessage.parts ?? [])
        .filter((p) => p.content?.$case === 'text')
        .map((p) => p.content.value)
        .join(' ');
      status(TaskState.TASK_STATE_WORKING, 'Thanks, working on it.');
      artifact('answer', [textPart(`answer: ${answer}`)]);
      status(TaskState.TASK_STATE_COMPLETED, 'Thanks, done.');
      return;
    }

    const scenario = parseScenario(userMessage);
    status(TaskState.TASK_STATE_WORKING, 'Working on it.');
    switch (scenario.name) {
      case 'complete': {
        artifact('summary', [textPart('The scenario completed.')]);
        artifact('report.bin', [rawPart(derivedFile(taskId, 'report.bin'), 'report.bin', 'application/octet-stream')]);
        const files = this.files.get(taskId) ?? new Map();
        files.set('report.txt', { bytes: derivedFile(taskId, 'report.txt'), mediaType: 'text/plain' });
        this.files.set(taskId, files);
        artifact('report.txt', [
          urlPart(`${this.baseUrl}files/${encodeURIComponent(taskId)}/report.txt`, 'report.txt', 'text/plain'),
        ]);
        artifact('result', [dataPart({ scenario: 'complete', ok: true })]);
        status(TaskState.TASK_STATE_COMPLETED, 'Done.');
        return;
      }
      case 'echo': {
        artifact('echo', echoParts(userMessage));
        status(TaskState.TASK_STATE_COMPLETED, 'Echoed.');
        return;
      }
      case 'ask': {
        this.paused.set(taskId, { contextId });
        status(TaskState.TASK_STATE_INPUT_REQUIRED, 'Which colour should the report use? (blue or green)');
        return;
      }
      case 'slow': {
        const ms = Math.min(wholeNumber(scenario.args[0], DEFAULT_SLOW_MS), MAX_SLOW_MS);
        try {
          await this.sleep(taskId, contextId, ms);
        } catch (err) {
          if (err instanceof Cancelled) return; // cancelTask published CANCELED
          throw err;
        }
        artifact('slow', [textPart(`worked for ${ms} ms`)]);
        status(TaskState.TASK_STATE_COMPLETED, 'Done, slowly.');
        return;
      }
      case 'fail': {
        status(TaskState.TASK_STATE_FAILED, 'The scenario failed, as asked.');
        return;
      }
      case 'inspect': {
        const reports = [];
        for (const part of userMessage.parts ?? []) {
          if (part.content?.$case !== 'url') continue;
          const url = part.content.value;
          try {
            const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(10000) });
            const bytes = Buffer.from(await response.arrayBuffer()).subarray(0, INSPECT_LIMIT + 1);
            reports.push({
              url,
              status: response.status,
              size: bytes.length,
              sha256: crypto.createHash('sha256').update(bytes).digest('hex'),
            });
          } catch (err) {
            reports.push({ url, error: err?.name ?? 'Error' });
          }
        }
        artifact('inspection', [dataPart({ inspected: reports })]);
        status(TaskState.TASK_STATE_COMPLETED, `Inspected ${reports.length} file(s).`);
        return;
      }
      default:
        status(TaskState.TASK_STATE_FAILED, `Unknown scenario ${scenario.name}.`);
    }
  }

  sleep(taskId, contextId, ms) {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.running.delete(taskId);
        resolve();
      }, ms);
      this.running.set(taskId, {
        contextId,
        cancel: () => {
          clearTimeout(timer);
          this.running.delete(taskId);
          reject(new Cancelled());
        },
      });
    });
  }

  async cancelTask(taskId, eventBus) {
    const running = this.running.get(taskId);
    const paused = this.paused.get(taskId);
    const contextId = running?.contextId ?? paused?.contextId;
    if (contextId === undefined) return; // nothing of ours runs: the handler answers TaskNotCancelable
    this.paused.delete(taskId);
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId,
        status: {
          state: TaskState.TASK_STATE_CANCELED,
          message: agentMessage(taskId, contextId, 'Canceled, as asked.'),
          timestamp: now(),
        },
        metadata: undefined,
      }),
    );
    running?.cancel();
  }
}

// ─── the plain agent (--plain) ─────────────────────────────────────────────────────────────────────────────

class EchoExecutor {
  constructor(workMs) {
    this.workMs = workMs;
    this.running = new Map(); // taskId -> {contextId, stop()}
  }

  async execute(requestContext, eventBus) {
    const { taskId, contextId, userMessage } = requestContext;
    const status = (state) =>
      eventBus.publish(
        AgentEvent.statusUpdate({ taskId, contextId, status: { state, timestamp: now() }, metadata: undefined }),
      );
    eventBus.publish(AgentEvent.task(requestContext.task ?? submittedTask(taskId, contextId, userMessage)));
    status(TaskState.TASK_STATE_WORKING);
    const finished = await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(true), this.workMs);
      this.running.set(taskId, {
        contextId,
        stop: () => {
          clearTimeout(timer);
          resolve(false);
        },
      });
    });
    this.running.delete(taskId);
    if (!finished) return; // cancelTask published CANCELED
    const text = (userMessage.parts ?? [])
      .filter((p) => p.content?.$case === 'text')
      .map((p) => p.content.value)
      .join(' ');
    eventBus.publish(
      AgentEvent.artifactUpdate({
        taskId,
        contextId,
        artifact: {
          artifactId: crypto.randomUUID(),
          name: 'echo',
          description: '',
          parts: [textPart(text)],
          metadata: undefined,
          extensions: [],
        },
        append: false,
        lastChunk: true,
        metadata: undefined,
      }),
    );
    status(TaskState.TASK_STATE_COMPLETED);
  }

  async cancelTask(taskId, eventBus) {
    const running = this.running.get(taskId);
    if (!running) return; // nothing runs: the handler answers TaskNotCancelable
    this.running.delete(taskId);
    eventBus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: running.contextId,
        status: { state: TaskState.TASK_STATE_CANCELED, message: undefined, timestamp: now() },
        metadata: undefined,
      }),
    );
    running.stop();
  }
}

// The Task an execute call publishes first when the request names no existing task.
function submittedTask(taskId, contextId, userMessage) {
  return {
    id: taskId,
    contextId,
    status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: now() },
    artifacts: [],
    history: [userMessage],
    metadata: undefined,
  };
}

function peerCard(url, { name, description, streaming, modes, skill }) {
  return {
    name,
    description,
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', tenant: '', protocolVersion: '1.0' }],
    provider: { organization: 'Nylorun A2A conformance kit (peer)', url: 'https://docs.nylorun.com/a2a/conformance' },
    version: '0.1.0',
    capabilities: { streaming, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: modes,
    defaultOutputModes: modes,
    skills: [{ ...skill, inputModes: [], outputModes: [], securityRequirements: [] }],
    signatures: [],
  };
}

function plainAgentCard(url) {
  return peerCard(url, {
    name: 'JS SDK plain peer agent',
    description: 'A plain A2A 1.0 agent on @a2a-js/sdk 1.3 (JSON-RPC): it echoes what it is sent.',
    streaming: true,
    modes: ['text/plain'],
    skill: {
      id: 'echo',
      name: 'Echo',
      description: "Answers every message with a completed task whose artifact echoes the message's text.",
      tags: ['echo'],
      examples: ['hello'],
    },
  });
}

// ─── the card and the server ───────────────────────────────────────────────────────────────────────────────

function agentCard(url) {
  return peerCard(url, {
    name: 'JS SDK peer agent',
    description: 'A peer Agent built on @a2a-js/sdk 1.3 (A2A 1.0 JSON-RPC) running the kit scenario contract.',
    streaming: false,
    modes: ['text/plain', 'application/json', 'application/octet-stream'],
    skill: {
      id: 'conformance-scenarios',
      name: 'Conformance scenarios',
      description: "Runs the kit's scenario contract: send 'scenario <name> [argument]' as the first text part.",
      tags: [CONTRACT_TAG, ...SCENARIOS.map((name) => `scenario:${name}`)],
      examples: SCENARIOS.map((name) => `scenario ${name}`),
    },
  });
}

const args = parseArgs(process.argv.slice(2));
const app = express();
const server = args.plain ? servePlain() : serveContract();

function serveContract() {
  const files = new Map();
  const executor = new ScenarioExecutor(files);

  // The url parts of `complete` point here (plain Express: the SDK serves no files).
  app.get('/files/:taskId/:name', (req, res) => {
    const file = files.get(req.params.taskId)?.get(req.params.name);
    if (!file) {
      res.status(404).type('text/plain').send('no such file');
      return;
    }
    res.status(200).type(file.mediaType).send(file.bytes);
  });

  const listening = app.listen(args.port, args.host, () => {
    const { port } = listening.address();
    const baseUrl = `http://${args.host}:${port}/`;
    executor.baseUrl = baseUrl;
    const card = agentCard(baseUrl);
    const taskStore = new InMemoryTaskStore();
    const pushStore = new InMemoryPushNotificationStore();
    const pushSender = new DefaultPushNotificationSender(pushStore, { timeout: args.pushTimeoutMs });
    const requestHandler = new DefaultRequestHandler(card, taskStore, executor, undefined, pushStore, pushSender);
    app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
    app.use('/', jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
    process.stdout.write(`listening ${baseUrl}\n`);
  });
  return listening;
}

function servePlain() {
  const listening = app.listen(args.port, args.host, () => {
    const { port } = listening.address();
    const endpoint = `http://${args.host}:${port}${PLAIN_RPC_PATH}`;
    const card = plainAgentCard(endpoint);
    const pushStore = new InMemoryPushNotificationStore();
    const pushSender = new DefaultPushNotificationSender(pushStore, { timeout: args.pushTimeoutMs });
    const requestHandler = new DefaultRequestHandler(
      card,
      new InMemoryTaskStore(),
      new EchoExecutor(args.workMs),
      undefined,
      pushStore,
      pushSender,
    );
    app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: requestHandler }));
    app.use(PLAIN_RPC_PATH, jsonRpcHandler({ requestHandler, userBuilder: UserBuilder.noAuthentication }));
    process.stdout.write(`listening ${endpoint}\n`);
  });
  return listening;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close();
    server.closeAllConnections?.();
    process.exit(0);
  });
}
