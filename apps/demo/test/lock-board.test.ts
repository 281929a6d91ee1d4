import { describe, expect, test } from 'vitest';
import { LockBoard } from '../src/launcher/lock-board.js';
import type { WireLockEvent } from '../src/shared/ipc-messages.js';

const event = (e: Partial<WireLockEvent> & Pick<WireLockEvent, 'type' | 'owner'>): WireLockEvent => ({
  key: 'invoice/A',
  at: 1_000,
  ...e,
});

describe('lock board', () => {
  test('follows holder, token, lease and waiters through the events', () => {
    const board = new LockBoard();
    board.apply(event({ type: 'acquired', owner: 'replica-1:pid1', fencingToken: 4, expiresAt: 5_000 }));
    board.apply(event({ type: 'waiting', owner: 'replica-2:pid2' }));
    board.apply(event({ type: 'waiting', owner: 'replica-2:pid2' }));
    board.apply(event({ type: 'renewed', owner: 'replica-1:pid1', fencingToken: 4, expiresAt: 6_000 }));
    expect(board.locks()).toEqual([
      expect.objectContaining({
        key: 'invoice/A',
        holder: 'replica-1',
        fencingToken: 4,
        expiresAt: 6_000,
        waiters: { 'replica-2': 2 },
        state: 'held',
      }),
    ]);

    board.apply(event({ type: 'released', owner: 'replica-1:pid1', fencingToken: 4 }));
    board.apply(event({ type: 'acquired', owner: 'replica-2:pid2', fencingToken: 5, expiresAt: 9_000 }));
    expect(board.locks()[0]).toMatchObject({
      holder: 'replica-2',
      fencingToken: 5,
      waiters: { 'replica-2': 1 },
    });

    board.apply(event({ type: 'contended', owner: 'replica-2:pid2', reason: 'timeout' }));
    expect(board.locks()[0]!.waiters).toEqual({});
  });

  test('a lock with a limit keeps every holder with its token, until it releases or its lease has ended', () => {
    const board = new LockBoard((key) => (key.startsWith('export/') ? 2 : 1));
    const key = 'export/customer-acme';
    board.apply(event({ key, type: 'acquired', owner: 'replica-1:pid1', fencingToken: 1, expiresAt: 5_000 }));
    board.apply(event({ key, type: 'acquired', owner: 'replica-2:pid2', fencingToken: 2, expiresAt: 5_000 }));
    board.apply(event({ key, type: 'waiting', owner: 'replica-3:pid3' }));
    expect(board.locks()[0]).toMatchObject({
      limit: 2,
      holders: [
        { replica: 'replica-1', fencingToken: 1, expiresAt: 5_000 },
        { replica: 'replica-2', fencingToken: 2, expiresAt: 5_000 },
      ],
      holder: 'replica-2',
      fencingToken: 2,
      waiters: { 'replica-3': 1 },
      state: 'held',
    });

    board.apply(event({ key, type: 'renewed', owner: 'replica-1:pid1', fencingToken: 1, expiresAt: 7_000 }));
    board.apply(event({ key, type: 'released', owner: 'replica-2:pid2', fencingToken: 2 }));
    board.apply(
      event({ key, type: 'acquired', owner: 'replica-3:pid3', fencingToken: 3, expiresAt: 8_000, at: 2_000 }),
    );
    expect(board.locks()[0]).toMatchObject({
      holders: [
        { replica: 'replica-1', fencingToken: 1, expiresAt: 7_000 },
        { replica: 'replica-3', fencingToken: 3, expiresAt: 8_000 },
      ],
      waiters: {},
    });

    // replica-1's lease ended before the next holder arrived: its place was free to take.
    board.apply(
      event({
        key,
        type: 'acquired',
        owner: 'replica-2:pid2',
        fencingToken: 4,
        expiresAt: 12_000,
        at: 7_500,
      }),
    );
    expect(board.locks()[0]!.holders.map((h) => h.fencingToken)).toEqual([3, 4]);

    // A limit that did not hold would show: the board lists every live holder it was told of.
    board.apply(
      event({
        key,
        type: 'acquired',
        owner: 'replica-1:pid1',
        fencingToken: 5,
        expiresAt: 13_000,
        at: 7_600,
      }),
    );
    expect(board.locks()[0]!.holders).toHaveLength(3);

    for (const [owner, fencingToken] of [
      ['replica-3:pid3', 3],
      ['replica-2:pid2', 4],
      ['replica-1:pid1', 5],
    ] as const) {
      board.apply(event({ key, type: 'released', owner, fencingToken }));
    }
    expect(board.locks()[0]).toMatchObject({
      holders: [],
      holder: null,
      fencingToken: 5,
      state: 'free',
    });
  });

  test('a late release of an older token does not free the new holder', () => {
    const board = new LockBoard();
    board.apply(event({ type: 'acquired', owner: 'replica-1:pid1', fencingToken: 1, expiresAt: 2_000 }));
    board.apply(event({ type: 'acquired', owner: 'replica-2:pid2', fencingToken: 2, expiresAt: 9_000 }));
    board.apply(event({ type: 'released', owner: 'replica-1:pid1', fencingToken: 1 }));
    expect(board.locks()[0]).toMatchObject({ holder: 'replica-2', fencingToken: 2, state: 'held' });
  });

  test('timeline keeps acquired / released / waiting / contended / lost, not renewals', () => {
    const board = new LockBoard();
    board.apply(event({ type: 'acquired', owner: 'replica-1:pid1', fencingToken: 1, expiresAt: 2_000 }));
    board.apply(event({ type: 'renewed', owner: 'replica-1:pid1', fencingToken: 1, expiresAt: 3_000 }));
    board.apply(event({ type: 'lost', owner: 'replica-1:pid1', fencingToken: 1, error: 'paused' }));
    board.apply(event({ type: 'contended', owner: 'replica-3:pid3', reason: 'busy', key: 'customer/acme' }));
    expect(board.recent().map((e) => [e.replica, e.type])).toEqual([
      ['replica-1', 'acquired'],
      ['replica-1', 'lost'],
      ['replica-3', 'contended'],
    ]);
    expect(board.locks().find((l) => l.key === 'invoice/A')).toMatchObject({ holder: null, state: 'lost' });
    expect(board.contendedCount('customer/')).toBe(1);
  });

  test('a dead replica waits for nothing any more; what it held stays until its lease ends', () => {
    const board = new LockBoard();
    board.apply(event({ type: 'acquired', owner: 'replica-1:pid1', fencingToken: 1, expiresAt: 2_000 }));
    board.apply(event({ type: 'waiting', owner: 'replica-2:pid2' }));
    board.forgetWaiters('replica-2');
    board.forgetWaiters('replica-1');
    expect(board.locks()[0]).toMatchObject({ holder: 'replica-1', expiresAt: 2_000, waiters: {} });
  });
});
