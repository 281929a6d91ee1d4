import { request } from 'node:http';

export interface DynamoDBHttpResponse {
  status: number;
  body: Record<string, unknown>;
}

/**
 * Calls one DynamoDB JSON-protocol operation over plain HTTP, without the AWS SDK. DynamoDB Local
 * does not verify signatures but rejects requests without a SigV4-shaped Authorization header,
 * so a well-formed fake one is sent.
 */
export function callDynamoDB(
  endpoint: string,
  operation: string,
  input: object,
  timeoutMs = 5_000,
): Promise<DynamoDBHttpResponse> {
  const payload = JSON.stringify(input);
  const date = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
  return new Promise((resolve, reject) => {
    const req = request(
      endpoint,
      {
        method: 'POST',
        agent: false,
        timeout: timeoutMs,
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'content-length': Buffer.byteLength(payload),
          'x-amz-target': `DynamoDB_20120810.${operation}`,
          'x-amz-date': date,
          authorization:
            `AWS4-HMAC-SHA256 Credential=latch/${date.slice(0, 8)}/us-east-1/dynamodb/aws4_request, ` +
            `SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=${'0'.repeat(64)}`,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : {} });
          } catch {
            reject(
              new Error(`DynamoDB ${operation}: HTTP ${res.statusCode}, not JSON: ${text.slice(0, 200)}`),
            );
          }
        });
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`DynamoDB ${operation}: no answer within ${timeoutMs} ms`)),
    );
    req.on('error', reject);
    req.end(payload);
  });
}
