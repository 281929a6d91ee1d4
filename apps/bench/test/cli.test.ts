import { describe, expect, test } from 'vitest';
import { parseCliOptions } from '../src/cli-options.js';

describe('command line', () => {
  test('reads the options', () => {
    expect(
      parseCliOptions([
        '--quick',
        '--scenarios',
        'handoff,renewal',
        '--subjects',
        'latch-s3,redlock',
        '--latency',
        'aws',
        '--latency-seed',
        '9',
        '--out',
        'x',
      ]),
    ).toEqual({
      quick: true,
      help: false,
      scenarios: ['handoff', 'renewal'],
      subjects: ['latch-s3', 'redlock'],
      latency: 'aws',
      latencySeed: 9,
      out: 'x',
    });
    expect(parseCliOptions([])).toEqual({ quick: false, help: false });
  });

  test('says what was wrong and what is accepted', () => {
    expect(() => parseCliOptions(['--fast'])).toThrow('Unknown option "--fast".');
    expect(() => parseCliOptions(['--scenarios', 'handof'])).toThrow(
      '--scenarios: unknown "handof"; choose from uncontended, handoff, many-keys, renewal, semaphore, cpu.',
    );
    expect(() => parseCliOptions(['--subjects', 'etcd'])).toThrow(
      /--subjects: unknown "etcd"; choose from latch-memory, /,
    );
    expect(() => parseCliOptions(['--out'])).toThrow('--out needs a value.');
    expect(() => parseCliOptions(['--latency', 'lan'])).toThrow(
      '--latency: unknown "lan"; choose one of raw, aws.',
    );
    expect(() => parseCliOptions(['--latency-seed', '1.5'])).toThrow(
      '--latency-seed needs an integer, got "1.5".',
    );
  });
});
