import type { StoreUnderContract } from './store-shapes.js';

/** A store to prove, with what the contract needs to know about it. */
export interface StoreUnderTest {
  store: StoreUnderContract;
  /** Called after the last case: close clients, stop servers. */
  cleanup?(): Promise<void>;
  /** Stores `rawText` under `key` as the backend would hold a record, bypassing the codec; the corrupted-record case fails without it. */
  tamper?(key: string, rawText: string): Promise<void>;
  /** The longest key checkKey accepts (and the backend stores), and what the limit counts; the key-length case fails without it. */
  maxKey?: { length: number; unit: 'utf8-bytes' | 'utf16-units' };
  /** True when failed conditions report the stored record (`current`) without another read. */
  conflictsReturnCurrent?: boolean;
}
