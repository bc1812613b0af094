import { isMasked, MASK_PREFIX, maskSecret } from './secrets';

/**
 * Secrets inside a target URL (a custom tool's endpoint, an outgoing webhook's url): the values of query
 * parameters whose name contains key, token, secret, password, sig, auth, pass, pwd, jwt, session, code
 * or signature (any case), like `?api_key=…` or `&X-Amz-Signature=…` (docs/api.md § Secrets). They are masked on read like any secret; a URL sent
 * back with its masks unchanged keeps the stored values; an export leaves them out.
 *
 * The URL is edited as text, parameter by parameter, so what is shown is what was written, apart from
 * the masked values (a URL parser would re-encode the rest).
 */
export const SECRET_QUERY_PARAMETER = /key|token|secret|password|sig|auth|pass|pwd|jwt|session|code|signature/i;

interface Parameter {
  /** The parameter as written (`api_key=abc`). */
  raw: string;
  name: string;
  /** Decoded; null when the parameter has no `=`. */
  value: string | null;
}

const decode = (text: string) => {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
};

/** The URL cut into what comes before its query, its parameters, and its fragment (with its `#`). */
function split(url: string): { base: string; parameters: Parameter[] | null; fragment: string } {
  const hashAt = url.indexOf('#');
  const fragment = hashAt === -1 ? '' : url.slice(hashAt);
  const rest = hashAt === -1 ? url : url.slice(0, hashAt);
  const queryAt = rest.indexOf('?');
  if (queryAt === -1) return { base: rest, parameters: null, fragment };
  const parameters = rest
    .slice(queryAt + 1)
    .split('&')
    .map((raw) => {
      const eq = raw.indexOf('=');
      return eq === -1 ? { raw, name: decode(raw), value: null } : { raw, name: decode(raw.slice(0, eq)), value: decode(raw.slice(eq + 1)) };
    });
  return { base: rest.slice(0, queryAt), parameters, fragment };
}

function join(base: string, parameters: Parameter[] | null, fragment: string): string {
  return parameters === null ? base + fragment : `${base}?${parameters.map((p) => p.raw).join('&')}${fragment}`;
}

const isSecret = (p: Parameter): p is Parameter & { value: string } => p.value !== null && p.value !== '' && SECRET_QUERY_PARAMETER.test(p.name);

/** Rewrites the value of every secret parameter (those with a value). */
function mapSecretValues(url: string, change: (value: string) => string): string {
  const { base, parameters, fragment } = split(url);
  if (parameters === null) return url;
  const changed = parameters.map((p) => {
    if (!isSecret(p)) return p;
    const eq = p.raw.indexOf('=');
    return { ...p, raw: `${p.raw.slice(0, eq + 1)}${change(p.value)}` };
  });
  return join(base, changed, fragment);
}

/**
 * The URL's credentials (`user:password@`), where a URL stored before they were refused has them: the
 * whole userinfo is a secret (a token is often the user name). `at` is where it starts.
 */
function userinfo(url: string): { at: number; text: string } | null {
  const start = url.indexOf('://');
  if (start === -1) return null;
  const at = start + 3;
  const end = url.slice(at).search(/[/?#]/);
  const authority = end === -1 ? url.slice(at) : url.slice(at, at + end);
  const sign = authority.lastIndexOf('@');
  return sign === -1 ? null : { at, text: authority.slice(0, sign) };
}

/** The URL with its userinfo changed (or, with `null`, left out together with its `@`). */
function withUserinfo(url: string, change: (text: string) => string | null): string {
  const found = userinfo(url);
  if (!found) return url;
  const next = change(decode(found.text));
  return url.slice(0, found.at) + (next === null ? '' : `${next}@`) + url.slice(found.at + found.text.length + 1);
}

/** The names of the URL's secret parameters that hold a value, in order. */
export function secretQueryNames(url: string): string[] {
  return (split(url).parameters ?? []).filter(isSecret).map((p) => p.name);
}

/** The URL as a read shows it: each secret parameter's value, and any userinfo, as `"••••" + last 4`. */
export function maskUrlSecrets(url: string): string {
  return withUserinfo(mapSecretValues(url, maskSecret), maskSecret);
}

/**
 * A URL (or a request target, `/path?query`) as a span exports it: secret query values masked as reads
 * mask them, userinfo dropped (docs/operations.md § Tracing).
 */
export function scrubbedUrl(url: string): string {
  return withUserinfo(mapSecretValues(url, maskSecret), () => null);
}

/** What follows the origin of a URL shown as its origin only. */
export const HIDDEN_PATH = '/…';

/**
 * The URL as a member without `canExport` sees it: its origin followed by `/…` — a path can be a
 * secret (a Slack hook URL's), and so can the query (docs/api.md § Secrets). Userinfo is dropped.
 */
export function originOnly(url: string): string {
  try {
    const { origin } = new URL(url);
    return origin === 'null' ? HIDDEN_PATH : `${origin}${HIDDEN_PATH}`;
  } catch {
    return HIDDEN_PATH;
  }
}

/** The URL as an export holds it: each secret parameter present with an empty value (`?api_key=`), no userinfo. */
export function withoutUrlSecrets(url: string): string {
  return withUserinfo(mapSecretValues(url, () => ''), () => null);
}

/** Whether the URL holds a masked value anywhere in its query. */
export function hasMaskedParameter(url: string): boolean {
  return (split(url).parameters ?? []).some((p) => p.value !== null && isMasked(p.value));
}

/** The URL with every parameter decoded: two spellings of one URL compare equal. */
function normalized(url: string): string {
  const { base, parameters, fragment } = split(url);
  return JSON.stringify([base, parameters?.map((p) => [p.name, p.value]) ?? null, fragment]);
}

/**
 * The URL to store for `sent`. A URL with no masked value is new (stored as sent). One with masks stands
 * for the current URL only when it is exactly the current URL as a read shows it; anything else (a mask
 * for a value that is not there, or masks on a URL that changed elsewhere) returns null: a stored secret
 * never moves to another URL.
 */
export function restoreUrlSecrets(sent: string, current: string | null): string | null {
  // The URL as a member without canExport reads it stands for the current one (an edit of something else).
  if (current !== null && sent.endsWith(HIDDEN_PATH) && sent === originOnly(current)) return current;
  if (!hasMaskedParameter(sent)) return sent;
  if (current === null) return null;
  return normalized(sent) === normalized(maskUrlSecrets(current)) ? current : null;
}

/** The reason given when restoreUrlSecrets returns null. */
export const URL_MASK_MISMATCH =
  `a masked query value (${MASK_PREFIX}…) can only be sent back with the URL exactly as read; a changed URL needs its secret values in full`;
