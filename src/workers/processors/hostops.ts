/**
 * `hostops@{host}` processor: runs one provider operation on this host's local provider for a
 * caller on another host (see queues/hostops.ts and providers/remote-local-provider.ts).
 * Provider errors keep their class (busy/gone/permanent) through the failure code.
 */
import type { HostOpPayload } from '../../queues/hostops.js';
import type { FleetServices } from '../../runtime/services.js';
import type { Processor } from '../processor-context.js';
import { ProviderPermanentError } from '../../providers/provider-errors.js';

export function hostOpsProcessor(services: FleetServices): Processor<HostOpPayload, unknown> {
  const local = services.providers.get('local');
  return async ({ op, handle, args }, ctx) => {
    const signal = ctx.signal;
    const need = () => {
      if (!handle) throw new ProviderPermanentError('local', op, 'host operation without a handle');
      return handle;
    };
    switch (op) {
      case 'create': {
        const request = args as { workspaceId: string; generation: number; source: { type: 'empty' } | { type: 'base-snapshot' | 'workspace-snapshot'; snapshotId: string }; env?: Record<string, string> };
        return local.create({ ...request, hostId: services.config.hostId, signal });
      }
      case 'get':
        return local.get(need(), signal);
      case 'resume':
        return local.resume(need(), signal);
      case 'exec': {
        const request = args as { cmd: string[]; cwd?: string; env?: Record<string, string>; timeoutMs: number };
        return local.exec(need(), { ...request, signal });
      }
      case 'writeFiles': {
        const files = (args.files as { path: string; content: string; mode?: number }[]).map((f) => ({ path: f.path, content: Buffer.from(f.content, 'base64'), ...(f.mode === undefined ? {} : { mode: f.mode }) }));
        return local.writeFiles(need(), files, signal);
      }
      case 'readFile': {
        const content = await local.readFile(need(), String(args.path), signal);
        return content === null ? null : content.toString('base64');
      }
      case 'importTree':
        return local.importTree(need(), String(args.from), signal);
      case 'markReady':
        return local.markReady(need(), args.marker as { generation: number; source: string; readyAt: number }, signal);
      case 'readReady':
        return local.readReady(need(), signal);
      case 'clearReady':
        return local.clearReady(need(), signal);
      case 'snapshot':
        return local.snapshot(need(), { expirationMs: Number(args.expirationMs ?? 0), signal });
      case 'deleteSnapshot':
        return local.deleteSnapshot(String(args.snapshotId), signal);
      case 'stop':
        return local.stop(need(), signal);
      case 'destroy':
        return local.destroy(need(), signal);
    }
  };
}
