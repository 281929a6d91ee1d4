import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  ConditionalCheckFailedException,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLockTable, type DynamoDBLocal, startDynamoDBLocal } from '../src/dynamodb-local.js';
import { isAlive, refusesConnections } from './support/processes.js';

/** A stand-in "java" that behaves badly, to exercise the error paths without starting a JVM. */
function fakeJava(script: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'latch-fake-java-')), 'java');
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
  return path;
}

describe('startDynamoDBLocal', () => {
  let ddb: DynamoDBLocal;
  let client: DynamoDBClient;

  beforeAll(async () => {
    ddb = await startDynamoDBLocal();
    client = new DynamoDBClient({
      endpoint: ddb.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'x', secretAccessKey: 'y' },
    });
  });

  afterAll(async () => {
    client?.destroy();
    await ddb?.stop();
  });

  it('serves on a loopback endpoint from a running JVM', () => {
    expect(ddb.endpoint).toBe(`http://127.0.0.1:${ddb.port}`);
    expect(isAlive(ddb.pid)).toBe(true);
  });

  it('createLockTable creates an ACTIVE on-demand table with a string key, and is idempotent', async () => {
    await createLockTable(client, 'locks');
    await createLockTable(client, 'locks');
    const { Table } = await client.send(new DescribeTableCommand({ TableName: 'locks' }));
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(Table?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    expect(Table?.AttributeDefinitions).toEqual([{ AttributeName: 'pk', AttributeType: 'S' }]);
  });

  it('createLockTable takes custom partition and sort key names', async () => {
    await createLockTable(client, 'locks-sorted', { partitionKey: 'id', sortKey: 'part' });
    const { Table } = await client.send(new DescribeTableCommand({ TableName: 'locks-sorted' }));
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'id', KeyType: 'HASH' },
      { AttributeName: 'part', KeyType: 'RANGE' },
    ]);
  });

  it('enforces conditional writes and returns the old item on a failed condition', async () => {
    const put = (owner: string) =>
      client.send(
        new PutItemCommand({
          TableName: 'locks',
          Item: { pk: { S: 'lock#1' }, owner: { S: owner } },
          ConditionExpression: 'attribute_not_exists(pk)',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
    await put('alice');
    const error = await put('bob').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConditionalCheckFailedException);
    expect((error as ConditionalCheckFailedException).Item).toEqual({
      pk: { S: 'lock#1' },
      owner: { S: 'alice' },
    });
    const { Item } = await client.send(
      new GetItemCommand({ TableName: 'locks', Key: { pk: { S: 'lock#1' } } }),
    );
    expect(Item?.owner).toEqual({ S: 'alice' });
  });

  // Runs last in this block: it stops the shared instance.
  it('stop() ends the JVM and the endpoint refuses connections; stop() twice is fine', async () => {
    await ddb.stop();
    await ddb.stop();
    expect(isAlive(ddb.pid)).toBe(false);
    expect(await refusesConnections(ddb.port)).toBe(true);
  });
});

describe('startDynamoDBLocal errors', () => {
  it('says Java is missing, and how to install it, when javaPath does not exist', async () => {
    const error = await startDynamoDBLocal({ javaPath: '/nonexistent/bin/java' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toMatch(/cannot run "\/nonexistent\/bin\/java" \(not found\)/);
    expect((error as Error).message).toMatch(/Java runtime/);
    expect((error as Error).message).toContain('apt-get install -y default-jre-headless');
  });

  it('reports an early exit with its exit code and the output tail', async () => {
    const java = fakeJava('echo "Error: could not create the Java Virtual Machine" >&2\nexit 3');
    const error = await startDynamoDBLocal({ javaPath: java }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/DynamoDB Local exited with code 3 before answering/);
    expect((error as Error).message).toContain('could not create the Java Virtual Machine');
  });

  it('times out with the output tail when the process never answers, and kills it', async () => {
    const java = fakeJava('echo "still warming up" >&2\necho $$ > "$(dirname "$0")/pid"\nexec sleep 60');
    const error = await startDynamoDBLocal({ javaPath: java, startupTimeoutMs: 500 }).catch(
      (e: unknown) => e,
    );
    expect((error as Error).message).toMatch(/did not answer on port \d+ within 500 ms/);
    expect((error as Error).message).toContain('still warming up');
    const pid = Number(readFileSync(join(dirname(java), 'pid'), 'utf8'));
    expect(pid).toBeGreaterThan(0);
    expect(isAlive(pid)).toBe(false);
  });
});
