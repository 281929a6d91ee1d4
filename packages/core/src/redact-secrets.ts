/**
 * Removes what looks like a credential from text that came from outside Latch (an SDK error's
 * message) before it goes into an error message or a log line: AWS access key ids, 40-character
 * secret keys and session tokens, and request signatures. Bucket and table names, endpoints and
 * lock keys are left as they are.
 */
export function redactSecrets(text: string): string {
  return (
    text
      // Access key ids: AKIA… (long-term), ASIA… (temporary), and the other IAM id prefixes.
      .replace(/\b(?:AKIA|ASIA|AIDA|AROA|AGPA|AIPA|ANPA|ANVA|APKA|ABIA|ACCA)[A-Z0-9]{12,}\b/g, '[redacted]')
      // Signatures and credential scopes of a signed request (headers or query strings).
      .replace(
        /\b(Signature|Credential|X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token)=[^\s,&"']+/gi,
        '$1=[redacted]',
      )
      // Long runs of key material: secret access keys (40 characters), session tokens, hex signatures.
      .replace(/[A-Za-z0-9/+=]{40,}/g, '[redacted]')
  );
}
