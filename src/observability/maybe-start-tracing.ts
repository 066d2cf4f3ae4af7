/**
 * Tracing for a long-lived process when `FLEET_OTEL_ENDPOINT` is set; the OpenTelemetry SDK is
 * loaded only then, so an untraced process neither loads nor pays for it.
 */
import type { Config } from '../config.js';
import type { Tracing } from './start-tracing.js';

export async function maybeStartTracing(config: Pick<Config, 'tracing'>): Promise<Tracing | null> {
  if (!config.tracing.endpoint) return null;
  const { startTracing } = await import('./start-tracing.js');
  return startTracing(config);
}
