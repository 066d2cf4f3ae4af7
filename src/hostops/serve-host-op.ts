/**
 * The serving side of host ops: one handler per operation, each running it on this host's local
 * provider and returning the reply its result schema describes (a file's content as base64, an
 * operation without a result as `null`, which is what BullMQ stored for the `undefined` returned
 * before). The payload is validated by the caller of `serveHostOp` (the hostops processor, with
 * this host's rules).
 */
import type { SandboxProvider } from '../providers/sandbox-provider.js';
import { execOutputWriter, type OutputSink } from './exec-output-writer.js';
import type { ExecOutputStore } from '../state/exec-output-store.js';
import type { Logger } from '../logger.js';
import type { HostOp, HostOpPayload, HostOpPayloadOf } from './host-op-payload.js';
import type { HostOpReply } from './host-op-results.js';

type PayloadOf = { readonly [O in HostOp]: HostOpPayloadOf<O> };

/** What runs each operation on the serving host. */
export type HostOpHandlers = { readonly [O in HostOp]: (payload: PayloadOf[O], signal: AbortSignal) => Promise<HostOpReply<O>> };

// An operation without a result replies `null`.
const done = (work: Promise<void>): Promise<null> => work.then(() => null);

/** Where a streamed exec's output goes (the stream the caller follows), and where append failures are told. */
export interface ExecOutputs {
  sink(execId: string): OutputSink;
  onError(error: unknown): void;
}

/** Streamed exec output into `store`; a failed append is logged (the result still carries the output). */
export function execOutputsOf(store: Pick<ExecOutputStore, 'append' | 'end'>, logger: Pick<Logger, 'warn'>): ExecOutputs {
  return {
    sink: (execId) => ({ append: (chunks, firstSeq) => store.append(execId, chunks, firstSeq), end: () => store.end(execId) }),
    onError: (error) => logger.warn({ err: error }, 'exec output not streamed'),
  };
}

/**
 * Runs an exec; with `stream`, its output is appended to the caller's stream as it arrives and
 * the end entry is in before the result is returned.
 */
async function serveExec(local: SandboxProvider, { handle, args }: PayloadOf['exec'], signal: AbortSignal, outputs?: ExecOutputs) {
  const { stream, ...request } = args;
  if (!stream || !outputs) return local.exec(handle, { ...request, signal });
  const writer = execOutputWriter(outputs.sink(stream), { onError: outputs.onError });
  try {
    return await local.exec(handle, { ...request, signal, onStdout: (chunk) => writer.push('stdout', chunk), onStderr: (chunk) => writer.push('stderr', chunk) });
  } finally {
    await writer.finish();
  }
}

/** The handlers over this host's local provider (`hostId` is where `create` places the sandbox). */
export function hostOpHandlers(local: SandboxProvider, hostId: string, outputs?: ExecOutputs): HostOpHandlers {
  return {
    create: ({ args }, signal) => local.create({ ...args, hostId, signal }),
    get: ({ handle }, signal) => local.get(handle, signal),
    resume: ({ handle }, signal) => done(local.resume(handle, signal)),
    list: (_, signal) => local.list(signal),
    exec: (payload, signal) => serveExec(local, payload, signal, outputs),
    writeFiles: ({ handle, args }, signal) => {
      const files = args.files.map((f) => ({ path: f.path, content: Buffer.from(f.content, 'base64'), ...(f.mode === undefined ? {} : { mode: f.mode }) }));
      return done(local.writeFiles(handle, files, signal));
    },
    readFile: async ({ handle, args }, signal) => {
      const content = await local.readFile(handle, args.path, signal);
      return content === null ? null : content.toString('base64');
    },
    importTree: ({ handle, args }, signal) => done(local.importTree(handle, args.from, signal)),
    markReady: ({ handle, args }, signal) => done(local.markReady(handle, args.marker, signal)),
    readReady: ({ handle }, signal) => local.readReady(handle, signal),
    clearReady: ({ handle }, signal) => done(local.clearReady(handle, signal)),
    snapshot: ({ handle, args }, signal) => local.snapshot(handle, { expirationMs: args.expirationMs, signal }),
    snapshotStatus: ({ args }, signal) => local.snapshotStatus(args.snapshotId, signal),
    deleteSnapshot: ({ args }, signal) => done(local.deleteSnapshot(args.snapshotId, signal)),
    stop: ({ handle }, signal) => done(local.stop(handle, signal)),
    destroy: ({ handle }, signal) => done(local.destroy(handle, signal)),
  };
}

// The handler of `op` takes the payload of `op`: indexing both tables by one `O` keeps them paired.
function dispatch<O extends HostOp>(handlers: HostOpHandlers, op: O, payload: PayloadOf[O], signal: AbortSignal): Promise<HostOpReply<O>> {
  return handlers[op](payload, signal);
}

/** Runs one validated request. */
export function serveHostOp(handlers: HostOpHandlers, payload: HostOpPayload, signal: AbortSignal): Promise<HostOpReply<HostOp>> {
  return dispatch(handlers, payload.op, payload, signal);
}
