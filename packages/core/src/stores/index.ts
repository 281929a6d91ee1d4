export { type DynamoStoreOptions, dynamoStore } from './dynamo-store.js';
export { type EnsureLockTableOptions, ensureLockTable } from './ensure-lock-table.js';
export { type S3ListStoreOptions, s3ListStore } from './s3-list-store.js';
export { type S3StoreOptions, s3Store } from './s3-store.js';
