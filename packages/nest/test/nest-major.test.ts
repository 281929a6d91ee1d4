import { Module } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { Test } from '@nestjs/testing';
import { describe, expect, test } from 'vitest';
import { LockExceptionFilter } from '../src/lock-exception.filter.js';

// Each vitest project (see vitest.config.ts) names the NestJS major it runs the suite against.
// These tests make sure that major is the one really loaded, by the tests and by the adapter's
// source, so that an alias that stops working cannot quietly run the whole suite against one
// major twice.

function projectMajor(projectName: string | undefined): number {
  const named = /^nest (\d+)$/.exec(projectName ?? '');
  if (!named) throw new Error(`run this suite through a "nest <major>" project, not ${projectName}`);
  return Number(named[1]);
}

async function majorOf(name: string): Promise<number> {
  const { default: manifest } = (await import(`@nestjs/${name}/package.json`)) as {
    default: { version: string };
  };
  return Number(manifest.version.split('.')[0]);
}

describe('the NestJS major under test', () => {
  test('is the one the project names, for each @nestjs package the tests import', async ({ task }) => {
    const expected = projectMajor(task.file.projectName);
    for (const name of ['common', 'core', 'platform-express']) {
      expect(await majorOf(name), `@nestjs/${name}`).toBe(expected);
    }
  });

  test("is the one @nestjs/testing and the adapter's source use", async () => {
    // @nestjs/testing finds HttpAdapterHost only if it runs on the same @nestjs/core as the tests.
    @Module({})
    class Empty {}
    const moduleRef = await Test.createTestingModule({ imports: [Empty] }).compile();
    const app = moduleRef.createNestApplication(new ExpressAdapter(), { logger: false });
    try {
      await app.init();
      expect(app.get(HttpAdapterHost).httpAdapter).toBeInstanceOf(ExpressAdapter);
    } finally {
      await app.close();
    }
    // The filter injects the HttpAdapterHost class the tests import.
    const injected = Reflect.getMetadata('self:paramtypes', LockExceptionFilter) as Array<{ param: unknown }>;
    expect(injected.map((p) => p.param)).toContain(HttpAdapterHost);
  });
});
