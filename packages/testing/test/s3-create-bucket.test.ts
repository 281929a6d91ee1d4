import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  GetObjectCommand,
  HeadBucketCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type S3Server, startS3Server } from '../src/s3/server.js';
import { bodyText, expectS3Error, s3Client } from './s3-helpers.js';

// CreateBucket of a bucket you already own: S3 answers 200 in us-east-1 (legacy behaviour AWS
// documents) and 409 BucketAlreadyOwnedByYou in every other region. The server's region decides.
describe.each([
  { region: 'us-east-1', again: 200 },
  { region: 'eu-west-1', again: 409 },
])('CreateBucket of an owned bucket in $region', ({ region, again }) => {
  let server: S3Server;
  let s3: S3Client;
  beforeAll(async () => {
    server = await startS3Server({ bucket: 'kept', region });
    s3 = s3Client(server);
  });
  afterAll(async () => {
    s3.destroy();
    await server.stop();
  });

  it(`answers ${again} and leaves the bucket and its objects as they were`, async () => {
    await s3.send(new PutObjectCommand({ Bucket: 'kept', Key: 'k', Body: 'still here' }));
    const create = () => s3.send(new CreateBucketCommand({ Bucket: 'kept' }));
    if (again === 200) expect((await create()).$metadata.httpStatusCode).toBe(200);
    else await expectS3Error(create(), 'BucketAlreadyOwnedByYou', 409);
    expect(await bodyText((await s3.send(new GetObjectCommand({ Bucket: 'kept', Key: 'k' }))).Body)).toBe(
      'still here',
    );
  });

  it('creates a new bucket either way, once or twice as a setup script would', async () => {
    const config =
      region === 'us-east-1'
        ? undefined
        : { CreateBucketConfiguration: { LocationConstraint: region as BucketLocationConstraint } };
    await s3.send(new CreateBucketCommand({ Bucket: 'fresh', ...config }));
    expect((await s3.send(new HeadBucketCommand({ Bucket: 'fresh' }))).BucketRegion).toBe(region);
    const second = s3.send(new CreateBucketCommand({ Bucket: 'fresh', ...config }));
    if (again === 200) await second;
    else await expectS3Error(second, 'BucketAlreadyOwnedByYou', 409);
  });
});
