export {
  type CreateLockTableOptions,
  createLockTable,
  type DynamoDBLocal,
  type DynamoDBLocalOptions,
  startDynamoDBLocal,
} from './dynamodb-local.js';
export {
  type FaultProxy,
  type FaultProxyHits,
  type FaultProxyOptions,
  type FaultProxyStats,
  faultProxy,
} from './fault-proxy.js';
export { type RedisServer, type RedisServerOptions, startRedis } from './redis.js';
export {
  type ApplyLateOptions,
  type ConditionHandling,
  S3_PERSONALITIES,
  type S3AccessKeyVerdict,
  type S3ClientSettings,
  type S3FaultHandle,
  type S3FaultKind,
  type S3FaultMatcher,
  S3Faults,
  type S3Operation,
  type S3Personality,
  type S3PersonalityName,
  type S3RequestLogEntry,
  type S3Server,
  type S3ServerOptions,
  startS3Server,
} from './s3/server.js';
