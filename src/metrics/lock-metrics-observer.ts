/** Adapts `SingleFlight`'s `LockObserver` callbacks to a `MetricsRecorder` (fire and forget). */
import type { LockObserver } from '../locks/single-flight.js';
import type { MetricsRecorder } from './metrics-recorder.js';

export function lockMetricsObserver(metrics: MetricsRecorder): LockObserver {
  return {
    acquired: (resource, waitedMs) => void metrics.lockAcquired(resource, waitedMs),
    contended: (resource) => void metrics.lockContended(resource),
    failed: (resource, reason) => void metrics.lockFailed(resource, reason),
  };
}
