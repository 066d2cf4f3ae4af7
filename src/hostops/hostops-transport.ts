/**
 * How a host-op request reaches the host serving it (the BullMQ one: bullmq-hostops-transport.ts).
 * The caller (remote-local-provider.ts) validates the request before the call and the reply
 * after it, so a transport only carries them.
 */
import type { HostOpPayload } from './host-op-payload.js';

export interface HostOpsTransport {
  /**
   * Runs `request` on host `hostId` and resolves with its raw reply (not yet validated).
   * Rejects with the signal's reason once it aborts, with a `ProviderBusyError` when the host
   * does not answer in time (a slow host is never a gone one), and with the serving host's
   * failure as the failure codec decodes it (a `FleetError` with its code and `remoteJob` set)
   * when the operation failed there.
   */
  call(hostId: string, request: HostOpPayload, signal: AbortSignal): Promise<unknown>;
}
