/**
 * Removes what looks like a credential from text that came from outside Latch (an SDK error's
 * message) before it goes into an error message or a log line: AWS access key ids, 40-character
 * secret keys and session tokens, request signatures, and user:password in URLs. Bucket and
 * table names and endpoints are left as they are.
 */
export function redactSecrets(text: string): string {
  // Long runs of key material: secret access keys (40 characters), session tokens, hex
  // signatures. Only in outside text: Latch's own messages quote lock keys, which may be long.
  return redactCredentials(text).replace(/[A-Za-z0-9/+=]{40,}/g, '[redacted]');
}

/**
 * The part of {@link redactSecrets} that is safe on Latch's own messages (which quote lock keys
 * and already carry redacted SDK text): access key ids, signatures, tokens, and user:password
 * in URLs.
 */
export function redactCredentials(text: string): string {
  return (
    text
      // Access key ids: AKIA… (long-term), ASIA… (temporary), and the other IAM id prefixes.
      .replace(/\b(?:AKIA|ASIA|AIDA|AROA|AGPA|AIPA|ANPA|ANVA|APKA|ABIA|ACCA)[A-Z0-9]{12,}\b/g, '[redacted]')
      // Signatures, credential scopes and tokens of a signed request (query strings or headers).
      .replace(
        /\b(Signature|Credential|X-Amz-Signature|X-Amz-Credential|X-Amz-Security-Token)(=|:\s*)[^\s,&"']+/gi,
        '$1$2[redacted]',
      )
      // user:password in a URL (an endpoint written with credentials).
      .replace(/\/\/[^/\s:@]+:[^/\s@]+@/g, '//[redacted]@')
  );
}
