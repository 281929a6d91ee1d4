import { PassThrough } from 'node:stream';
import { expect, test } from 'vitest';
import { confirm } from '../src/confirm.js';

/** The question as asked, and the answer typed into an input stream (the terminal is tested in the scenarios). */
async function answer(typed: string | null): Promise<{ freed: boolean; asked: string[] }> {
  const stream = new PassThrough();
  const asked: string[] = [];
  const pending = confirm('Free "deploy/production" held by a (token 7)?', {
    stream,
    isTerminal: true,
    ask: (question) => asked.push(question),
  });
  if (typed === null) stream.end();
  else stream.write(typed);
  return { freed: await pending, asked };
}

test.each(['y\n', 'Y\n', 'yes\n', ' YES \n', 'y\r\n'])('%j frees', async (typed) => {
  expect(await answer(typed)).toEqual({
    freed: true,
    asked: ['Free "deploy/production" held by a (token 7)? [y/N] '],
  });
});

test.each(['\n', 'n\n', 'no\n', 'yy\n', 'sure\n', 'y es\n'])('%j does not', async (typed) => {
  expect((await answer(typed)).freed).toBe(false);
});

test('the end of the input without an answer is a no', async () => {
  expect((await answer(null)).freed).toBe(false);
});
