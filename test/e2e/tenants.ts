// The two tenants the end-to-end suites speak as, each with an API key of its own, new each
// run: the RETRYSAFE_API_KEYS of an API that knows both, and the header each sends.
import { randomUUID } from 'node:crypto';

const ACME_KEY = `sk_acme_${randomUUID()}`;
const UMBRELLA_KEY = `sk_umbrella_${randomUUID()}`;

export const API_KEYS = `${ACME_KEY}=acme,${UMBRELLA_KEY}=umbrella`;
export const acme = { authorization: `Bearer ${ACME_KEY}` };
export const umbrella = { authorization: `Bearer ${UMBRELLA_KEY}` };
