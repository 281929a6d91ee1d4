/**
 * Key order as S3 lists keys: by their UTF-8 bytes. It differs from JavaScript's string order
 * only for characters outside the Basic Multilingual Plane, which UTF-16 sorts before U+E000.
 */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}
