import type { VersionedRecord } from '../../contract/lock-record.js';
import type { ClaimResult, Contender, EngineEnvironment, LeaseState } from '../lease-engine.js';

/**
 * What a list-strategy lease and its keeper need of their engine (`ListLeaseEngine` implements
 * it): an interface of its own, so that the engine, which makes leases, and the leases, which
 * call it, do not import each other.
 */
export interface ListLeaseOps {
  readonly clock: EngineEnvironment['clock'];
  readonly retry: EngineEnvironment['retry'];
  holds(lease: LeaseState, current: VersionedRecord | null): boolean;
  read(key: string, signal?: AbortSignal): Promise<VersionedRecord | null>;
  claim(key: string, contender: Contender, signal?: AbortSignal): Promise<ClaimResult>;
  renew(lease: LeaseState, leaseMs: number, data?: { value: unknown }, signal?: AbortSignal): Promise<void>;
  release(lease: LeaseState, data?: { value: unknown }, signal?: AbortSignal): Promise<void>;
  leaseEnded(lease: LeaseState): void;
  settleAbandoned(key: string, contender: Contender, signal?: AbortSignal): Promise<boolean>;
}
