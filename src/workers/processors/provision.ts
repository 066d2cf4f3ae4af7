/** `provision` processor: see provision/provision-workspace.ts. */
import { provisionWorkspace } from '../../provision/provision-workspace.js';
import type { ProvisionPayload, ProvisionResult } from '../../queues/provision.js';
import type { FleetServices } from '../../app/services.js';
import type { Processor } from '../../jobs/processor-context.js';

export function provisionProcessor(services: FleetServices): Processor<ProvisionPayload, ProvisionResult> {
  return (payload, ctx) =>
    provisionWorkspace(services, { workspaceId: payload.workspaceId, provider: payload.provider ?? services.config.provider, lane: payload.lane }, ctx);
}
