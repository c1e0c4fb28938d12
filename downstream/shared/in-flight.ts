// Keys being processed by this process right now. SQLite serialises the transactions, but
// a request may wait (injected delay, a slow client) before its transaction starts; a
// second request for the same key meanwhile must not queue behind it and race to replay.
// Across processes the write lock does the same job (SQLITE_BUSY → 409).
export class InFlightGuard {
  private readonly keys = new Set<string>();

  /** Marks `key` in flight; false when it already is. */
  tryAcquire(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    return true;
  }

  release(key: string): void {
    this.keys.delete(key);
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  get size(): number {
    return this.keys.size;
  }
}
