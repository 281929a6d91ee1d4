// Where an SDK v3 client sends: to AWS itself, or to another service that speaks its API.

const AWS_HOST = /(^|\.)amazonaws\.com(\.cn)?$|(^|\.)api\.aws$/;

/**
 * The endpoint `client` was configured with, as a URL; undefined when it has none of its own (the
 * SDK then resolves AWS's from the region) or when it names an AWS host.
 */
export async function customEndpoint(client: unknown): Promise<string | undefined> {
  const config = (client as { config?: Record<string, unknown> } | undefined)?.config ?? {};
  // Given to the client, or (AWS_ENDPOINT_URL, a profile's endpoint_url) found by the SDK itself.
  let endpoint = await settingValue(config.endpoint);
  if (endpoint === undefined && config.ignoreConfiguredEndpointUrls !== true) {
    endpoint = await settingValue(config.serviceConfiguredEndpoint).catch(() => undefined);
  }
  if (endpoint === undefined) return undefined;
  const url = urlOf(endpoint);
  if (url === undefined) return 'an endpoint of its own';
  return AWS_HOST.test(url.hostname) ? undefined : url.origin;
}

async function settingValue(setting: unknown): Promise<unknown> {
  return typeof setting === 'function' ? await (setting as () => unknown)() : setting;
}

function urlOf(endpoint: unknown): URL | undefined {
  if (typeof endpoint === 'string') return parse(endpoint);
  if (typeof endpoint !== 'object' || endpoint === null) return undefined;
  const { hostname, protocol, port, url } = endpoint as Record<string, unknown>;
  if (url instanceof URL) return url;
  if (typeof url === 'string') return parse(url);
  if (typeof hostname !== 'string') return undefined;
  const scheme = typeof protocol === 'string' ? protocol.replace(/:?$/, ':') : 'https:';
  return parse(`${scheme}//${hostname}${port === undefined ? '' : `:${String(port)}`}`);
}

function parse(url: string): URL | undefined {
  try {
    return new URL(url);
  } catch {
    return undefined;
  }
}
