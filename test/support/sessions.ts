// Session requests signed as QuickBlox SDKs sign them, written here from the
// SDK's rule (not from the service's code), so that the tests check the rule.
import { createHmac, randomBytes } from 'node:crypto';
import type { Tenant } from './seed';

export interface SignedRequest {
  applicationId: string;
  authKey: string;
  timestamp: string;
  nonce: string;
  signature: string;
  user?: { login?: string; email?: string; password?: string };
}

export interface SignOptions {
  /** Unix seconds (default: now). */
  timestamp?: number | string;
  nonce?: string;
  algorithm?: 'sha1' | 'sha256';
  /** Sign with this secret instead of the tenant's. */
  secret?: string;
  applicationId?: string;
  authKey?: string;
}

/** HMAC of `k=v` pairs (nested as user[login]) sorted and joined with `&`, as qbAuth.js signMessage does. */
export function qbSignature(parameters: Record<string, string>, secret: string, algorithm: 'sha1' | 'sha256' = 'sha1'): string {
  const message = Object.keys(parameters)
    .map((key) => `${key}=${parameters[key]}`)
    .sort()
    .join('&');
  return createHmac(algorithm, secret).update(message).digest('hex');
}

/** The GraphQL input (and, through `restBody`, the REST body) of a correctly signed session request. */
export function signedSessionRequest(
  tenant: Pick<Tenant, 'applicationId' | 'authKey' | 'authSecret'>,
  user?: SignedRequest['user'],
  options: SignOptions = {},
): SignedRequest {
  const request: Omit<SignedRequest, 'signature'> = {
    applicationId: options.applicationId ?? String(tenant.applicationId),
    authKey: options.authKey ?? tenant.authKey,
    timestamp: String(options.timestamp ?? Math.floor(Date.now() / 1000)),
    nonce: options.nonce ?? String(randomBytes(4).readUInt32BE(0)),
    ...(user ? { user } : {}),
  };
  const parameters: Record<string, string> = {
    application_id: request.applicationId,
    auth_key: request.authKey,
    nonce: request.nonce,
    timestamp: request.timestamp,
  };
  for (const [field, value] of Object.entries(user ?? {})) if (value !== undefined) parameters[`user[${field}]`] = value;
  return { ...request, signature: qbSignature(parameters, options.secret ?? tenant.authSecret, options.algorithm) };
}

/** The same request as POST /session.json's body, as the SDK form-encodes it (bracketed keys). */
export function restForm(request: SignedRequest): Record<string, string> {
  const form: Record<string, string> = {
    application_id: request.applicationId,
    auth_key: request.authKey,
    timestamp: request.timestamp,
    nonce: request.nonce,
    signature: request.signature,
  };
  for (const [field, value] of Object.entries(request.user ?? {})) if (value !== undefined) form[`user[${field}]`] = value;
  return form;
}
