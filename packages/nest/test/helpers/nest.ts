import type { INestApplication, LoggerService, ModuleMetadata } from '@nestjs/common';
import { Test } from '@nestjs/testing';

/**
 * A real Nest application (Express platform) from module metadata, initialised: hooks ran,
 * crons started. Silent unless given a logger.
 */
export async function startApp(
  metadata: ModuleMetadata,
  logger: LoggerService | false = false,
): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule(metadata).compile();
  const app = moduleRef.createNestApplication({ logger });
  await app.init();
  return app;
}
