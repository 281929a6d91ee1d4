import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  ConditionalCheckFailedException,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLockTable, type DynamoDBLocal, startDynamoDBLocal } from '../src/dynamodb-local.js';
import { distDir, ensureBuilt, packageDir } from './support/ensure-built.js';
import { childrenMatching, isAlive, refusesConnections } from './support/processes.js';
import { runNode } from './support/run-node.js';
import { listeningAddresses, nonLoopbackIPv4, tryConnect } from './support/sockets.js';

const INSTALL_LINE = 'npm install --save-dev amplify-dynamodb-simulator';
/** The DynamoDB Local folder inside this workspace's amplify-dynamodb-simulator. */
const realJarDir = join(
  dirname(createRequire(import.meta.url).resolve('amplify-dynamodb-simulator/package.json')),
  'emulator',
);

/** A stand-in "java" that behaves badly, to exercise the error paths without starting a JVM. */
function fakeJava(script: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'latch-fake-java-')), 'java');
  writeFileSync(path, `#!/bin/sh\n${script}\n`);
  chmodSync(path, 0o755);
  return path;
}

/** A stand-in "java" that only records that it ran, and its arguments and folder, then fails. */
function recordingJava(): { path: string; ran: () => boolean; args: () => string[]; cwd: () => string } {
  const path = fakeJava(
    'dir="$(dirname "$0")"\npwd > "$dir/cwd"\nprintf \'%s\\n\' "$@" > "$dir/args"\nexit 7',
  );
  const file = (name: string) => join(dirname(path), name);
  return {
    path,
    ran: () => existsSync(file('args')),
    args: () => readFileSync(file('args'), 'utf8').trimEnd().split('\n'),
    cwd: () => readFileSync(file('cwd'), 'utf8').trim(),
  };
}

/** A folder laid out like DynamoDB Local's, with the given files (empty) and folders. */
function fakeJarDir(files: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'latch-fake-ddb-'));
  for (const file of files) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    if (file.endsWith('/')) mkdirSync(join(dir, file), { recursive: true });
    else writeFileSync(join(dir, file), '');
  }
  return dir;
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

  it("listens on 127.0.0.1 only: no socket on another address, refused on the machine's other addresses", async () => {
    const addresses = listeningAddresses(ddb.port);
    expect(addresses.length).toBeGreaterThan(0);
    // Java listens through an IPv6 socket; bound to IPv4 loopback it shows as ::ffff:127.0.0.1.
    for (const address of addresses) expect(['127.0.0.1', '::ffff:127.0.0.1']).toContain(address);
    for (const host of nonLoopbackIPv4()) expect(await tryConnect(host, ddb.port)).toBe('ECONNREFUSED');
  });

  it('createLockTable creates an ACTIVE on-demand table with a string key, and is idempotent', async () => {
    await createLockTable(client, { table: 'locks' });
    await createLockTable(client, { table: 'locks' });
    const { Table } = await client.send(new DescribeTableCommand({ TableName: 'locks' }));
    expect(Table?.TableStatus).toBe('ACTIVE');
    expect(Table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(Table?.KeySchema).toEqual([{ AttributeName: 'pk', KeyType: 'HASH' }]);
    expect(Table?.AttributeDefinitions).toEqual([{ AttributeName: 'pk', AttributeType: 'S' }]);
  });

  it('createLockTable takes custom partition and sort key names', async () => {
    await createLockTable(client, { table: 'locks-sorted', partitionKey: 'id', sortKey: 'part' });
    const { Table } = await client.send(new DescribeTableCommand({ TableName: 'locks-sorted' }));
    expect(Table?.KeySchema).toEqual([
      { AttributeName: 'id', KeyType: 'HASH' },
      { AttributeName: 'part', KeyType: 'RANGE' },
    ]);
  });

  it('createLockTable still takes the name as its own argument (deprecated), options after it', async () => {
    await createLockTable(client, 'locks-old-shape', { partitionKey: 'id' });
    const { Table } = await client.send(new DescribeTableCommand({ TableName: 'locks-old-shape' }));
    expect(Table?.KeySchema).toEqual([{ AttributeName: 'id', KeyType: 'HASH' }]);
  });

  it('createLockTable refuses options without a table name, before any request', async () => {
    const send = () => Promise.reject(new Error('no request expected'));
    await expect(createLockTable({ send } as never, {} as never)).rejects.toThrow(
      /createLockTable needs a table name: createLockTable\(client, \{ table: 'locks' \}\)/,
    );
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

describe('startDynamoDBLocal port in use', () => {
  let blocker: Server | undefined;
  afterAll(() => blocker?.close());

  it('gives up at once when the JVM reports the port taken but keeps running, and stops it', async () => {
    blocker = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => blocker!.once('listening', resolve));
    const port = (blocker.address() as { port: number }).port;
    const error = await startDynamoDBLocal({ port, startupTimeoutMs: 50_000 }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/DynamoDB Local could not listen on port \d+: it is in use/);
    expect((error as Error).message).toMatch(/BindException: Address already in use/);
    expect(childrenMatching(process.pid, /DynamoDBLocal\.jar/)).toEqual([]);
  }, 60_000);
});

describe('locating DynamoDB Local', () => {
  it('in an install without amplify-dynamodb-simulator, says so with the install line before running java; jarDir still works', async () => {
    await ensureBuilt();
    // The built package alone, in a folder with no node_modules above it: an S3-only install.
    const project = mkdtempSync(join(tmpdir(), 'latch-s3-only-'));
    const installed = join(project, 'node_modules', '@latch', 'testing');
    cpSync(distDir, join(installed, 'dist'), { recursive: true });
    cpSync(join(packageDir, 'package.json'), join(installed, 'package.json'));
    const missing = recordingJava();
    const withJarDir = recordingJava();
    const script = `
      const { startDynamoDBLocal } = await import(${JSON.stringify(pathToFileURL(join(installed, 'dist', 'index.js')).href)});
      const report = (e) => console.log(JSON.stringify(e.message));
      await startDynamoDBLocal({ javaPath: ${JSON.stringify(missing.path)} }).catch(report);
      await startDynamoDBLocal({ javaPath: ${JSON.stringify(withJarDir.path)}, jarDir: ${JSON.stringify(realJarDir)} }).catch(report);`;
    // pnpm's vitest launcher sets NODE_PATH to the workspace's packages, which would find it anyway.
    const { NODE_PATH: _, ...env } = process.env;
    const result = await runNode(['--input-type=module', '-e', script], env).finished;
    rmSync(project, { recursive: true, force: true });
    expect(result.stderr).toBe('');
    const [notFound, ranJar] = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as string);
    expect(notFound).toMatch(
      /needs DynamoDB Local, which comes in the npm package "amplify-dynamodb-simulator"/,
    );
    expect(notFound).toContain(`\n  ${INSTALL_LINE}\n`);
    expect(notFound).toContain('jarDir');
    expect(missing.ran()).toBe(false);
    expect(ranJar).toMatch(/DynamoDB Local exited with code 7/);
    expect(withJarDir.args()).toContain(join(realJarDir, 'DynamoDBLocal.jar'));
  }, 120_000);

  it('rejects a jarDir that does not exist, or lacks the jar or its lib folder, before running java', async () => {
    const java = recordingJava();
    const start = (jarDir: string) =>
      startDynamoDBLocal({ jarDir, javaPath: java.path }).then(
        () => 'started',
        (e: Error) => e.message,
      );
    expect(await start('/nonexistent/ddb')).toMatch(/jarDir \/nonexistent\/ddb is not a folder/);
    const noJar = fakeJarDir(['DynamoDBLocal_lib/jetty-xml-9.4.53.jar']);
    expect(await start(noJar)).toMatch(
      /no DynamoDBLocal\.jar in jarDir .*latch-fake-ddb-.*DynamoDBLocal_lib/,
    );
    const noLib = fakeJarDir(['DynamoDBLocal.jar']);
    expect(await start(noLib)).toMatch(/no DynamoDBLocal_lib folder in jarDir/);
    expect(java.ran()).toBe(false);
  });

  it('runs the jar in jarDir through Jetty XmlConfiguration with the port, from that folder', async () => {
    const jarDir = realJarDir;
    const java = recordingJava();
    const error = await startDynamoDBLocal({ jarDir, javaPath: java.path }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/exited with code 7/);
    const args = java.args();
    const cp = args.indexOf('-cp');
    expect(args.slice(cp, cp + 3)).toEqual([
      '-cp',
      join(jarDir, 'DynamoDBLocal.jar'),
      'org.eclipse.jetty.xml.XmlConfiguration',
    ]);
    expect(args.at(-1)).toMatch(/^port=\d+$/);
    expect(args).toContain(`-Djava.library.path=${join(jarDir, 'DynamoDBLocal_lib')}`);
    expect(args).not.toContain('-jar');
    expect(java.cwd()).toBe(jarDir);
  });

  it('with allInterfaces runs the jar as it is (-jar ... -port N), without the 127.0.0.1 setup', async () => {
    const jarDir = fakeJarDir(['DynamoDBLocal.jar', 'DynamoDBLocal_lib/']);
    const java = recordingJava();
    await startDynamoDBLocal({ jarDir, javaPath: java.path, allInterfaces: true }).catch(() => undefined);
    const args = java.args();
    expect(args.slice(args.indexOf('-jar'))).toEqual([
      '-jar',
      join(jarDir, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      expect.stringMatching(/^\d+$/),
    ]);
  });

  it('refuses a DynamoDB Local without jetty-xml unless allInterfaces, saying why', async () => {
    const jarDir = fakeJarDir(['DynamoDBLocal.jar', 'DynamoDBLocal_lib/jetty-server-11.0.0.jar']);
    const java = recordingJava();
    const error = await startDynamoDBLocal({ jarDir, javaPath: java.path }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(
      /cannot be limited to 127\.0\.0\.1: its DynamoDBLocal_lib has no jetty-xml jar/,
    );
    expect((error as Error).message).toContain('allInterfaces: true');
    expect(java.ran()).toBe(false);
  });

  it('explains a DynamoDB Local whose classes do not fit the 127.0.0.1 setup', async () => {
    const jarDir = fakeJarDir(['DynamoDBLocal.jar', 'DynamoDBLocal_lib/jetty-xml-11.0.0.jar']);
    const java = fakeJava('echo "java.lang.NoSuchFieldException: server" >&2\nexit 1');
    const error = await startDynamoDBLocal({ jarDir, javaPath: java }).catch((e: unknown) => e);
    expect((error as Error).message).toContain('NoSuchFieldException: server');
    expect((error as Error).message).toMatch(/does not have the classes used to limit it to 127\.0\.0\.1/);
    expect((error as Error).message).toContain('allInterfaces: true');
  });
});
