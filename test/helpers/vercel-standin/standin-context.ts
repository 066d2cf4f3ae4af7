// What every route handler of the stand-in receives.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StandinState } from './standin-state.js';

export interface StandinConfig {
  readonly token: string;
  readonly teamId: string;
  readonly projectId: string;
  /** Host directory holding sandboxes/ and snapshots/. */
  readonly dataDir: string;
  /** Default page size of list endpoints. */
  readonly pageSize: number;
}

export interface StandinHooks {
  /** Awaited before a snapshot copy completes (tests hold it to observe `snapshotting`). */
  snapshotGate(): Promise<void>;
  emit(event: string, detail: Record<string, unknown>): void;
}

export interface HandlerContext {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly url: URL;
  readonly params: Readonly<Record<string, string>>;
  readonly state: StandinState;
  readonly config: StandinConfig;
  readonly hooks: StandinHooks;
}

/** What session transitions need of a request's context (the stand-in itself can supply it). */
export type LifecycleContext = Pick<HandlerContext, 'state' | 'config' | 'hooks'>;

export type Handler = (ctx: HandlerContext) => Promise<void>;
