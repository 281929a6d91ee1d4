import { Global, Module } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { LockExceptionFilter } from './lock-exception.filter.js';
import { LockExplorer } from './lock-explorer.js';
import { LockRegistry } from './lock-registry.js';

/**
 * What one application needs once, however many clients it registers: the registry of
 * clients, the explorer that checks `@Locked()` methods at bootstrap, and the HTTP filter.
 * Every `LockModule.forRoot()` imports it; Nest creates it once per application.
 */
@Global()
@Module({
  imports: [DiscoveryModule],
  providers: [LockRegistry, LockExplorer, { provide: APP_FILTER, useClass: LockExceptionFilter }],
  exports: [LockRegistry],
})
export class LockCoreModule {}
