/**
 * `hostops@{host}` processor: runs one provider operation on this host's local provider for a
 * caller on another host (see queues/hostops.ts and providers/remote-local-provider.ts).
 * The payload is parsed again here with this host's rules (handle of this host, importTree
 * source under this host's archive), so a bad one fails as a permanent `PayloadInvalid` before
 * the provider is called. Provider errors keep their class (busy/gone/permanent) through the
 * failure code.
 */
import { hostOpPayloadFor, type HostOpScope } from '../../queues/hostops.js';
import { parsePayload } from '../../queues/payload.js';
import type { SandboxProvider } from '../../providers/sandbox-provider.js';
import type { Processor } from '../../jobs/processor-context.js';

export interface HostOpsDeps extends HostOpScope {
  /** This host's local provider. */
  readonly local: SandboxProvider;
}

export function hostOpsProcessor({ local, hostId, archiveRoot }: HostOpsDeps): Processor<unknown, unknown> {
  const schema = hostOpPayloadFor({ hostId, archiveRoot });
  return async (data, ctx) => {
    const payload = parsePayload('hostops payload', schema, data);
    const signal = ctx.signal;
    switch (payload.op) {
      case 'create':
        return local.create({ ...payload.args, hostId, signal });
      case 'get':
        return local.get(payload.handle, signal);
      case 'resume':
        return local.resume(payload.handle, signal);
      case 'exec':
        return local.exec(payload.handle, { ...payload.args, signal });
      case 'writeFiles': {
        const files = payload.args.files.map((f) => ({ path: f.path, content: Buffer.from(f.content, 'base64'), ...(f.mode === undefined ? {} : { mode: f.mode }) }));
        return local.writeFiles(payload.handle, files, signal);
      }
      case 'readFile': {
        const content = await local.readFile(payload.handle, payload.args.path, signal);
        return content === null ? null : content.toString('base64');
      }
      case 'importTree':
        return local.importTree(payload.handle, payload.args.from, signal);
      case 'markReady':
        return local.markReady(payload.handle, payload.args.marker, signal);
      case 'readReady':
        return local.readReady(payload.handle, signal);
      case 'clearReady':
        return local.clearReady(payload.handle, signal);
      case 'snapshot':
        return local.snapshot(payload.handle, { expirationMs: payload.args.expirationMs, signal });
      case 'deleteSnapshot':
        return local.deleteSnapshot(payload.args.snapshotId, signal);
      case 'stop':
        return local.stop(payload.handle, signal);
      case 'destroy':
        return local.destroy(payload.handle, signal);
    }
  };
}
