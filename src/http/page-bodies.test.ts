import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PageBodies } from './page-bodies.ts';

const item = (value: unknown) => Buffer.from(JSON.stringify(value));
const tail = (total: number) => `],"pagination":${JSON.stringify({ totalRecords: total })}}`;

describe('page bodies', () => {
  it('join the items and the tail into one document', () => {
    const body = new PageBodies().body('q', 'dags', [item({ a: 1 }), item({ b: 2 })], tail(2));
    assert.deepEqual(JSON.parse(body.toString()), { dags: [{ a: 1 }, { b: 2 }], pagination: { totalRecords: 2 } });
    assert.deepEqual(JSON.parse(new PageBodies().body('q', 'dags', [], tail(0)).toString()), { dags: [], pagination: { totalRecords: 0 } });
  });

  it('give the body kept while the very same items and tail are joined, and a new one when either changes', () => {
    const pages = new PageBodies();
    const items = [item({ a: 1 }), item({ b: 2 })];
    const first = pages.body('q', 'dags', items, tail(2));
    assert.equal(pages.body('q', 'dags', [...items], tail(2)), first);
    // An item rendered again (its DAG's latest run changed) is another buffer, even with equal bytes.
    const changed = pages.body('q', 'dags', [items[0], item({ b: 3 })], tail(2));
    assert.notEqual(changed, first);
    assert.deepEqual(JSON.parse(changed.toString()).dags, [{ a: 1 }, { b: 3 }]);
    const moreRecords = pages.body('q', 'dags', [items[0], item({ b: 3 })], tail(3));
    assert.equal(JSON.parse(moreRecords.toString()).pagination.totalRecords, 3);
    assert.equal(pages.body('q', 'dags', items.slice(0, 1), tail(3)).toString(), '{"dags":[{"a":1}],"pagination":{"totalRecords":3}}');
  });

  it('keep each query apart, and the 32 queries last asked', () => {
    const pages = new PageBodies();
    const items = [item({ a: 1 })];
    const kept = Array.from({ length: 33 }, (_, index) => pages.body(`q${index}`, 'dags', items, tail(index)));
    assert.equal(pages.body('q32', 'dags', items, tail(32)), kept[32]);
    assert.equal(pages.body('q1', 'dags', items, tail(1)), kept[1]);
    // The first query asked was dropped for the 33rd: its body is joined again.
    assert.notEqual(pages.body('q0', 'dags', items, tail(0)), kept[0]);
  });
});
