// Bodies of DAG listing pages, kept while the items they join are the very ones joined before. A
// page is joined from items rendered once per change (routes/dags.ts); joining 100 of them into a
// new 70 KB body, and collecting it after, was about a seventh of a listing's main-thread time
// under load.

/** Pages kept, by query: the few a dashboard or a client polls. */
const KEPT_PAGES = 32;

interface Page {
  items: readonly Buffer[];
  tail: string;
  body: Buffer;
}

export class PageBodies {
  private readonly pages = new Map<string, Page>();

  /**
   * `{"<field>":[items...]<tail>`: the body kept for `key` when it joined the same item buffers
   * and the same tail, else joined now (and kept in its place).
   */
  body(key: string, field: string, items: readonly Buffer[], tail: string): Buffer {
    const kept = this.pages.get(key);
    if (kept && kept.tail === tail && kept.items.length === items.length && kept.items.every((item, index) => item === items[index])) return kept.body;
    const parts: Buffer[] = [Buffer.from(`{${JSON.stringify(field)}:[`)];
    items.forEach((item, index) => {
      if (index > 0) parts.push(COMMA);
      parts.push(item);
    });
    parts.push(Buffer.from(tail));
    const body = Buffer.concat(parts);
    this.pages.delete(key);
    this.pages.set(key, { items, tail, body });
    if (this.pages.size > KEPT_PAGES) this.pages.delete(this.pages.keys().next().value!);
    return body;
  }
}

const COMMA = Buffer.from(',');
