/** `provision` processor: see provision/provision-workspace.ts. */
import type { Config } from '../../config.js';
import { provisionWorkspace, type ProvisionDeps } from '../../provision/provision-workspace.js';
import type { ProvisionPayload, ProvisionResult } from '../../queues/provision.js';
import type { Processor } from '../../jobs/processor-context.js';

export interface ProvisionProcessorDeps extends ProvisionDeps {
  /** `provider` is the default of a payload that names none. */
  readonly config: Pick<Config, 'hostId' | 'deadlines' | 'baseOverlayMaxBytes' | 'provider'>;
}

export function provisionProcessor(deps: ProvisionProcessorDeps): Processor<ProvisionPayload, ProvisionResult> {
  return (payload, ctx) =>
    provisionWorkspace(deps, { workspaceId: payload.workspaceId, provider: payload.provider ?? deps.config.provider, lane: payload.lane }, ctx);
}
