/**
 * DNS rebinding protection of the MCP endpoint (MCP spec, Security best practices; the conformance suite's
 * `dns-rebinding-protection`): a request is answered only when it is addressed to this deployment —
 * its Host (X-Forwarded-Host behind a trusted proxy) is PUBLIC_BASE_URL's host name or a loopback name —
 * and, when a browser sent it, its Origin is one of those too. A page on evil.example whose name was made
 * to resolve to this server carries Host: evil.example and is refused, whatever port it came through.
 */
export function createHostCheck(publicBaseUrl: string): (host: string | undefined, origin: string | undefined) => string | null {
  const allowed = new Set(['localhost', '127.0.0.1', '[::1]', new URL(publicBaseUrl).hostname.toLowerCase()]);
  const hostnameOf = (authority: string): string | null => {
    try {
      return new URL(`http://${authority}`).hostname.toLowerCase();
    } catch {
      return null;
    }
  };
  const originHost = (origin: string): string | null => {
    try {
      const url = new URL(origin);
      return url.protocol === 'http:' || url.protocol === 'https:' ? url.hostname.toLowerCase() : null;
    } catch {
      return null;
    }
  };
  return (host, origin) => {
    const name = host ? hostnameOf(host) : null;
    if (!name || !allowed.has(name)) {
      return "the request's Host is not this server's: the MCP endpoint answers requests addressed to PUBLIC_BASE_URL's host or to a loopback name (DNS rebinding protection)";
    }
    if (origin !== undefined) {
      const from = originHost(origin);
      if (!from || !allowed.has(from)) {
        return "the request's Origin is not this server's: the MCP endpoint answers pages served from PUBLIC_BASE_URL's host or a loopback name (DNS rebinding protection)";
      }
    }
    return null;
  };
}
