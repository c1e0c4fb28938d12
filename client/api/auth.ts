// Bearer API keys → tenant. Both sides are hashed to a fixed length before
// timingSafeEqual, and every configured key is compared, so neither the length nor the
// position of a match leaks through timing.
import { createHash, timingSafeEqual } from 'node:crypto';
import { DEV_TENANT, type ApiKeyEntry } from './config.js';

const digest = (secret: string) => createHash('sha256').update(secret, 'utf8').digest();

export interface Authenticator {
  readonly devMode: boolean;
  /** The tenant of an Authorization header value, or undefined when it names none. */
  tenantFor(authorization: string | undefined): string | undefined;
}

export function createAuthenticator(apiKeys: ApiKeyEntry[] | null): Authenticator {
  if (apiKeys === null) return { devMode: true, tenantFor: () => DEV_TENANT };
  const keys = apiKeys.map((k) => ({ hash: digest(k.secret), tenant: k.tenant }));
  return {
    devMode: false,
    tenantFor(authorization) {
      const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization ?? '');
      if (!match) return undefined;
      const presented = digest(match[1]!);
      let tenant: string | undefined;
      for (const key of keys) {
        if (timingSafeEqual(presented, key.hash) && tenant === undefined) tenant = key.tenant;
      }
      return tenant;
    },
  };
}
