// Compile-only: @latch/core's dynamoStore in an app that has only @aws-sdk/client-dynamodb,
// type-checked with skipLibCheck: false, as ES modules (nodenext) and as CommonJS (node10).
const here = new URL('./', import.meta.url);

export const dynamoTypes = {
  name: 'dynamo-types',
  template: here,
  files: ['package.json', 'tsconfig.json', 'tsconfig.cjs.json'],
  sources: [[new URL('types.ts', here), 'src/types.ts']],
  tarballs: ['core'],
  compile: [
    {
      project: 'tsconfig.json',
      label: 'dynamo-types (nodenext, skipLibCheck: false, only @aws-sdk/client-dynamodb)',
    },
    {
      project: 'tsconfig.cjs.json',
      label: 'dynamo-types (node10, skipLibCheck: false, only @aws-sdk/client-dynamodb)',
    },
  ],
};
