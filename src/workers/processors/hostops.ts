/**
 * `hostops@{host}` processor: runs one provider operation on this host's local provider for a
 * caller on another host (see src/hostops/). The payload is parsed again here with this host's
 * rules (handle of this host, importTree source under this host's archive), so a bad one fails
 * as a permanent `PayloadInvalid` before the provider is called. Provider errors keep their
 * class (busy/gone/permanent) through the failure code.
 */
import { hostOpPayloadFor, type HostOpScope } from '../../hostops/host-op-rules.js';
import { hostOpHandlers, serveHostOp, type ExecOutputs } from '../../hostops/serve-host-op.js';
import { parsePayload } from '../../queues/payload.js';
import type { SandboxProvider } from '../../providers/sandbox-provider.js';
import type { Processor } from '../../jobs/processor-context.js';

export interface HostOpsDeps extends HostOpScope {
  /** This host's local provider. */
  readonly local: SandboxProvider;
  /** Where streamed exec output goes (the caller's stream in Redis). */
  readonly execOutputs?: ExecOutputs;
}

export function hostOpsProcessor({ local, hostId, archiveRoot, execOutputs }: HostOpsDeps): Processor<unknown, unknown> {
  const schema = hostOpPayloadFor({ hostId, archiveRoot });
  const handlers = hostOpHandlers(local, hostId, execOutputs);
  return async (data, ctx) => serveHostOp(handlers, parsePayload('hostops payload', schema, data), ctx.signal);
}
