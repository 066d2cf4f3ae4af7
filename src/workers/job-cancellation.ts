/**
 * The running jobs of one Worker that can be cancelled (lock lost, shutdown), by job id.
 *
 * BullMQ creates an AbortController for every job whose processor takes a third parameter; the
 * fleet needs its own anyway (the deadline aborts it), so the processor takes two and this
 * registry is the only cancellation path: one controller per job, not two.
 */
export class JobCancellation {
  private readonly running = new Map<string, (reason: unknown) => void>();

  /** Registers a running job's cancel function; returns its deregistration. */
  track(jobId: string, cancel: (reason: unknown) => void): () => void {
    this.running.set(jobId, cancel);
    return () => {
      if (this.running.get(jobId) === cancel) this.running.delete(jobId);
    };
  }

  /** Cancels one running job; false when it is not running here. */
  cancel(jobId: string, reason: unknown): boolean {
    const cancel = this.running.get(jobId);
    cancel?.(reason);
    return cancel !== undefined;
  }

  /** Cancels every running job, each with the reason `reasonFor(jobId)` gives. */
  cancelAllWith(reasonFor: (jobId: string) => unknown): void {
    for (const [jobId, cancel] of [...this.running]) cancel(reasonFor(jobId));
  }

  get size(): number {
    return this.running.size;
  }
}
