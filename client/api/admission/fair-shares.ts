// Max-min fair shares of the in-flight limit among tenants: each tenant that wants places
// gets an equal part, a tenant that needs less than its part keeps only what it uses, and
// what it leaves is divided among the others, again equally (water-filling). So an idle
// tenant's part is lent to the busy ones, and the loan ends on the idle tenant's first
// request: from then on its part counts again, and the borrowers are refused new places
// until they are back under theirs (operations already in flight are never interrupted).
//
//   limit 12, demands { a: ∞, b: ∞, c: 2 }  →  c keeps 2, a and b get 5 each
//   limit 12, demands { a: ∞, b: 0 }        →  a gets 12 (b is idle: its part is lent)
//   b's first request: demands { a: ∞, b: ∞ } → 6 each; a, holding 12, gets nothing new
//                                                until it is under 6

/** A tenant's demand: the places it holds when it asks for no more, Infinity when it wants more. */
export type Demands = ReadonlyMap<string, number>;

/** Each tenant's share of `limit` (real numbers: a share below one place still admits one, see InFlight). */
export function maxMinShares(limit: number, demands: Demands): Map<string, number> {
  const shares = new Map<string, number>();
  // Ascending demand: each tenant in turn takes its demand or an equal part of what is left.
  const ordered = [...demands].sort((x, y) => x[1] - y[1]);
  let left = Math.max(0, limit);
  ordered.forEach(([tenant, demand], i) => {
    const part = left / (ordered.length - i);
    const share = Math.min(Math.max(0, demand), part);
    shares.set(tenant, share);
    left -= share;
  });
  return shares;
}
